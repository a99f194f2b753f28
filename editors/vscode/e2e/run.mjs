// End-to-end test of the packaged extension in a real VS Code (code-server),
// driven from headless Chromium with playwright-core, against the real
// `fixpoint serve` with a scripted model. Run it through `make vscode-e2e`
// (editors/vscode_e2e_test.go builds the binary, starts the scripted model
// and copies the project); by hand:
//
//   CODE_SERVER=... PLAYWRIGHT_CORE=... FIXPOINT_BIN=... E2E_PROJECT=... \
//     FIXPOINT_BASE_URL=... FIXPOINT_MODEL=... node e2e/run.mjs fixpoint.vsix
//
// E2E_PROJECT is a copy of e2e/testdata/gostats, whose TestMedian fails until
// Median averages the two middle values; the model must fix it, and must hang
// on the goal "wait forever" (the cancel check). Optional: CHROMIUM (default
// /usr/bin/chromium), E2E_TIMEOUT_MS (default 480000). e2e/install.sh installs
// code-server and playwright-core. Exits 0 when every check passes; kills
// code-server (and what it started) however it ends.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const vsix = resolve(process.argv[2] ?? 'fixpoint.vsix');
for (const k of ['CODE_SERVER', 'FIXPOINT_BIN', 'E2E_PROJECT']) {
  if (!process.env[k]) {
    console.error(`run.mjs: set ${k} (see the comment at the top of e2e/run.mjs)`);
    process.exit(2);
  }
}
const codeServer = process.env.CODE_SERVER;
const project = process.env.E2E_PROJECT;
const { chromium } = createRequire(import.meta.url)(process.env.PLAYWRIGHT_CORE ?? 'playwright-core');

const work = mkdtempSync(join(tmpdir(), 'fixpoint-vscode-e2e-'));
const userData = join(work, 'user');
const extDir = join(work, 'extensions');
const settingsFile = join(userData, 'User', 'settings.json');
const machineSettingsFile = join(userData, 'Machine', 'settings.json');
mkdirSync(join(userData, 'User'), { recursive: true });
writeFileSync(
  settingsFile,
  JSON.stringify(
    {
      'fixpoint.path': process.env.FIXPOINT_BIN,
      'fixpoint.maxIterations': 3,
      'workbench.startupEditor': 'none',
      'security.workspace.trust.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'git.enabled': false,
      // E2E_TRACE=1: the LSP traffic goes to the output channel (<user-data>/logs/…/N-fixpoint.log).
      ...(process.env.E2E_TRACE ? { 'fixpoint.trace.server': 'verbose' } : {}),
    },
    null,
    2,
  ),
);

// Everything this script starts is killed on every way out.
let cs;
let browser;
let cleaning;
function cleanup() {
  cleaning ??= (async () => {
    await browser?.close().catch(() => undefined);
    // code-server leads its own process group: its file watcher and
    // extension host (and the fixpoint server it starts) go with it.
    const group = (sig) => {
      try {
        process.kill(-cs.pid, sig);
      } catch {
        // already gone
      }
    };
    if (cs) {
      const exited = cs.exitCode === null ? new Promise((ok) => cs.once('exit', ok)) : Promise.resolve();
      group('SIGTERM');
      const t = setTimeout(() => group('SIGKILL'), 5000);
      await exited;
      await new Promise((ok) => setTimeout(ok, 1000)); // its children's own shutdown
      group('SIGKILL');
      clearTimeout(t);
    }
  })();
  return cleaning;
}
let timedOut = false;
const deadline = setTimeout(async () => {
  timedOut = true;
  console.log('FAIL the end-to-end test timed out');
  await cleanup();
  process.exit(1);
}, Number(process.env.E2E_TIMEOUT_MS ?? 480_000));
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, async () => {
    await cleanup();
    process.exit(1);
  });
}

function runToEnd(cmd, args) {
  return new Promise((ok, fail) => {
    const p = spawn(cmd, args, { stdio: 'inherit' });
    p.on('error', fail);
    p.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`${cmd} ${args.join(' ')}: exit ${code}`))));
  });
}
await runToEnd(codeServer, ['--user-data-dir', userData, '--extensions-dir', extDir, '--install-extension', vsix]);

