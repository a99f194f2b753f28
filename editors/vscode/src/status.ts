// Status: turns the server's $/progress values into the status bar state.
// No vscode import: unit-tested under node --test.

/**
 * The states the status bar shows. A run reported by $/fixpoint/status
 * ends applied, not-applied, tests-failing, failed or cancelled; a run seen
 * only through $/progress (an older server) ends verified or failed.
 */
export type StatusKind = 'idle' | 'running' | 'verified' | 'applied' | 'not-applied' | 'tests-failing' | 'failed' | 'cancelled';

/** What the status bar shows. */
export interface Status {
  kind: StatusKind;
  /** Short text for the status bar, with a codicon. */
  text: string;
  /** Longer text for the tooltip. */
  tooltip: string;
  /** Current iteration and budget while running, when the server said so. */
  iteration?: number;
  maxIterations?: number;
}

/** A work-done progress value as sent in $/progress (LSP WorkDoneProgressBegin/Report/End). */
export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
  percentage?: number;
  cancellable?: boolean;
}

export const IDLE: Status = { kind: 'idle', text: '$(check-all) fixpoint', tooltip: 'fixpoint: idle — click to show the output' };

const iterationRe = /iteration\s+(\d+)\s*\/\s*(\d+)/i;
// The server ends a run with "Verified", "Not verified: <reason>", "Cancelled",
// "Failed: <error>", or for a test run a summary ("5 passed, 1 failed").
const failedRe = /\bnot verified\b|\bfail(ed|ure|s)?\b|\berror\b|\bgave up\b|\bbudget\b|\bexit code\b|\btimed out\b|\bout of memory\b/i;
const cancelRe = /\bcancel(l)?ed\b/i;
const verifiedRe = /\bverified\b|\bpass(ed)?\b|\bapplied\b/i;

/** Parses "Iteration 2/6 · running tests · 3 failed" into its parts. */
export function parseIteration(message: string | undefined): { iteration: number; max: number; rest: string } | undefined {
  if (!message) return undefined;
  const m = iterationRe.exec(message);
  if (!m) return undefined;
  const rest = message
    .split('·')
    .map((s) => s.trim())
    .filter((s) => s !== '' && !iterationRe.test(s))
    .join(' · ');
  return { iteration: Number(m[1]), max: Number(m[2]), rest };
}

/**
 * Returns the status after a progress value. prev carries the title and the
 * iteration across reports that omit them.
 */
export function nextStatus(prev: Status, value: ProgressValue, title?: string): Status {
  const name = title ?? value.title ?? 'fixpoint';
  if (value.kind === 'end') return endStatus(value.message, prev);
  const it = parseIteration(value.message);
  const iteration = it?.iteration ?? prev.iteration;
  const max = it?.max ?? prev.maxIterations;
  const detail = it ? it.rest : value.message ?? '';
  let text = '$(sync~spin) fixpoint';
  if (iteration !== undefined && max !== undefined) text += ` ${iteration}/${max}`;
  if (detail) text += ` · ${detail}`;
  const tooltip = `${name}${value.message ? ': ' + value.message : ''} — click to cancel`;
  return { kind: 'running', text, tooltip, iteration, maxIterations: max };
}

function endStatus(message: string | undefined, prev: Status): Status {
  const msg = message ?? '';
  if (cancelRe.test(msg)) return { ...IDLE, tooltip: `fixpoint: ${msg} — click to show the output` };
  // "Not verified after 6 iterations: 2 tests still fail" must read as failed, so test failure first.
  if (failedRe.test(msg)) {
    return { kind: 'failed', text: '$(error) fixpoint: failed', tooltip: `fixpoint: ${msg} — click to show the output` };
  }
  if (verifiedRe.test(msg) || msg === '') {
    const where = prev.iteration !== undefined ? ` (${prev.iteration}/${prev.maxIterations})` : '';
    return {
      kind: 'verified',
      text: '$(pass) fixpoint: verified',
      tooltip: `fixpoint: ${msg || 'verified'}${where} — click to show the output`,
    };
  }
  return { ...IDLE, tooltip: `fixpoint: ${msg} — click to show the output` };
}

/** The command the status bar runs when clicked in this state. */
export function clickCommand(s: Status): string {
  return s.kind === 'running' ? 'fixpoint.cancelRun' : 'fixpoint.showOutput';
}
