import { describe, expect, it } from 'vitest';
import { digestsEqual, generateApiKey, hashApiKey, keyIdOf, parseAuthorization } from '../../src/auth/api-keys.ts';
import { MemoryKeyStore } from '../../src/stores/key-store.ts';

describe('API keys', () => {
  it('are sk_ and 32 base62 characters, different each time', () => {
    const keys = new Set(Array.from({ length: 50 }, generateApiKey));
    expect(keys.size).toBe(50);
    for (const key of keys) expect(key).toMatch(/^sk_[0-9A-Za-z]{32}$/);
  });

  it('are stored as a SHA-256 digest whose first 16 hex digits are the public id', () => {
    const digest = hashApiKey('sk_example');
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digest).not.toContain('sk_example');
    expect(keyIdOf(digest)).toBe(digest.slice(0, 16));
  });

  it('compares digests exactly, of any length', () => {
    const digest = hashApiKey('sk_a');
    expect(digestsEqual(digest, hashApiKey('sk_a'))).toBe(true);
    expect(digestsEqual(digest, hashApiKey('sk_b'))).toBe(false);
    expect(digestsEqual(digest, digest.slice(0, 63))).toBe(false);
  });
});

describe('parseAuthorization', () => {
  it.each([
    [undefined, { kind: 'missing' }],
    ['', { kind: 'missing' }],
    ['Bearer sk_abc', { kind: 'token', token: 'sk_abc' }],
    ['bearer   sk_abc  ', { kind: 'token', token: 'sk_abc' }],
    ['BEARER a.b-c_d~e+f/g==', { kind: 'token', token: 'a.b-c_d~e+f/g==' }],
    ['Basic dXNlcjpwYXNz', { kind: 'malformed' }],
    ['Bearer', { kind: 'malformed' }],
    ['Bearer sk_a sk_b', { kind: 'malformed' }],
    ['Bearer sk_é', { kind: 'malformed' }],
    [`Bearer ${'a'.repeat(257)}`, { kind: 'malformed' }],
  ])('%j is %j', (header, expected) => {
    expect(parseAuthorization(header)).toEqual(expected);
  });
});

describe('MemoryKeyStore', () => {
  it('authenticates a created key, by no other token, and never keeps the key itself', async () => {
    const store = new MemoryKeyStore();
    const key = generateApiKey();
    const created = await store.create('ci', key, { 'qr.generate': 5 });
    expect(created).toMatchObject({ id: keyIdOf(hashApiKey(key)), name: 'ci', revoked: false, freeAllowance: { 'qr.generate': 5 } });
    expect(await store.authenticate(key)).toBe(created);
    expect(await store.authenticate(generateApiKey())).toBeNull();
    expect(JSON.stringify(await store.list())).not.toContain(key);
  });

  it('revokes and sets allowances by id or by name, counting the keys it changed', async () => {
    const store = new MemoryKeyStore();
    const first = await store.create('team', generateApiKey());
    await store.create('team', generateApiKey());
    expect(await store.setAllowance(first.id, 'email-verify.single', 7)).toBe(1);
    expect(first.freeAllowance).toEqual({ 'email-verify.single': 7 });
    expect(await store.setAllowance(first.id, 'email-verify.single', null)).toBe(1);
    expect(first.freeAllowance).toEqual({});
    expect(await store.revoke('team')).toBe(2);
    expect((await store.list()).every((record) => record.revoked)).toBe(true);
    expect(await store.revoke('nobody')).toBe(0);
  });
});
