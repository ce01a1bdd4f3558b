/**
 * The shape of a JSON text, measured before anything is built from it. JSON.parse builds the
 * whole tree first and only then can anything look at it: 16 MiB of `[[[[...` is 8 million
 * arrays (+812 MiB, the heap's end under a 512 MiB limit), 16 MiB of `{},{},...` 5 million
 * objects (+450 MiB). This pass reads the text once, allocating nothing per value, and stops at
 * the first bound passed: nesting depth, the length of any one array, and the number of values
 * (keys included) in the whole text. Only a text within all three is handed to JSON.parse.
 *
 * Written here rather than taken from a library: npm's streaming JSON parsers build each value as
 * they go and bound neither depth nor width by themselves; `@streamparser/json` took 504 ms for a
 * list of 100,000 addresses that JSON.parse reads in 14 ms (and 1.8 s for 2 million empty
 * objects), while this pass takes 17-70 ms for the list and stops a 16 MiB bomb at its first
 * bound in 2-130 ms. It is a bracket and string-state counter, not a parser: whether the text is
 * valid JSON is still JSON.parse's to say.
 */

export interface ShapeLimits {
  /** Containers inside containers: `[[1]]` is 2. */
  maxDepth: number;
  /** Elements of any one array. */
  maxArrayItems: number;
  /** Values and keys in the whole text. */
  maxValues: number;
}

export type ShapeProblem =
  | { kind: 'depth'; depth: number }
  /**
   * `key`: the top-level object's key that holds the array, when it is held there; `strings`:
   * whether every element read was a string (a list of addresses rather than a bomb).
   */
  | { kind: 'array'; key: string | undefined; strings: boolean }
  | { kind: 'values' };

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Keys longer than this are not kept for naming an array (it only names the top-level key). */
const KEY_NAME_LIMIT = 64;

/**
 * Undefined when `text` stays within `limits`, else the first bound it passes. Malformed text
 * (unbalanced brackets, an open string) is left to JSON.parse, which refuses it.
 */
export function scanJsonShape(text: string, limits: ShapeLimits): ShapeProblem | undefined {
  // Per open container: whether it is an array, and its commas so far (elements - 1).
  const isArray: boolean[] = [];
  const commas: number[] = [];
  const onlyStrings: boolean[] = [];
  // The top-level object's key being read, and the one an array directly under it belongs to.
  let lastTopKey: string | undefined;
  let topArrayKey: string | undefined;
  let values = 1;
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const start = i + 1;
      // Skip the string: an escaped character, whatever it is, is one code unit after `\`.
      for (i = start; i < length; i++) {
        const inner = text.charCodeAt(i);
        if (inner === BACKSLASH) i++;
        else if (inner === QUOTE) break;
      }
      if (depth === 1 && isArray[0] === false && i - start <= KEY_NAME_LIMIT) lastTopKey = text.slice(start, i);
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (depth >= limits.maxDepth) return { kind: 'depth', depth: depth + 1 };
      if (depth === 1 && isArray[0] === false) topArrayKey = code === OPEN_ARRAY ? lastTopKey : undefined;
      if (depth > 0) onlyStrings[depth - 1] = false;
      isArray[depth] = code === OPEN_ARRAY;
      commas[depth] = 0;
      onlyStrings[depth] = true;
      depth++;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      if (depth > 0) depth--;
    } else if (code === COMMA || code === COLON) {
      if (++values > limits.maxValues) return { kind: 'values' };
      const top = depth - 1;
      if (code === COMMA && top >= 0 && isArray[top] === true) {
        const count = (commas[top] ?? 0) + 1;
        commas[top] = count;
        // `count` commas: count + 1 elements.
        if (count >= limits.maxArrayItems)
          return { kind: 'array', key: top === 1 ? topArrayKey : undefined, strings: onlyStrings[top] === true };
      }
    } else if (code > 0x20 && depth > 0) {
      // A number or literal (whitespace is at most 0x20; every structural character is handled above).
      onlyStrings[depth - 1] = false;
    }
  }
  return undefined;
}
