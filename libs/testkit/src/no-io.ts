/**
 * The unit tier's guard (`npm run test:unit`, vitest.unit.config.ts), loaded before each of its
 * test files: opening a socket (TCP, UDP, TLS, HTTP, fetch, Redis), listening on a port, resolving
 * a name or starting a process throws, naming what was tried. A file in the tier is then proven to
 * need none of them, and so to be fast and deterministic; one that starts to need one fails here
 * and belongs in `npm test` only. Written by hand: it patches the few Node entry points every
 * client and server library goes through, which no npm library does for a test run.
 */
import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const GUARDED = Symbol.for('svc.testkit.no-io');

function refuse(what: string): never {
  throw new Error(`the unit tier allows no ${what}: move this test out of vitest.unit.config.ts's include (npm test runs it)`);
}

/** Replaces `target[name]` with a function that refuses `what`. */
function forbid(target: object, name: string, what: string): void {
  Object.defineProperty(target, name, { configurable: true, writable: true, value: () => refuse(what) });
}

const host = globalThis as { [GUARDED]?: true };
if (host[GUARDED] !== true) {
  host[GUARDED] = true;
  forbid(net.Socket.prototype, 'connect', 'network connection');
  forbid(net.Server.prototype, 'listen', 'listening socket');
  forbid(dgram.Socket.prototype, 'bind', 'UDP socket');
  forbid(dgram.Socket.prototype, 'send', 'UDP socket');
  forbid(dns, 'lookup', 'name resolution');
  forbid(dns.promises, 'lookup', 'name resolution');
  for (const name of ['spawn', 'fork', 'exec', 'execFile', 'spawnSync', 'execSync', 'execFileSync'])
    forbid(childProcess, name, 'child process');
  // `import { spawn } from 'node:child_process'` reads the ESM facade: bring it in line with the patches.
  syncBuiltinESMExports();
}