const port = await new Promise((ok) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => ok(p));
  });
});
cs = spawn(
  codeServer,
  ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData, '--extensions-dir', extDir, '--disable-telemetry', '--disable-workspace-trust', project],
  { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
);
// The test harness kills this group too, should this script be killed first.
if (process.env.E2E_PIDFILE) writeFileSync(process.env.E2E_PIDFILE, String(cs.pid));
let csOut = '';
cs.stdout.on('data', (d) => (csOut += d));
cs.stderr.on('data', (d) => (csOut += d));

/** The text of the fixpoint output channel: VS Code writes each channel to <user-data>/logs/…/N-fixpoint.log. */
function outputChannel() {
  const logs = join(userData, 'logs');
  if (!existsSync(logs)) return '';
  return readdirSync(logs, { recursive: true })
    .filter((f) => /(^|\/)\d+-fixpoint\.log$/.test(f))
    .map((f) => readFileSync(join(logs, f), 'utf8'))
    .join('\n');
}

async function waitFor(what, pred, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let failures = 0;
async function check(name, fn) {
  if (timedOut) return;
  const t0 = Date.now();
  try {
    const note = await fn();
    console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)}s)${note ? ' — ' + note : ''}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
    await page?.screenshot({ path: join(work, `fail-${failures}.png`) }).catch(() => undefined);
    await page?.keyboard.press('Escape').catch(() => undefined);
  }
}

