/** A self-signed certificate for the rig's STARTTLS, made with node:crypto alone (no network, no openssl). */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

let certificate: { key: string; cert: string } | undefined;

/** One self-signed certificate per process, made with node:crypto alone (no network, no openssl). */
export function rigCertificate(): { key: string; cert: string } {
  certificate ??= selfSignedCertificate('mx.rig.test');
  return certificate;
}

function der(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

function utcTime(date: Date): Buffer {
  return der(0x17, Buffer.from(`${date.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`));
}

/** A minimal X.509 v3 certificate (RFC 5280), ECDSA P-256 / SHA-256, no extensions. */
export function selfSignedCertificate(commonName: string): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const seq = (...parts: Buffer[]): Buffer => der(0x30, ...parts);
  const ecdsaWithSha256 = seq(der(0x06, Buffer.from('2a8648ce3d040302', 'hex')));
  const name = seq(der(0x31, seq(der(0x06, Buffer.from('550403', 'hex')), der(0x0c, Buffer.from(commonName)))));
  const day = 86_400_000;
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, Buffer.concat([Buffer.from([0x01]), randomBytes(8)])),
    ecdsaWithSha256,
    name,
    seq(utcTime(new Date(Date.now() - day)), utcTime(new Date(Date.now() + 365 * day))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = der(0x03, Buffer.from([0]), sign('sha256', tbs, privateKey));
  const body =
    seq(tbs, ecdsaWithSha256, signature)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    cert: `-----BEGIN CERTIFICATE-----\n${body.join('\n')}\n-----END CERTIFICATE-----\n`,
  };
}
