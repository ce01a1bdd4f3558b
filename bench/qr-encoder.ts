/**
 * `npm run bench:qr-encoder`: the product's QR encoder against node-qrcode's `QRCode.create` (level
 * M) on the same contents, one after the other in rounds, each call on fresh content (a counter
 * appended). Prints microseconds per encode, medians over the rounds, and the speed-up.
 */
import QRCode from 'qrcode';
import { encodeText } from '@svc/qr-worker';
import { printTable } from './processes.ts';

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const CONTENTS: Record<string, string> = {
  'URL, 100 characters': `https://example.com/${'p'.repeat(74)}?n=`,
  'short text': 'Hello, world ',
  'UTF-8 and emoji': 'Grüße aus Köln, façade 🚀✨ '.repeat(3),
  'digits, 400': '7'.repeat(397),
  'upper-case + digits': 'HTTPS://EXAMPLE.COM/ORDER/'.repeat(4),
  'wifi payload': 'WIFI:T:WPA;S:Office 5G;P:correct-horse-battery;H:false;;',
  'bytes, 200 (version 10)': 'a'.repeat(197),
};

type Encoder = (text: string) => unknown;
const encoders: Record<string, Encoder> = {
  ours: (text) => encodeText(text),
  'node-qrcode create': (text) => QRCode.create(text, { errorCorrectionLevel: 'M' }),
};

/** Microseconds per call over about ROUND_MS of calls. */
function measure(encoder: Encoder, content: string): number {
  let calls = 0;
  const started = performance.now();
  let now = started;
  while (now - started < ROUND_MS) {
    for (let i = 0; i < 20; i += 1) encoder(content + String(calls++ % 1000));
    now = performance.now();
  }
  return ((now - started) * 1_000) / calls;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(`QR encoder: ${ROUNDS} rounds of ${ROUND_MS} ms per encoder and content, medians in microseconds per encode`);
const rows = Object.entries(CONTENTS).map(([label, content]) => {
  for (const encoder of Object.values(encoders)) measure(encoder, content); // warm-up
  const times: Record<string, number[]> = { ours: [], 'node-qrcode create': [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, encoder] of Object.entries(encoders)) times[name]!.push(measure(encoder, content));
  }
  const ours = median(times.ours!);
  const theirs = median(times['node-qrcode create']!);
  return {
    content: label,
    version: encodeText(content)?.version ?? 'too long',
    'ours us': Math.round(ours * 10) / 10,
    'node-qrcode us': Math.round(theirs * 10) / 10,
    'speed-up': `${(theirs / ours).toFixed(1)}x`,
  };
});
printTable(rows);
