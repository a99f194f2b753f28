// Command ids. The extension's own commands (contributed in package.json)
// are distinct from the server's commands: vscode-languageclient registers
// every command the server advertises in executeCommandProvider, and two
// registrations of one id fail.

/** Commands this extension contributes and registers. */
export const COMMAND_IDS = [
  'fixpoint.goal',
  'fixpoint.fix',
  'fixpoint.test',
  'fixpoint.cancelRun',
  'fixpoint.showOutput',
  'fixpoint.restartServer',
  'fixpoint.setApiKey',
  'fixpoint.pickModel',
  'fixpoint.acceptFix',
  'fixpoint.discardFix',
] as const;

export type CommandId = (typeof COMMAND_IDS)[number];

/** Commands the server advertises and executes (workspace/executeCommand). */
export const SERVER_COMMANDS = {
  solveGoal: 'fixpoint.solveGoal',
  fixTests: 'fixpoint.fixTests',
  runTests: 'fixpoint.runTests',
  cancel: 'fixpoint.cancel',
  listModels: 'fixpoint.listModels',
} as const;
