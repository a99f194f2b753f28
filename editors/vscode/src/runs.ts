// Runs: the server's $/fixpoint/status notifications, what the status bar
// shows for each run, the summary after an applied edit and what goes to
// the output channel. No vscode import: unit-tested under node --test.
import { type ProgressValue, type Status, IDLE, clickCommand, nextStatus, parseIteration } from './status';

/** The notification the server sends for every step of a run. */
export const STATUS_NOTIFICATION = '$/fixpoint/status';

export const RUN_KINDS = ['fix', 'solve', 'test'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

export const RUN_STATES = ['running', 'applied', 'verified-not-applied', 'tests-failing', 'failed', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];

/** One changed file: its path (relative to the workspace folder, or absolute) and lines added/removed. */
export interface FileChange {
  path: string;
  added: number;
  removed: number;
}

/** $/fixpoint/status params. Every state but running is final; diff comes only with the final one. */
export interface RunStatus {
  runId: string;
  kind: RunKind;
  state: RunState;
  message: string;
  iteration?: number;
  maxIterations?: number;
  phase?: string;
  reason?: string;
  failing?: number;
  passing?: number;
  files: FileChange[];
  diff?: string;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Validates notification params; undefined when they are not a run status. */
export function parseRunStatus(v: unknown): RunStatus | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const p = v as Record<string, unknown>;
  const runId = str(p.runId);
  if (!runId || !(RUN_KINDS as readonly unknown[]).includes(p.kind) || !(RUN_STATES as readonly unknown[]).includes(p.state)) return undefined;
  const files: FileChange[] = [];
  if (Array.isArray(p.files)) {
    for (const f of p.files as Record<string, unknown>[]) {
      const path = f && str(f.path);
      if (path) files.push({ path, added: num(f.added) ?? 0, removed: num(f.removed) ?? 0 });
    }
  }
  return {
    runId,
    kind: p.kind as RunKind,
    state: p.state as RunState,
    // One line, whatever the server sent.
    message: (str(p.message) ?? '').split('\n')[0],
    iteration: num(p.iteration),
    maxIterations: num(p.maxIterations),
    phase: str(p.phase),
    reason: str(p.reason),
    failing: num(p.failing),
    passing: num(p.passing),
    files,
    diff: typeof p.diff === 'string' && p.diff !== '' ? p.diff : undefined,
  };
}

export function isFinal(s: RunStatus): boolean {
  return s.state !== 'running';
}

const TITLES: Record<RunKind, string> = { fix: 'Fix until tests pass', solve: 'Solve goal', test: 'Run tests' };

function clip(s: string, n = 48): string {
  if (s.length <= n) return s;
  // A long setup phase's elapsed time (" · 45 s") is what changes: keep it visible.
  const tick = / · \d+ s$/.exec(s)?.[0];
  if (tick && tick.length + 10 < n) return s.slice(0, n - 1 - tick.length) + '…' + tick;
  return s.slice(0, n - 1) + '…';
}

function tests(n: number | undefined, word: string): string {
  return n === undefined ? `tests ${word}` : `${n} ${n === 1 ? 'test' : 'tests'} ${word}`;
}

/**
 * Text for a notification, where VS Code turns [text](target) into a link (command: targets included):
 * a backslash before [ ] < > and \\, and before a ( that follows a ], leaves no "](" for its link
 * pattern to find (as the server's termsafe.Markdown does for its own messages).
 */
export function noLinks(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' || c === '[' || c === ']' || c === '<' || c === '>') out += '\\' + c;
    else if (c === '(' && i > 0 && s[i - 1] === ']') out += '\\(';
    else out += c;
  }
  return out;
}

/** "stats.go (+4 −1), stats_test.go (+6 −0)" */
export function describeFiles(files: FileChange[]): string {
  return files.map((f) => `${f.path} (+${f.added} −${f.removed})`).join(', ');
}

