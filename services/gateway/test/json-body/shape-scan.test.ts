import { describe, expect, it } from 'vitest';
import { scanJsonShape, type ShapeLimits } from '../../src/json-body/shape-scan.ts';

const LIMITS: ShapeLimits = { maxDepth: 3, maxArrayItems: 3, maxValues: 10 };
const scan = (text: string) => scanJsonShape(text, LIMITS);

describe('scanJsonShape', () => {
  it('passes texts within every bound', () => {
    for (const text of ['1', '"x"', '[]', '{}', '[[[1]]]', '{"a":[1,2,3]}', '[1,2,3]', '"[[[[[[", "]]]]"', '{"a":"\\"[[[["}'])
      expect(scan(text), text).toBeUndefined();
  });

  it('refuses nesting past maxDepth, brackets inside strings not counted', () => {
    expect(scan('[[[[1]]]]')).toEqual({ kind: 'depth', depth: 4 });
    expect(scan('{"a":{"b":{"c":{}}}}')).toEqual({ kind: 'depth', depth: 4 });
    expect(scan('["\\\\",[[[1]]]]')).toEqual({ kind: 'depth', depth: 4 });
    // Closed containers free their level: siblings do not add up.
    expect(scan('[[[1]],[[2]],[[3]]]')).toBeUndefined();
  });

  it('refuses an array longer than maxArrayItems and names its top-level key and whether it held only strings', () => {
    expect(scan('{"emails":["a","b","c","d"]}')).toEqual({ kind: 'array', key: 'emails', strings: true });
    expect(scan('{"emails":[{},{},{},{}]}')).toEqual({ kind: 'array', key: 'emails', strings: false });
    expect(scan('{"emails":[1,2,3,4]}')).toEqual({ kind: 'array', key: 'emails', strings: false });
    expect(scan('[1,2,3,4]')).toEqual({ kind: 'array', key: undefined, strings: false });
    expect(scan('{"a":[[1,2,3,4]]}')).toEqual({ kind: 'array', key: undefined, strings: false });
    // Commas inside strings are no elements.
    expect(scan('{"emails":["a,b,c,d,e"]}')).toBeUndefined();
  });

  it('refuses more values than maxValues in the whole text', () => {
    expect(scanJsonShape('[[1,2],[3,4],[5,6],[7,8],[9,10],[11,12]]', { ...LIMITS, maxArrayItems: 100 })).toEqual({ kind: 'values' });
    expect(scan('{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}')).toEqual({ kind: 'values' });
  });

  it('reads a 16 MiB bomb in bounded time, stopping at the first bound', () => {
    const bomb = '['.repeat(8 * 1024 * 1024) + ']'.repeat(8 * 1024 * 1024);
    const started = performance.now();
    expect(scanJsonShape(bomb, { maxDepth: 8, maxArrayItems: 100_000, maxValues: 201_000 })).toEqual({ kind: 'depth', depth: 9 });
    const wide = `[${'{},'.repeat(5_000_000)}{}]`;
    expect(scanJsonShape(wide, { maxDepth: 8, maxArrayItems: 100_000, maxValues: 201_000 })).toEqual({
      kind: 'array',
      key: undefined,
      strings: false,
    });
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
