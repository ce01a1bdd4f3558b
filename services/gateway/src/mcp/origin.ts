/**
 * The Origin check of the tool servers (the MCP specification's defence against DNS rebinding:
 * a page elsewhere that reaches the service through a name it controls). A request without
 * `Origin` is not from a browser page and passes; one with it passes when the origin is the
 * service's own (its host and port are the request's `Host`: a page the service itself served)
 * or listed in MCP_ALLOWED_ORIGINS. Anything else, `null` and unparsable values included, is
 * refused before the key is checked, before anything runs and before anything is counted.
 * Pure: the route hook (routes.ts) answers the refusal.
 */

/** The comparable form of an origin (`scheme://host[:port]`, default ports dropped), or undefined. */
export function normaliseOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

export class OriginPolicy {
  private readonly allowed: ReadonlySet<string>;

  constructor(allowedOrigins: readonly string[]) {
    this.allowed = new Set(allowedOrigins.map((origin) => normaliseOrigin(origin)).filter((origin) => origin !== undefined));
  }

  /** Whether a request with these `Origin` and `Host` headers may reach the tool servers. */
  allows(origin: string | undefined, host: string | undefined): boolean {
    if (origin === undefined) return true;
    const normal = normaliseOrigin(origin);
    if (normal === undefined) return false;
    if (this.allowed.has(normal)) return true;
    return host !== undefined && new URL(normal).host === hostOf(host);
  }
}

/** The Host header as URL.host writes it (lower case, default ports dropped). */
function hostOf(host: string): string | undefined {
  try {
    const url = new URL(`http://${host}`);
    // Either scheme's default port: the page's scheme is unknown behind a TLS proxy.
    return url.port === '443' ? url.hostname : url.host;
  } catch {
    return undefined;
  }
}