/** What the status bar shows for a run status: one text per state, the details in the tooltip. */
export function statusView(s: RunStatus): Status {
  const why = s.reason ?? s.message;
  // The server sends 0/0 before the first iteration.
  const iter = s.iteration && s.maxIterations ? ` ${s.iteration}/${s.maxIterations}` : '';
  const view = (kind: Status['kind'], text: string, tooltip: string): Status => ({
    kind,
    text,
    tooltip: `${TITLES[s.kind]}: ${tooltip} — click to ${kind === 'running' ? 'cancel' : 'show the output'}`,
    iteration: s.iteration,
    maxIterations: s.maxIterations,
  });
  switch (s.state) {
    case 'running': {
      // The message is for people ("Iteration 2/6 · running tests"); phase is a token, the fallback.
      const detail = s.message ? (parseIteration(s.message)?.rest ?? s.message) : s.phase;
      return view('running', `$(sync~spin) fixpoint${iter}${detail ? ' · ' + clip(detail) : ''}`, s.message || 'running');
    }
    case 'applied': {
      if (s.kind === 'test') return view('verified', `$(pass) fixpoint: ${tests(s.passing, 'passing')}`, s.message || 'all tests pass');
      if (s.files.length === 0) return view('verified', '$(pass) fixpoint: verified, nothing to change', s.message || 'verified; no file changes were needed');
      const files = `; changed ${describeFiles(s.files)}`;
      const passing = s.passing ? `; ${tests(s.passing, 'passing')}` : '';
      return view('applied', '$(pass) fixpoint: verified, applied', `${s.message || 'verified and applied'}${files}${passing}`);
    }
    case 'verified-not-applied':
      return view('not-applied', `$(warning) fixpoint: verified, not applied${why ? ' (' + clip(why, 40) + ')' : ''}`, why || 'verified, not applied');
    case 'tests-failing':
      return view('tests-failing', `$(error) fixpoint: ${tests(s.failing, 'failing')}`, s.message || tests(s.failing, 'failing'));
    case 'failed':
      return view('failed', `$(error) fixpoint: run failed${why ? ' (' + clip(why, 40) + ')' : ''}`, why || 'run failed');
    case 'cancelled':
      return view('cancelled', '$(circle-slash) fixpoint: cancelled', s.message || 'cancelled');
  }
}

/** A notification with buttons, the first being the primary one. */
export interface Summary {
  message: string;
  actions: string[];
}

export const OPEN_FILES = 'Open Files';
export const SHOW_OUTPUT = 'Show Output';

/** The one summary after an applied edit: the files changed (+/−) and the tests passing. */
export function appliedSummary(s: RunStatus): Summary | undefined {
  if (s.state !== 'applied' || s.kind === 'test') return undefined;
  const n = s.files.length;
  // The model named the files: in a notification "[x](command:…)" would be a link that runs a command.
  let message = `fixpoint: verified and applied — ${n === 0 ? 'no file changed' : `${n} ${n === 1 ? 'file' : 'files'} changed: ${noLinks(describeFiles(s.files))}`}`;
  if (s.passing) message += `; ${tests(s.passing, 'passing')}`; // 0: the server did not count them
  message += '.';
  return { message, actions: n > 0 ? [OPEN_FILES, SHOW_OUTPUT] : [SHOW_OUTPUT] };
}

/** A notification about how a run ended. */
export interface Outcome extends Summary {
  severity: 'info' | 'warning';
}

/**
 * The one notification for a run's final status (the server sends none of
 * its own to a client that declares experimental.fixpointOutcomes): what an
 * applied edit changed, that nothing needed changing, or why a verified
 * edit was not applied. Test runs, failures and cancellations have none here
 * (the status bar says it; the server reports failures itself).
 */
export function outcomeNotice(s: RunStatus): Outcome | undefined {
  if (s.kind === 'test') return undefined;
  if (s.state === 'applied') {
    if (s.files.length === 0) {
      return { severity: 'info', message: `fixpoint: ${TITLES[s.kind]}: ${noLinks((s.message || 'verified; no file changes were needed').replace(/\.$/, ''))}.`, actions: [] };
    }
    const sum = appliedSummary(s);
    return sum && { severity: 'info', ...sum };
  }
  if (s.state === 'verified-not-applied') {
    if (s.reason === 'declined') return { severity: 'info', message: `fixpoint: ${TITLES[s.kind]}: verified, not applied (you discarded it).`, actions: [] };
    return {
      severity: 'warning',
      message: `fixpoint: ${TITLES[s.kind]}: verified, but not applied: ${noLinks(s.reason ?? s.message)}.`,
      actions: s.diff ? [SHOW_OUTPUT] : [],
    };
  }
  return undefined;
}

/** Lines for the output channel: every final status, with the run's diff. */
export function outputLines(s: RunStatus): string[] {
  if (!isFinal(s)) return [];
  const lines = [`[${s.runId}] ${TITLES[s.kind]}: ${statusView(s).text.replace(/^\$\([^)]*\) /, '')}${s.message ? ' — ' + s.message : ''}`];
  if (s.files.length) lines.push(`[${s.runId}] files: ${describeFiles(s.files)}`);
  if (s.diff) lines.push(...s.diff.replace(/\n$/, '').split('\n'));
  return lines;
}

/** Whether token is a prewarm's ("fixpoint/prewarm-N"), not a run's: it must not replace a run's final status. */
export function isPrewarmToken(token: string | number): boolean {
  return String(token).startsWith('fixpoint/prewarm-');
}

