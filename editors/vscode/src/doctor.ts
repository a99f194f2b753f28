// Doctor: turns `fixpoint doctor --json` output, or a missing binary, into
// a notification that says exactly what to do. No vscode import.

import { noLinks } from './runs';

/** How a doctor check came out. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'info' | 'skip';

/**
 * One check printed by `fixpoint doctor --json`, which prints
 * {"ok": bool, "checks": [{name, status, detail, fix}]}.
 */
export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail?: string;
  fix?: string;
}

const STATUSES: readonly string[] = ['ok', 'warn', 'fail', 'info', 'skip'];

/** A button on the notification and the command it runs. */
export interface Action {
  title: string;
  /** A VS Code command to run, or */
  command?: string;
  args?: unknown[];
  /** text to copy to the clipboard. */
  copy?: string;
}

/** A notification to show, or none. */
export interface Notice {
  severity: 'error' | 'warning';
  message: string;
  actions: Action[];
}

/** Run in a fixpoint checkout (the module is not published on the Go proxy, so `@latest` does not resolve). */
export const INSTALL_COMMAND = 'go install ./cmd/fixpoint';

/**
 * Parses doctor's JSON: the {ok, checks} object, or a bare array of checks;
 * a check without a status but with ok: bool is read as ok or fail.
 * Undefined when it isn't that shape (an older binary, a crash).
 */
export function parseDoctor(stdout: string): DoctorCheck[] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (v && typeof v === 'object' && !Array.isArray(v) && Array.isArray((v as { checks?: unknown }).checks)) {
    v = (v as { checks: unknown[] }).checks;
  }
  if (!Array.isArray(v)) return undefined;
  const out: DoctorCheck[] = [];
  for (const c of v) {
    if (!c || typeof c !== 'object' || typeof (c as DoctorCheck).name !== 'string') return undefined;
    const d = c as { name: string; status?: unknown; ok?: unknown; detail?: unknown; fix?: unknown };
    const status = (typeof d.status === 'string' && STATUSES.includes(d.status) ? d.status : d.ok === true ? 'ok' : 'fail') as CheckStatus;
    out.push({ name: d.name, status, detail: str(d.detail), fix: str(d.fix) });
  }
  return out;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The notification for the failing checks, or undefined when none fails.
 * Warnings (an image not built yet) only go to the output channel. A Docker
 * engine that does not answer is left to the language server, which says so
 * once with the fix for the user's system (and that tests run in bwrap), or
 * fails the run when the user chose docker: one notice, not two.
 */
export function doctorNotice(checks: DoctorCheck[]): Notice | undefined {
  const failed = checks.filter((c) => c.status === 'fail' && !engineNotAnswering(c));
  if (failed.length === 0) return undefined;
  const lines = failed.map((c) => {
    // A detail may quote the project's files: no link syntax in the notification.
    let s = c.name;
    if (c.detail) s += `: ${noLinks(c.detail)}`;
    if (c.fix) s += ` — fix: ${noLinks(c.fix)}`;
    return s;
  });
  const head = failed.length === 1 ? 'fixpoint doctor: 1 check failed' : `fixpoint doctor: ${failed.length} checks failed`;
  const actions: Action[] = [];
  if (failed.some((c) => /key|auth|model|endpoint/i.test(c.name + ' ' + (c.detail ?? '') + ' ' + (c.fix ?? '')))) {
    actions.push({ title: 'Set API Key', command: 'fixpoint.setApiKey' });
  }
  actions.push({ title: 'Show Output', command: 'fixpoint.showOutput' });
  return { severity: 'warning', message: `${head}. ${lines.join('; ')}`, actions };
}

/** The notification when the binary is not found. */
export function missingBinaryNotice(path: string): Notice {
  const where = path === 'fixpoint' ? 'on PATH' : `at "${path}"`;
  return {
    severity: 'error',
    message:
      `fixpoint: the fixpoint binary was not found ${where}. Install it with \`${INSTALL_COMMAND}\` in a fixpoint checkout ` +
      '(and put $(go env GOPATH)/bin on PATH), or set "fixpoint.path" to the binary.',
    actions: [
      { title: 'Copy Install Command', copy: INSTALL_COMMAND },
      { title: 'Open Settings', command: 'workbench.action.openSettings', args: ['fixpoint.path'] },
    ],
  };
}

/**
 * Finds an executable: a path containing a separator is checked as is; a
 * bare name is looked up in PATH. isExecutable is injected for tests.
 */
export function resolveBinary(
  path: string,
  envPath: string,
  isExecutable: (p: string) => boolean,
  sep = ':',
  dirSep = '/',
): string | undefined {
  if (path.includes('/') || path.includes('\\')) return isExecutable(path) ? path : undefined;
  for (const dir of envPath.split(sep)) {
    if (!dir) continue;
    const p = dir.endsWith(dirSep) ? dir + path : dir + dirSep + path;
    if (isExecutable(p)) return p;
  }
  return undefined;
}

/** A docker/podman engine check that failed because nothing answers. */
function engineNotAnswering(c: DoctorCheck): boolean {
  return /^(docker|podman) engine$/.test(c.name) && /^not answering\b/.test(c.detail ?? '');
}
