/**
 * What an agent's user sees of a QR tool result (issue 20): the product's `qr_generate` called from
 * the MCP Inspector's web UI, in Debian's Chromium, screenshot saved as
 * docs/mcp/qr-tool-inspector.png (docs/api.md, "What a chat client shows", shows it).
 *
 * It needs, outside this repository (the Inspector is no dependency of the product):
 *
 *   mkdir -p /tmp/inspector && cd /tmp/inspector && npm i @modelcontextprotocol/inspector@2.12.0
 *   apt-get install -y chromium     # /usr/bin/chromium, as .ci/run installs it; nothing is downloaded
 *
 * and runs from the repository root, after `npm ci`:
 *
 *   node --import tsx scripts/mcp-screenshot.ts                        # Inspector in /tmp/inspector
 *   MCP_INSPECTOR_DIR=/elsewhere node --import tsx scripts/mcp-screenshot.ts [output.png]
 *
 * Inspector 2.12.0 declares Node 22.19 or later; its web UI ran on this repository's Node 20.
 *
 * It starts the product in embedded mode as `npm start` does (scripts/start.ts, a throwaway key in
 * API_KEYS, a free port) and the Inspector's web UI on free ports, pointed at /api/mcp/qr over
 * Streamable HTTP with the bearer key; connects, calls `qr_generate` from the Tools page, checks
 * that the image the Inspector shows is a PNG that scans back to the data, and screenshots a
 * 1280 x 800 window. Whatever happens (failure, Ctrl-C, SIGTERM), every process it started is
 * stopped and the Inspector's storage directory removed.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { generateApiKey } from '@svc/gateway';
import { asService, childEnv, freePort, scanPng, spawnCommand, spawnNode, waitUntil, type ServiceProcess } from '@svc/testkit';
import type { Browser } from 'playwright-core';
import { launch } from '../test/browser/browser.ts';

const ROOT = join(import.meta.dirname, '..');
const INSPECTOR_DIR = resolve(process.env.MCP_INSPECTOR_DIR ?? '/tmp/inspector');
const LAUNCHER = join(INSPECTOR_DIR, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
const OUTPUT = resolve(process.argv[2] ?? join(ROOT, 'docs', 'mcp', 'qr-tool-inspector.png'));

/** The call shown: a URL and a colour pair that keeps the 3:1 contrast the API asks for. */
const CALL = { data: 'https://example.com/hello', dark: '#1d3557', light: '#f1faee' } as const;

if (!existsSync(LAUNCHER)) {
  console.error(
    `No MCP Inspector under ${INSPECTOR_DIR}. Install it outside the repository:\n` +
      `  mkdir -p ${INSPECTOR_DIR} && cd ${INSPECTOR_DIR} && npm i @modelcontextprotocol/inspector@2.12.0\n` +
      'or point MCP_INSPECTOR_DIR at the folder holding its node_modules.',
  );
  process.exit(2);
}

const started: ServiceProcess[] = [];
let browser: Browser | undefined;
const storage = mkdtempSync(join(tmpdir(), 'mcp-inspector-'));

let stopping: Promise<void> | undefined;
/** Once, whichever comes first: the end of the run or a signal. */
function stopEverything(): Promise<void> {
  stopping ??= (async () => {
    await browser?.close().catch(() => undefined);
    await Promise.all(started.map((service) => service.stop()));
    rmSync(storage, { recursive: true, force: true });
  })();
  return stopping;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void stopEverything().finally(() => process.exit(130)));
}

const track = (child: ChildProcess): ServiceProcess => {
  const service = asService(child);
  started.push(service);
  return service;
};

/** Polls `url` until it answers 200; on a timeout, says what the process wrote. */
async function waitForHttp(url: string, service: ServiceProcess, what: string): Promise<void> {
  try {
    await waitUntil(async () => (await fetch(url).catch(() => undefined))?.ok === true, 60_000, what);
  } catch (error) {
    throw new Error(`${String(error)}\n--- ${what} wrote:\n${service.output()}`);
  }
}

try {
  const key = generateApiKey();
  const productPort = await freePort();
  const product = track(
    spawnNode(join(ROOT, 'scripts', 'start.ts'), {
      cwd: ROOT,
      env: childEnv({ PORT: String(productPort), HOST: '127.0.0.1', API_KEYS: key, LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  await waitForHttp(`http://127.0.0.1:${productPort}/readyz`, product, 'the product (npm start)');

  // The web UI needs a fixed port of its own; its MCP Apps sandbox and app origin listen beside it.
  const [uiPort, sandboxPort, appOriginPort] = [await freePort(), await freePort(), await freePort()];
  const token = randomBytes(32).toString('hex');
  const inspector = track(
    spawnCommand(
      process.execPath,
      [
        LAUNCHER,
        '--web',
        '--transport',
        'http',
        '--server-url',
        `http://127.0.0.1:${productPort}/api/mcp/qr`,
        '--header',
        `Authorization: Bearer ${key}`,
      ],
      {
        cwd: INSPECTOR_DIR,
        env: childEnv({
          CLIENT_PORT: String(uiPort),
          MCP_SANDBOX_PORT: String(sandboxPort),
          MCP_APP_ORIGIN_PORT: String(appOriginPort),
          MCP_INSPECTOR_API_TOKEN: token,
          MCP_AUTO_OPEN_ENABLED: 'false',
          // No keychain on a server: the Inspector keeps its secrets in memory, its state in a folder removed after.
          MCP_INSPECTOR_SECRET_STORE: 'memory',
          MCP_STORAGE_DIR: storage,
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  const inspectorUrl = `http://127.0.0.1:${uiPort}/?MCP_INSPECTOR_API_TOKEN=${token}`;
  await waitForHttp(inspectorUrl, inspector, 'the MCP Inspector web UI');

  // Playwright's own Ctrl-C handler would exit once the browser is closed, before the product and the Inspector are stopped.
  browser = await launch({ handleSIGINT: false });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // The UI asks Google Fonts for its typefaces; this machine is offline, and the screenshot does not need them.
  await page.route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => route.abort(),
  );
  await page.goto(inspectorUrl);
  await page.getByText('Disconnected', { exact: true }).waitFor();
  await page.getByRole('switch').first().click({ force: true });
  await page.getByText('Connected', { exact: true }).waitFor();
  await page.getByText('Tools', { exact: true }).click();
  await page.getByRole('button', { name: /qr_generate/ }).click();
  await page.getByRole('textbox', { name: 'data' }).fill(CALL.data);
  await page.getByRole('textbox', { name: 'dark' }).fill(CALL.dark);
  await page.getByRole('textbox', { name: 'light' }).fill(CALL.light);
  await page.getByRole('button', { name: 'Execute Tool' }).click();

  const image = page.locator('img[src^="data:image/png;base64,"]');
  await image.waitFor();
  const source = (await image.getAttribute('src')) ?? '';
  const scanned = scanPng(Buffer.from(source.slice(source.indexOf(',') + 1), 'base64'));
  if (scanned !== CALL.data) throw new Error(`the image the Inspector shows scans as ${JSON.stringify(scanned)}, not ${CALL.data}`);
  await image.evaluate('(element) => element.decode()');

  mkdirSync(dirname(OUTPUT), { recursive: true });
  await page.screenshot({ path: OUTPUT, animations: 'disabled' });
  console.log(`${OUTPUT}: qr_generate ${JSON.stringify(CALL)} as the MCP Inspector ${INSPECTOR_DIR} shows it`);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await stopEverything();
}
