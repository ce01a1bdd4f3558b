/**
 * The configuration tables of the documentation say what the schema does: the README lists every
 * variable of `envSchema`, one per row, with its real default ("unset..." for a variable without
 * one) and nothing that does not exist; docs/api.md lists a subset, under the same rules. A
 * variable added to the schema and to the table together keeps this test green.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { envSchema } from '@svc/config';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

interface Row {
  names: string[];
  defaultCell: string;
}

/** The rows of the first table under `## <heading>`: variable names (backticked) and the default cell. */
function configurationRows(markdown: string, heading: string): Row[] {
  const start = `\n${markdown}`.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`no "## ${heading}" section`);
  const next = markdown.indexOf('\n## ', start + 1);
  const lines = markdown.slice(start, next === -1 ? undefined : next).split('\n');
  const table = lines.filter((line) => line.startsWith('|')).slice(2);
  return table.map((line) => {
    const [variable = '', defaultCell = ''] = line.split('|').slice(1, -1);
    return { names: [...variable.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!), defaultCell: defaultCell.trim() };
  });
}

/** What the documentation must say of each variable's default: its value, or "unset" when it has none. */
function schemaDefaults(): Map<string, string | undefined> {
  return new Map(
    Object.entries(envSchema.shape).map(([name, field]) => {
      const parsed = field.safeParse(undefined);
      return [name, parsed.success ? written(parsed.data) : undefined];
    }),
  );
}

/** A default as the tables write it: numbers, strings and booleans as they are, lists comma-separated. */
function written(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.map(written).join(',');
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`a default the tables cannot write: ${JSON.stringify(value)}`);
}

/** Problems of a table against the schema; `complete` asks for every variable of the schema. */
function tableProblems(rows: Row[], defaults: Map<string, string | undefined>, complete: boolean): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    const [name] = row.names;
    if (row.names.length !== 1 || name === undefined) {
      problems.push(`one variable per row, found ${row.names.length === 0 ? 'none' : row.names.join(', ')}`);
      continue;
    }
    if (seen.has(name)) problems.push(`${name} is listed twice`);
    seen.add(name);
    if (!defaults.has(name)) {
      problems.push(`${name} is not a variable of the configuration schema`);
      continue;
    }
    const expected = defaults.get(name);
    const documented = row.defaultCell.replaceAll('`', '');
    if (expected === undefined && !/^unset\b/.test(documented)) problems.push(`${name} has no default: write "unset", not "${documented}"`);
    if (expected !== undefined && documented !== expected) problems.push(`${name} defaults to ${expected}, documented as "${documented}"`);
  }
  if (complete) for (const name of defaults.keys()) if (!seen.has(name)) problems.push(`${name} is not documented`);
  return problems;
}

describe('configuration tables', () => {
  it('the README documents every variable of the schema, one per row, with its real default', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const rows = configurationRows(readme, 'Configuration');
    expect(rows.length).toBe(envSchema.keyof().options.length);
    expect(tableProblems(rows, schemaDefaults(), true)).toEqual([]);
  });

  it('docs/api.md documents real variables with their real defaults', async () => {
    const api = await readFile(join(ROOT, 'docs', 'api.md'), 'utf8');
    const rows = configurationRows(api, 'Configuration');
    expect(rows.length).toBeGreaterThan(5);
    expect(tableProblems(rows, schemaDefaults(), false)).toEqual([]);
  });

  it('reads defaults from the schema: numbers, strings, booleans, unset', () => {
    const defaults = schemaDefaults();
    expect(defaults.get('PORT')).toBe('3000');
    expect(defaults.get('REDIS_PREFIX')).toBe('svc');
    expect(defaults.get('VERIFY_ALLOW_PRIVATE_MX')).toBe('false');
    expect(defaults.has('REDIS_URL')).toBe(true);
    expect(defaults.get('REDIS_URL')).toBeUndefined();
  });

  it('finds what a hand-copied table gets wrong', () => {
    const table = [
      '## Configuration',
      '',
      '| variable | default | meaning |',
      '| --- | --- | --- |',
      '| `PORT`, `HOST` | 3000, 0.0.0.0 | where it listens |',
      '| `SHUTDOWN_GRACE_MS` | 25 | seconds |',
      '| `REDIS_URL` | none | mode |',
      '| `NOT_A_VARIABLE` | 1 | nothing |',
      '',
    ].join('\n');
    expect(tableProblems(configurationRows(table, 'Configuration'), schemaDefaults(), true)).toEqual(
      expect.arrayContaining([
        'one variable per row, found PORT, HOST',
        'SHUTDOWN_GRACE_MS defaults to 25000, documented as "25"',
        'REDIS_URL has no default: write "unset", not "none"',
        'NOT_A_VARIABLE is not a variable of the configuration schema',
        'LOG_LEVEL is not documented',
      ]),
    );
  });
});