let page;
try {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await waitFor('code-server to listen', async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    } catch {
      return false;
    }
  });
  // A busy machine loads the workbench slowly: the wait for .monaco-workbench below is the real one.
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(project)}`, { timeout: 120_000, waitUntil: 'domcontentloaded' });
  await page.waitForSelector('.monaco-workbench', { timeout: 120_000 });

  const input = () => page.locator('.quick-input-widget .quick-input-box input');
  /** The palette's rows for a typed filter. */
  async function paletteRows(filter) {
    await page.keyboard.press('F1');
    await input().waitFor({ state: 'visible' });
    await input().fill('>' + filter);
    await page.waitForTimeout(600);
    return page.locator('.quick-input-list .monaco-list-row .label-name').allTextContents();
  }
  async function palette(title) {
    await page.keyboard.press('F1');
    await input().waitFor({ state: 'visible' });
    await input().fill('>' + title);
    await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title}")`, { timeout: 30_000 });
    await page.keyboard.press('Enter');
  }
  /** The texts of the status bar items that are fixpoint's. */
  const fixpointItems = async () =>
    (await page.locator('.statusbar-item').allTextContents()).map((t) => t.trim()).filter((t) => /^fixpoint\b/.test(t));
  const itemsMatching = (re) => async () => {
    const items = await fixpointItems();
    return items.length === 1 && re.test(items[0]) ? items[0] : undefined;
  };
  /** Runs a palette command that starts a run, and waits until the previous run's status item is gone. */
  async function startRun(title) {
    const before = JSON.stringify(await fixpointItems());
    await palette(title);
    await waitFor(`${title} to start`, async () => JSON.stringify(await fixpointItems()) !== before, 30_000);
  }
  /** Polls for the run's progress notification and its Cancel button while waiting for done. */
  async function watchProgress(title, done, ms) {
    let seen;
    await waitFor(`${title} to finish`, async () => {
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: `fixpoint: ${title}` });
      if (!seen && (await toast.count()) > 0) {
        const cancel = await toast.first().locator('.monaco-button', { hasText: 'Cancel' }).count();
        seen = { cancellable: cancel > 0 };
      }
      return done();
    }, ms);
    return seen;
  }

  await check('the extension activates for a Go project and shows one status item', async () => {
    const text = await waitFor('the fixpoint status item', itemsMatching(/^fixpoint$/), 120_000);
    return `"${text}"`;
  });

  /** Saves a screenshot in the work directory and, with E2E_SCREENS, under that name there too (docs/screens). */
  async function screenshot(name) {
    const path = join(work, name);
    await page.screenshot({ path });
    if (process.env.E2E_SCREENS) {
      mkdirSync(process.env.E2E_SCREENS, { recursive: true });
      copyFileSync(path, join(process.env.E2E_SCREENS, name));
    }
    return path;
  }

  /** The visible notification toasts' texts. */
  const toasts = async () => (await page.locator('.notifications-toasts .notification-toast').allTextContents()).map((t) => t.trim());
  /** Clears every notification (so that a check counts only the ones its run shows). */
  async function clearNotifications() {
    await palette('Notifications: Clear All Notifications');
    await waitFor('the notifications to clear', async () => (await toasts()).length === 0, 10_000);
  }

  main: {
  if (process.env.E2E_MODE === 'firstrun') {
    // No model configured, no Docker engine: what a first-time user reads.
    await check('first run: the demo-model banner and the no-Docker notice, once each; the progress changes while the sandbox is prepared', async () => {
      await page.keyboard.press('Control+P');
      await input().waitFor({ state: 'visible' });
      await input().fill('stats_test.go');
      await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("stats_test.go")', { timeout: 10_000 });
      await page.keyboard.press('Enter');
      await startRun('Fixpoint: Fix Until Tests Pass');
      const banner = /no model configured: running the bundled scripted demo model/;
      const docker = /no Docker engine answers.*apt-get install docker\.io/;
      // Toasts hide after a while (the no-Docker notice may come with the prewarm, before the run):
      // the notification center lists every notification.
      const all = async () => {
        if ((await page.locator('.notifications-center.visible').count()) === 0) await palette('Notifications: Show Notifications');
        return (await page.locator('.notifications-center .notification-list-item').allTextContents()).map((x) => x.trim());
      };
      await waitFor('both first-run notifications', async () => {
        const t = await all();
        return t.some((x) => banner.test(x)) && t.some((x) => docker.test(x));
      }, 180_000);
      // The run's progress (notification and status item) changes while the sandbox is prepared.
      const seen = new Set();
      await waitFor('two different progress messages', async () => {
        for (const x of await fixpointItems()) seen.add(x);
        return seen.size >= 2;
      }, 240_000);
      const t = await all();
      const nBanner = t.filter((x) => banner.test(x)).length;
      const nDocker = t.filter((x) => docker.test(x)).length;
      // doctor's own "docker engine: not answering" would be a second Docker notice.
      const nDoctorDocker = t.filter((x) => /docker engine: not answering/.test(x)).length;
      if (nBanner !== 1 || nDocker !== 1 || nDoctorDocker !== 0) throw new Error(`banner ×${nBanner}, no-Docker ×${nDocker}, doctor's Docker ×${nDoctorDocker}: ${JSON.stringify(t)}`);
      const bannerText = t.find((x) => banner.test(x));
      if (!/FIXPOINT_API_KEY|Set API Key/.test(bannerText)) throw new Error(`the banner does not say where the key goes: ${bannerText}`);
      await screenshot('vscode-first-run.png');
      await palette('Fixpoint: Cancel Run');
      return `status items seen ${JSON.stringify([...seen])}`;
    });
    break main;
  }

  await check('Cancel Run is not in the palette while no run is active', async () => {
    const rows = await waitFor('Fixpoint commands in the palette', async () => {
      const r = await paletteRows('Fixpoint:');
      if (r.some((x) => x.includes('Run Tests'))) return r;
      await page.keyboard.press('Escape');
      return undefined;
    });
    await page.keyboard.press('Escape');
    if (rows.some((r) => r.includes('Cancel Run'))) throw new Error(`palette rows: ${JSON.stringify(rows)}`);
    for (const want of ['Solve Goal', 'Fix Until Tests Pass', 'Select Model']) {
      if (!rows.some((r) => r.includes(want))) throw new Error(`no "${want}" in ${JSON.stringify(rows)}`);
    }
  });

  await check('Run Tests ends reporting the failing test', async () => {
    await page.keyboard.press('Control+P');
    await input().waitFor({ state: 'visible' });
    await input().fill('stats_test.go');
    await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("stats_test.go")', { timeout: 10_000 });
    await page.keyboard.press('Enter');
    await page.waitForSelector('.tab:has-text("stats_test.go")', { timeout: 10_000 });
    await startRun('Fixpoint: Run Tests');
    // A server with $/fixpoint/status says "1 test failing"; an older one ends its progress with "1 passed, 1 failed".
    const text = await waitFor('the Run Tests result', itemsMatching(/failing|failed/), 180_000);
    if (/failed/.test(text)) return `"${text}" (server without $/fixpoint/status: the status comes from its progress)`;
    if (!/^fixpoint: \d+ tests? failing$/.test(text)) throw new Error(`status: ${text}`);
    return `"${text}"`;
  });

  let fixStatus = '';
  await check('Fix Until Tests Pass: a cancellable progress, the diff with Accept/Discard, one click applies it, one notification', async () => {
    await clearNotifications();
    await startRun('Fixpoint: Fix Until Tests Pass');
    let review;
    const seen = await watchProgress(
      'Fix until tests pass',
      async () => {
        // With preview=always the extension opens the verified fix as a diff and asks Accept / Discard.
        const ask = page.locator('.notifications-toasts .notification-toast', { hasText: 'The diff is open' });
        if (!review && (await ask.count()) > 0) {
          const diffTab = page.locator('.tab', { hasText: "fixpoint's verified fix" });
          await diffTab.first().waitFor({ timeout: 10_000 });
          // The diff shows the proposed line before anything lands.
          await page.locator('.monaco-diff-editor .editor.modified', { hasText: 's[mid-1] + s[mid]' }).first().waitFor({ timeout: 10_000 });
          // Accept and Discard on the diff's title bar too.
          const titleButtons = await page.locator('.editor-actions .action-label[aria-label^="Accept Verified Fix"], .editor-actions .action-label[aria-label^="Discard Verified Fix"]').count();
          if (titleButtons !== 2) throw new Error(`the diff's title bar has ${titleButtons} of the Accept/Discard buttons`);
          if (readFileSync(join(project, 'stats.go'), 'utf8').includes('(s[mid-1] + s[mid]) / 2')) throw new Error('stats.go changed before Accept');
          await screenshot('vscode-review.png');
          review = (await ask.first().textContent()).trim();
          await ask.first().hover();
          await ask.first().locator('.monaco-button', { hasText: 'Accept' }).click(); // the one click
        }
        const items = await fixpointItems();
        if (items.length > 1) throw new Error(`more than one fixpoint status item: ${JSON.stringify(items)}`);
        return items.length === 1 && /^fixpoint: /.test(items[0]) ? items[0] : undefined; // a final state
      },
      240_000,
    );
    fixStatus = (await fixpointItems())[0];
    if (!review) throw new Error('no Accept/Discard notification with the diff');
    if (!/stats\.go \(\+\d+ −\d+\)/.test(review)) throw new Error(`review notification: ${review}`);
    if (!/^fixpoint: verified, applied$/.test(fixStatus)) throw new Error(`status: ${fixStatus}`);
    if (!seen) throw new Error('no progress notification titled "fixpoint: Fix until tests pass"');
    if (!seen.cancellable) throw new Error('the progress notification has no Cancel button');
    // The edit landed in the buffer at once (one undo reverts it); the diff tab closed.
    await waitFor('the review diff to close', async () => (await page.locator('.tab', { hasText: "fixpoint's verified fix" }).count()) === 0, 10_000);
    await palette('File: Save All');
    const stats = await waitFor('the fix in stats.go', () => {
      const s = readFileSync(join(project, 'stats.go'), 'utf8');
      return s.includes('(s[mid-1] + s[mid]) / 2') ? s : undefined;
    });
    // Exactly one notification for the outcome: the extension's summary (no server "applied …", no preview hint).
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'verified and applied' });
    await toast.first().waitFor({ timeout: 10_000 });
    const shown = (await toasts()).filter((t) => !/Fix until tests pass/.test(t) || /verified and applied/.test(t));
    if (shown.length !== 1) throw new Error(`want one notification for the outcome, got ${JSON.stringify(shown)}`);
    await screenshot('vscode-applied.png');
    return `"${fixStatus}", review: "${review.slice(0, 120)}…", ${stats.split('\n').length} lines, notifications ${JSON.stringify(shown)}`;
  });

  await check('the status after the run stays "verified, applied" (the next sandbox is prepared without replacing it)', async () => {
    // Preparing the next run's sandbox (a prewarm) starts right after a run ends: it must not replace the status.
    await waitFor('a prewarm to be logged', () => /prewarm|preparing/i.test(outputChannel()), 30_000).catch(() => undefined);
    const items = await fixpointItems();
    if (items.length !== 1 || items[0] !== fixStatus) throw new Error(`status items ${JSON.stringify(items)}, want ["${fixStatus}"]`);
    return `"${items[0]}"`;
  });

  await check('the output channel has the server log and the run progress', async () => {
    const out = outputChannel();
    for (const want of ['msg="run start"', 'kind=fix', '[progress] ', '[doctor] OK   model endpoint']) {
      if (!out.includes(want)) throw new Error(`no ${JSON.stringify(want)} in the output channel:\n${out.slice(-2000)}`);
    }
  });

  await check("the run's diff in the output channel", async () => {
    // The output channel is backed by a log file; the diff's added line is in it.
    await waitFor('the diff in the output channel', () => /^\+.*\(s\[mid-1\] \+ s\[mid\]\) \/ 2/m.test(outputChannel()), 10_000);
  });

  await check('Fix Until Tests Pass on a passing project: one visible answer, "nothing to fix"', async () => {
    await clearNotifications();
    await startRun('Fixpoint: Fix Until Tests Pass');
    const text = await waitFor('the run to end', itemsMatching(/^fixpoint: (?!.*·)/), 180_000);
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'the tests already pass' });
    await toast.first().waitFor({ timeout: 10_000 });
    const shown = (await toasts()).filter((t) => !/^fixpoint: Fix until tests pass\s*$/.test(t) && !/Cancel$/.test(t));
    if (shown.length !== 1) throw new Error(`want one notification, got ${JSON.stringify(shown)}`);
    return `status "${text}", notification "${shown[0]}"`;
  });

  await check('a running Solve Goal: Cancel Run in the palette, Cancel on the notification cancels the run', async () => {
    await palette('Fixpoint: Solve Goal');
    await page.waitForTimeout(500); // the goal picker replaces the palette
    await input().fill('wait forever');
    await page.keyboard.press('Enter');
    await waitFor('the run to start', itemsMatching(/\$\(sync|sync~spin|·|\d+\/\d+/) , 30_000).catch(() => undefined);
    const rows = await waitFor('Cancel Run in the palette', async () => {
      const r = await paletteRows('Fixpoint: Cancel');
      await page.keyboard.press('Escape');
      return r.some((x) => x.includes('Cancel Run')) ? r : undefined;
    }, 30_000);
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'fixpoint: Solve goal' });
    await toast.first().waitFor({ timeout: 30_000 });
    await toast.first().hover();
    await toast.first().locator('.monaco-button', { hasText: 'Cancel' }).click();
    const text = await waitFor('the run to end cancelled', itemsMatching(/^fixpoint: cancelled$|^fixpoint$/), 60_000);
    const after = await waitFor('Cancel Run to leave the palette', async () => {
      const r = await paletteRows('Fixpoint: Cancel');
      await page.keyboard.press('Escape');
      return r.some((x) => x.includes('Cancel Run')) ? undefined : r;
    }, 30_000);
    return `palette while running: ${JSON.stringify(rows)}, after: ${JSON.stringify(after)}; status "${text}"`;
  });

  await check("Select Model… lists the endpoint's models and writes the user setting", async () => {
    await palette('Fixpoint: Select Model');
    await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("other-model")', { timeout: 30_000 });
    const rows = await page.locator('.quick-input-list .monaco-list-row .label-name').allTextContents();
    await input().fill('other-model');
    await page.waitForTimeout(300);
    await page.keyboard.press('Enter');
    // A machine-scoped setting goes to the user settings (desktop) or the remote machine's (code-server).
    const where = await waitFor(
      'fixpoint.model in the user settings',
      () => [settingsFile, machineSettingsFile].find((f) => existsSync(f) && /"fixpoint\.model":\s*"other-model"/.test(readFileSync(f, 'utf8'))),
      10_000,
    );
    return `rows ${JSON.stringify(rows)}, written to ${where.slice(userData.length + 1)}`;
  });

  await page.screenshot({ path: join(work, 'vscode.png') });
  console.log(`screenshot: ${join(work, 'vscode.png')}`);
  }
} catch (e) {
  failures++;
  console.log(`FAIL ${e.stack ?? e}`);
} finally {
  clearTimeout(deadline);
  await cleanup();
}
if (failures > 0) {
  console.log(csOut.slice(-4000));
  process.exit(1);
}
console.log('all end-to-end checks passed');
