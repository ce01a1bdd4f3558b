/**
 * Whether a documented example says what a real answer says: the same keys at every level, `null`
 * exactly where the answer has `null` (an unverified check is `null`, not `"unknown"`, `[]` or
 * `false`), the same JSON types, the same values for the codes a reader branches on, and arrays
 * no longer than the answer's (an example may show fewer entries). A string with `…` stands for
 * the real one with its middle left out. Error messages compare with numbers and ids blanked, since
 * those differ from call to call.
 */
const CODE_FIELDS = new Set(['verdict', 'reason', 'smtp', 'status', 'ecc', 'error', 'param', 'path', 'type', 'mimeType']);
const ELLIPSIS = '…';

const kind = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Digits and UUIDs blanked: what stays is the sentence a reader sees. */
export const normaliseMessage = (message: string): string =>
  message.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>').replace(/\d+/g, '<n>');

function stringProblem(example: string, real: string, where: string, field: string | undefined): string | undefined {
  const cut = example.indexOf(ELLIPSIS);
  if (cut >= 0) {
    const [head, tail] = [example.slice(0, cut), example.slice(cut + ELLIPSIS.length)];
    const fits = real.startsWith(head) && real.endsWith(tail) && real.length >= head.length + tail.length;
    return fits ? undefined : `${where}: ${JSON.stringify(example)} is not a shortening of ${JSON.stringify(real.slice(0, 200))}`;
  }
  if (field === 'message') {
    return normaliseMessage(example) === normaliseMessage(real)
      ? undefined
      : `${where}: message ${JSON.stringify(example)}, answered ${JSON.stringify(real)}`;
  }
  if (field !== undefined && CODE_FIELDS.has(field) && example !== real)
    return `${where}: ${JSON.stringify(example)}, answered ${JSON.stringify(real)}`;
  return undefined;
}

export function shapeProblems(example: unknown, real: unknown, where = '$', field?: string): string[] {
  if (kind(example) !== kind(real))
    return [
      `${where}: example has ${kind(example)} ${JSON.stringify(example)?.slice(0, 80)}, answer has ${kind(real)} ${JSON.stringify(real)?.slice(0, 80)}`,
    ];
  if (typeof example === 'string') {
    const problem = stringProblem(example, real as string, where, field);
    return problem === undefined ? [] : [problem];
  }
  if (Array.isArray(example)) {
    const answer = real as unknown[];
    if (example.length > answer.length) return [`${where}: example has ${example.length} entries, answer ${answer.length}`];
    return example.flatMap((entry, index) => shapeProblems(entry, answer[index], `${where}[${index}]`, field));
  }
  if (kind(example) === 'object') {
    const [shown, answered] = [example as Record<string, unknown>, real as Record<string, unknown>];
    const missing = Object.keys(answered).filter((key) => !(key in shown));
    const extra = Object.keys(shown).filter((key) => !(key in answered));
    const problems = [
      ...(missing.length > 0 ? [`${where}: example lacks ${missing.join(', ')}`] : []),
      ...(extra.length > 0 ? [`${where}: the answer has no ${extra.join(', ')}`] : []),
    ];
    for (const key of Object.keys(shown).filter((name) => name in answered))
      problems.push(...shapeProblems(shown[key], answered[key], `${where}.${key}`, key));
    return problems;
  }
  return [];
}
