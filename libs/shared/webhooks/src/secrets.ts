/**
 * Webhook secrets: one per API key, `whsec_` + 40 random base62 characters, kept in Redis at
 * `<REDIS_PREFIX>:webhook-secret:{<keyId>}` (tagged by the key id, as all of a key's data) and shown once by the key tool when it is made. Unlike
 * an API key the secret itself must be stored (it signs), so it lives under its own key that
 * only the key tool writes and the callback consumer reads. Embedded mode signs every key's
 * events with one secret (LIST_WEBHOOK_SECRET).
 */
import { randomInt } from 'node:crypto';
import type { Redis } from '@svc/jobs/redis';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const WEBHOOK_SECRET_PATTERN = /^whsec_[A-Za-z0-9]{40}$/;

export function generateWebhookSecret(): string {
  let body = '';
  for (let i = 0; i < 40; i += 1) body += BASE62[randomInt(62)];
  return `whsec_${body}`;
}

/** The secret that signs a key's events now (read at each attempt, so a rotation applies at once). */
export type SecretSource = (keyId: string) => Promise<string | undefined>;

/** Embedded mode: one secret for every key. */
export const sharedSecret =
  (secret: string): SecretSource =>
  () =>
    Promise.resolve(secret);

export const webhookSecretKey = (redisPrefix: string, keyId: string): string => `${redisPrefix}:webhook-secret:{${keyId}}`;

export class WebhookSecretStore {
  constructor(
    private readonly redis: Redis,
    private readonly redisPrefix: string,
  ) {}

  async get(keyId: string): Promise<string | undefined> {
    return (await this.redis.get(webhookSecretKey(this.redisPrefix, keyId))) ?? undefined;
  }

  /** Makes a new secret for the key, replacing any previous one, and returns it (to show once). */
  async rotate(keyId: string): Promise<string> {
    const secret = generateWebhookSecret();
    await this.redis.set(webhookSecretKey(this.redisPrefix, keyId), secret);
    return secret;
  }

  readonly source: SecretSource = (keyId) => this.get(keyId);
}