/** A progress notification's title with one "fixpoint: " prefix (the server's titles carry it already). */
export function notificationTitle(title: string | undefined): string {
  return `fixpoint: ${(title ?? 'run').replace(/^fixpoint:\s*/i, '')}`;
}

/** The run id a work-done progress token belongs to: the server names its tokens "fixpoint/<runId>". */
export function runIdOfToken(token: string | number): string {
  const t = String(token);
  return t.startsWith('fixpoint/') ? t.slice('fixpoint/'.length) : t;
}

/** A status bar item, as far as the board needs one. */
export interface Item {
  text: string;
  tooltip: string;
  command: string;
  show(): void;
  hide(): void;
  dispose(): void;
}

/**
 * The status bar: one item per run, plus an idle item shown only while no
 * run has an item. A run's item is driven by $/fixpoint/status; $/progress
 * drives it only until the first status arrives (servers that send none).
 * A finished run keeps its item, showing how it ended, until the next run
 * starts.
 */
export class StatusBoard {
  private readonly idle: Item;
  private readonly items = new Map<string, { item: Item; status: Status; fromStatus: boolean; title?: string }>();

  constructor(private readonly create: () => Item) {
    this.idle = create();
    this.paint(this.idle, IDLE);
    this.idle.show();
  }

  /** Applies a $/fixpoint/status notification and returns the run's new view. */
  status(s: RunStatus): Status {
    const view = statusView(s);
    this.entry(s.runId, true, view);
    return view;
  }

  /** Applies a $/progress value for token; ignored once the run reports status. */
  progress(token: string | number, value: ProgressValue): void {
    const id = runIdOfToken(token);
    const e = this.items.get(id);
    if (e?.fromStatus) return;
    const title = value.title ?? e?.title;
    const view = nextStatus(e?.status ?? IDLE, value, title);
    const entry = this.entry(id, false, view);
    entry.title = title;
  }

  /** Runs whose last view is running. */
  active(): number {
    let n = 0;
    for (const e of this.items.values()) if (e.status.kind === 'running') n++;
    return n;
  }

  /** Items currently shown: the runs', or the idle one. */
  visible(): Status[] {
    return this.items.size ? [...this.items.values()].map((e) => e.status) : [IDLE];
  }

  /** What the idle item shows (the server is missing or failed to start). */
  setIdle(s: Status): void {
    this.paint(this.idle, s);
  }

  /** Back to idle (the server restarted). */
  reset(): void {
    for (const e of this.items.values()) e.item.dispose();
    this.items.clear();
    this.paint(this.idle, IDLE);
    this.idle.show();
  }

  dispose(): void {
    this.reset();
    this.idle.dispose();
  }

  private entry(id: string, fromStatus: boolean, view: Status) {
    let e = this.items.get(id);
    if (!e) {
      // A new run: the finished runs' items go, the idle one hides.
      for (const [other, o] of this.items) {
        if (o.status.kind !== 'running') {
          o.item.dispose();
          this.items.delete(other);
        }
      }
      e = { item: this.create(), status: view, fromStatus };
      this.items.set(id, e);
      this.idle.hide();
      e.item.show();
    }
    e.fromStatus ||= fromStatus;
    e.status = view;
    this.paint(e.item, view);
    return e;
  }

  private paint(item: Item, s: Status): void {
    item.text = s.text;
    item.tooltip = s.tooltip;
    item.command = clickCommand(s);
  }
}

/** Actions that apply an unverified result. */
const UNVERIFIED = /best attempt|unverified|anyway/i;

/** The label added first when every action a server offers is unverified. */
export const NOT_NOW = 'Not now';

/**
 * Orders a showMessageRequest's actions so that applying an unverified
 * result is never the primary (first) button: such actions go last, and
 * when nothing else is offered, "Not now" (a dismissal) comes first.
 */
export function orderActions(titles: string[]): string[] {
  const safe = titles.filter((t) => !UNVERIFIED.test(t));
  const risky = titles.filter((t) => UNVERIFIED.test(t));
  if (risky.length && !safe.length) return [NOT_NOW, ...risky];
  return [...safe, ...risky];
}

/** Whether a workspace/applyEdit's edit carries a change annotation that needs confirmation (VS Code previews it). */
export function needsConfirmation(edit: unknown): boolean {
  const anns = edit && typeof edit === 'object' ? (edit as { changeAnnotations?: unknown }).changeAnnotations : undefined;
  if (!anns || typeof anns !== 'object') return false;
  return Object.values(anns).some((a) => !!a && typeof a === 'object' && (a as { needsConfirmation?: unknown }).needsConfirmation === true);
}
