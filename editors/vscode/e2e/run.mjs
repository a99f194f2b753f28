// End-to-end test of the packaged extension in a real VS Code (code-server),
// driven headless from Debian's Chromium with playwright-core. The server is
// e2e/fake-fixpoint (the recording fake of the Neovim tests), so this checks
// the extension, not the real server.
//
//   CODE_SERVER=/path/to/code-server PLAYWRIGHT_CORE=/path/to/node_modules/playwright-core \
//     node e2e/run.mjs fixpoint-0.1.0.vsix
//
// Optional: CHROMIUM (default /usr/bin/chromium). Exits 0 when every check passes.
//
// Installing code-server 4.99.4 (the last release on node 20) as root on Debian 12, offline from GitHub:
//   apt-get install libkrb5-dev libsecret-1-dev libxkbfile-dev chromium
//   # @vscode/ripgrep's postinstall downloads from GitHub; seed its cache with Debian's rg:
//   for v in 1.15.9 1.15.10 1.15.11 1.15.13 1.15.14 1.16.0 1.17.0; do d=/tmp/vscode-ripgrep-cache-$v
//     mkdir -p $d && tar czf $d/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz -C /usr/bin rg; done
//   npm_config_yes=true npm_config_unsafe_perm=true npm install --prefix /opt/cs code-server@4.99.4 playwright-core@1.49.1
//   (npm_config_yes: node-pty's postinstall runs `npx node-gyp`.) About 11 minutes on 2 cores.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';

const here = dirname(fileURLToPath(import.meta.url));
const vsix = resolve(process.argv[2] ?? join(here, '..', 'fixpoint-0.1.0.vsix'));
const codeServer = process.env.CODE_SERVER;
if (!codeServer) throw new Error('set CODE_SERVER to the code-server binary');
const { chromium } = createRequire(import.meta.url)(process.env.PLAYWRIGHT_CORE ?? 'playwright-core');

const work = mkdtempSync(join(tmpdir(), 'fixpoint-e2e-'));
const log = join(work, 'server.jsonl');
const userData = join(work, 'user');
const extDir = join(work, 'extensions');
const project = join(work, 'project');
mkdirSync(join(project, 'pkg'), { recursive: true });
mkdirSync(join(project, '.git'));
writeFileSync(join(project, 'go.mod'), 'module example.com/p\n\ngo 1.22\n');
writeFileSync(join(project, 'pkg', 'a.go'), 'package pkg\n\nfunc A() int { return 1 }\n');
mkdirSync(join(userData, 'User'), { recursive: true });
writeFileSync(
  join(userData, 'User', 'settings.json'),
  JSON.stringify({
    'fixpoint.path': join(here, 'fake-fixpoint'),
    'fixpoint.model': 'scripted',
    'fixpoint.maxIterations': 3,
    'workbench.startupEditor': 'none',
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
  }),
);

const env = { ...process.env, FIXPOINT_E2E_LOG: log };
execFileSync(codeServer, ['--user-data-dir', userData, '--extensions-dir', extDir, '--install-extension', vsix], { env, stdio: 'inherit' });

const port = await new Promise((ok) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => ok(p));
  });
});
const cs = spawn(
  codeServer,
  ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData, '--extensions-dir', extDir, '--disable-telemetry', project],
  { env, stdio: ['ignore', 'pipe', 'pipe'] },
);
let csOut = '';
cs.stdout.on('data', (d) => (csOut += d));
cs.stderr.on('data', (d) => (csOut += d));

const received = () =>
  existsSync(log)
    ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    : [];
const executed = (command) => received().find((m) => m.method === 'workspace/executeCommand' && m.params.command === command);
async function waitFor(what, pred, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let failures = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
  }
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await waitFor('code-server to listen', async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    } catch {
      return false;
    }
  });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(project)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 120_000 });

  async function palette(title) {
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget .quick-input-box input').waitFor({ state: 'visible' });
    await page.keyboard.type(title);
    await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title}")`, { timeout: 10_000 });
    await page.keyboard.press('Enter');
  }

  await check('the extension starts the server with the settings', async () => {
    const init = await waitFor('initialize', () => received().find((m) => m.method === 'initialize'), 120_000);
    const opts = init.params.initializationOptions;
    if (opts.model !== 'scripted' || opts.maxIterations !== 3) throw new Error(`initializationOptions = ${JSON.stringify(opts)}`);
    const cfg = await waitFor('workspace/configuration answer', () => received().find((m) => m.configuration));
    if (JSON.stringify(cfg.configuration) !== JSON.stringify([{ model: 'scripted', maxIterations: 3 }])) {
      throw new Error(`configuration = ${JSON.stringify(cfg.configuration)}`);
    }
  });

  await check('a failing doctor shows a notification with the fix', async () => {
    const toast = await page.waitForSelector('.notifications-toasts .notification-list-item-message:has-text("fixpoint doctor")', { timeout: 60_000 });
    const text = await toast.textContent();
    if (!text.includes('start Docker: sudo systemctl start docker')) throw new Error(`notification: ${text}`);
  });

  await check('an opened file reaches the server', async () => {
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget .quick-input-box input').waitFor({ state: 'visible' });
    await page.keyboard.type('a.go');
    await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("a.go")', { timeout: 10_000 });
    await page.keyboard.press('Enter');
    await page.waitForSelector('.tab:has-text("a.go")', { timeout: 10_000 });
    await waitFor('didOpen a.go', () =>
      received().find((m) => m.method === 'textDocument/didOpen' && m.params.textDocument.uri.endsWith('/pkg/a.go')),
    );
  });

  await check('Fixpoint: Run Tests sends fixpoint.runTests', async () => {
    await palette('Fixpoint: Run Tests');
    await waitFor('runTests', () => executed('fixpoint.runTests'));
  });

  await check('Fixpoint: Solve Goal… sends the typed goal', async () => {
    await palette('Fixpoint: Solve Goal');
    await page.locator('.quick-input-widget .quick-input-box input').waitFor({ state: 'visible' });
    await page.waitForTimeout(500); // the goal picker replaces the command palette
    await page.keyboard.type('add a --json flag');
    await page.keyboard.press('Enter');
    const m = await waitFor('solveGoal', () => executed('fixpoint.solveGoal'));
    const arg = m.params.arguments[0];
    if (arg.goal !== 'add a --json flag' || !arg.uri?.endsWith('/pkg/a.go')) throw new Error(JSON.stringify(m.params));
  });

  await check('Fixpoint: Fix Until Tests Pass ends with the status bar verified', async () => {
    await palette('Fixpoint: Fix Until Tests Pass');
    const m = await waitFor('fixTests', () => executed('fixpoint.fixTests'));
    if (!m.params.arguments[0]?.uri?.endsWith('/pkg/a.go')) throw new Error(`fixTests arguments: ${JSON.stringify(m.params.arguments)}`);
    await page.waitForSelector('#status\\.extensionItems, .statusbar', { timeout: 10_000 });
    await waitFor('status bar verified', async () => (await page.locator('.statusbar').textContent())?.includes('fixpoint: verified'), 30_000);
  });

  await check('Fixpoint: Cancel Run sends fixpoint.cancel', async () => {
    await palette('Fixpoint: Cancel Run');
    await waitFor('cancel', () => executed('fixpoint.cancel'));
  });

  await page.screenshot({ path: join(work, 'vscode.png') });
  console.log(`screenshot: ${join(work, 'vscode.png')}`);
} finally {
  await browser.close();
  cs.kill('SIGTERM');
}
if (failures > 0) {
  console.log(csOut.slice(-4000));
  process.exit(1);
}
console.log('all end-to-end checks passed');
