/**
 * Checks a real HTTP response against the gateway's own OpenAPI document: the status is one the
 * operation documents, the content type is one of that response's media types, the body conforms
 * to its schema (JSON Schema 2020-12, as OpenAPI 3.1 says, with ajv), and every header of the
 * document's vocabulary that the response carries is documented for it and matches its schema.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

interface Media {
  schema: unknown;
}
interface ResponseDoc {
  headers?: Record<string, { $ref: string }>;
  content?: Record<string, Media>;
}
interface HeaderDoc {
  schema: { type?: string };
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, ResponseDoc> }>>;
  components: { schemas: Record<string, unknown>; headers: Record<string, HeaderDoc> };
}

export interface ObservedResponse {
  status: number;
  headers: Headers;
  text: string;
}

const pointer = (...segments: string[]): string =>
  `#/${segments.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;

export class OpenApiResponseValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Responses checked so far, by `METHOD path status`. */
  readonly checked: string[] = [];

  constructor(private readonly document: OpenApiDocument) {
    // The whole document is one schema resource, so `#/components/schemas/...` resolves inside it.
    this.ajv.addSchema({ ...document, $id: 'openapi' });
  }

  private validator(ref: string): ValidateFunction {
    let validate = this.compiled.get(ref);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `openapi${ref}` });
      this.compiled.set(ref, validate);
    }
    return validate;
  }

  private conforms(ref: string, value: unknown): string[] {
    const validate = this.validator(ref);
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`);
  }

  /** The problems found (empty when the response conforms); `method` and `path` name the documented operation. */
  problems(method: string, path: string, response: ObservedResponse): string[] {
    const operation = this.document.paths[path]?.[method];
    if (operation === undefined) return [`${method.toUpperCase()} ${path} is not documented`];
    const status = String(response.status);
    const documented = operation.responses[status];
    if (documented === undefined) return [`${operation.operationId} does not document status ${status}`];
    this.checked.push(`${method.toUpperCase()} ${path} ${status}`);
    const problems: string[] = [];

    const type = response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
    const media = documented.content?.[type];
    if (media === undefined) {
      problems.push(`${status}: content type ${type} is not one of ${Object.keys(documented.content ?? {}).join(', ')}`);
    } else {
      const body: unknown = type === 'application/json' ? JSON.parse(response.text) : response.text;
      const where = pointer('paths', path, method, 'responses', status, 'content', type, 'schema');
      problems.push(...this.conforms(where, body).map((problem) => `${status} body ${problem}`));
    }

    for (const name of Object.keys(this.document.components.headers)) {
      const value = response.headers.get(name);
      if (value === null) continue;
      if (documented.headers?.[name] === undefined) {
        problems.push(`${status}: header ${name} is sent but not documented`);
        continue;
      }
      const isInteger = this.document.components.headers[name]?.schema.type === 'integer';
      const typed = isInteger && /^-?\d+$/.test(value) ? Number(value) : value;
      const where = pointer('components', 'headers', name, 'schema');
      problems.push(...this.conforms(where, typed).map((problem) => `${status} header ${name}=${value}: ${problem}`));
    }
    return problems;
  }
}
