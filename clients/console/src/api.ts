/**
 * The public API, called with the key the user entered. A refusal becomes an ApiFailure carrying
 * the API's own `message`, which the pages show as it is (as text).
 */
import { isRecord } from './is-record.ts';
import { currentKey } from './session.ts';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export { isRecord };

async function failure(response: Response): Promise<ApiFailure> {
  const body: unknown = await response.json().catch(() => null);
  if (isRecord(body) && typeof body.message === 'string')
    return new ApiFailure(response.status, typeof body.error === 'string' ? body.error : 'error', body.message);
  return new ApiFailure(response.status, 'error', `The service answered ${response.status} ${response.statusText}.`);
}

/** A call with `Authorization: Bearer <key>` (the given key, else the signed-in one); throws the API's error. */
export async function call(path: string, init: RequestInit = {}, key = currentKey()): Promise<Response> {
  const headers = new Headers(init.headers);
  if (key !== null) headers.set('Authorization', `Bearer ${key}`);
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers, cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, 'network', 'The service cannot be reached: check your connection and try again.');
  }
  if (!response.ok) throw await failure(response);
  return response;
}

/** A JSON answer checked by `read` (the pages trust nothing they have not checked). */
export async function callJson<T>(path: string, read: (value: unknown) => T, init: RequestInit = {}): Promise<T> {
  const response = await call(path, init);
  return read(await response.json());
}

/** The message to show for anything thrown. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
