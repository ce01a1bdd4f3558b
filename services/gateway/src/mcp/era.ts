/**
 * Which era a tool-server request speaks. A request that claims the 2026 era (the
 * `io.modelcontextprotocol/protocolVersion` key in a message's `_meta`, or an
 * `MCP-Protocol-Version` header that names no 2025-era version) goes to the SDK's 2026 handler,
 * which answers it or refuses it as the specification says (JSON-RPC errors: an unsupported
 * version is -32022 naming the versions served). Everything else, `initialize` and a 2025
 * client's later requests, is the 2025 era's; so is a body that is not JSON-RPC at all, claiming
 * neither, refused in the contract's error format as before.
 */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

function claimsInMeta(message: unknown): boolean {
  if (typeof message !== 'object' || message === null || !('params' in message)) return false;
  const { params } = message;
  if (typeof params !== 'object' || params === null || !('_meta' in params)) return false;
  const meta = params._meta;
  return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}

/** `legacyVersions`: the 2025-era versions (the SDK's SUPPORTED_PROTOCOL_VERSIONS). */
export function claimsModernEra(headerVersion: string | undefined, body: unknown, legacyVersions: readonly string[]): boolean {
  if (headerVersion !== undefined && headerVersion !== '' && !legacyVersions.includes(headerVersion)) return true;
  return (Array.isArray(body) ? body : [body]).some(claimsInMeta);
}
