// Recent goals for the "Solve Goal…" input box. No vscode import.

/** How many goals are remembered. */
export const MAX_RECENT_GOALS = 10;

/**
 * Returns recent with goal moved (or added) to the front, blank goals
 * ignored, duplicates (after trimming) removed and the list capped at max.
 */
export function rememberGoal(recent: readonly string[], goal: string, max = MAX_RECENT_GOALS): string[] {
  const g = goal.trim();
  const rest = recent.map((r) => r.trim()).filter((r) => r !== '' && r !== g);
  return (g === '' ? rest : [g, ...rest]).slice(0, Math.max(0, max));
}

/** Validates a goal typed in the input box; returns an error message or undefined. */
export function validateGoal(goal: string): string | undefined {
  if (goal.trim() === '') return 'Describe the change you want, e.g. "make TestParse pass" or "add a --json flag".';
  if (goal.length > 2000) return 'That goal is very long: keep it under 2000 characters and put details in a comment.';
  return undefined;
}
