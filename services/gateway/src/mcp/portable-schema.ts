/**
 * Portable tool schemas (decisions, "Tool servers"): no JSON-Schema type arrays. zod 4 writes a
 * nullable field as `{"type": ["boolean", "null"]}`, valid JSON Schema that strict validators
 * (the MCP Inspector's `--strict`) and some clients refuse; the same set is written here as
 * `{"anyOf": [{"type": "boolean"}, {"type": "null"}]}`. Done where the schemas are published
 * (the `tools/list` answer), so every schema the servers advertise passes, whoever wrote it.
 */

/** Keywords about the whole value that stay beside the `anyOf`, not inside a branch. */
const SHARED_KEYWORDS = new Set([
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
  'enum',
  'const',
]);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (value: Json): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The schema with every `type` array replaced by an `anyOf` of single types, recursively. */
export function portableSchema(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(portableSchema);
  if (!isObject(schema)) return schema;
  const walked: { [key: string]: Json } = {};
  // Inside `properties`, `$defs` and the like the keys are names: a `type` there is a schema, not an array.
  for (const [key, value] of Object.entries(schema)) walked[key] = portableSchema(value);
  const types = walked.type;
  if (!Array.isArray(types)) return walked;
  const shared: { [key: string]: Json } = {};
  const specific: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(walked)) {
    if (key === 'type') continue;
    if (SHARED_KEYWORDS.has(key)) shared[key] = value;
    else specific[key] = value;
  }
  // Keywords of one type (minLength, items, ...) are ignored by JSON Schema for the others; a
  // `null` branch needs none.
  const branches = types.map((type): Json => (type === 'null' ? { type } : { type, ...specific }));
  return { ...shared, anyOf: branches };
}

/** A JSON-RPC answer whose `tools/list` results carry portable schemas; other answers unchanged. */
export function portableToolLists(body: string): string {
  // Only a tools/list result carries schemas; a tool result (a QR code's 20 kB) is not parsed again.
  if (!body.includes('"inputSchema"')) return body;
  let parsed: Json;
  try {
    parsed = JSON.parse(body) as Json;
  } catch {
    return body;
  }
  let changed = false;
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const result = isObject(message) ? message.result : undefined;
    if (result === undefined || !isObject(result)) continue;
    const tools = result.tools;
    if (!Array.isArray(tools)) continue;
    for (const tool of tools) {
      if (!isObject(tool)) continue;
      for (const key of ['inputSchema', 'outputSchema']) {
        if (tool[key] === undefined) continue;
        tool[key] = portableSchema(tool[key]);
        changed = true;
      }
    }
  }
  return changed ? JSON.stringify(parsed) : body;
}
