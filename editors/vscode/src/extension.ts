// The VS Code side of fixpoint: a thin client for `fixpoint serve`. All the
// logic a test can reach lives in the vscode-free modules beside this file
// (status, goals, settings, doctor); this file only wires them to VS Code.
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  type ApplyWorkspaceEditParams,
  ApplyWorkspaceEditRequest,
  type ApplyWorkspaceEditResult,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type MessageActionItem,
  MessageType,
  type ProgressToken,
  type ServerOptions,
  ShowMessageRequest,
  type ShowMessageRequestParams,
  Trace,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
} from 'vscode-languageclient/node';
import { COMMAND_IDS, type CommandId, SERVER_COMMANDS } from './commands';
import { type Notice, doctorNotice, missingBinaryNotice, parseDoctor, resolveBinary } from './doctor';
import { rememberGoal, validateGoal } from './goals';
import { documentSelector } from './languages';
import { modelItems, parseModelList } from './models';
import {
  NOT_NOW,
  OPEN_FILES,
  SHOW_OUTPUT,
  STATUS_NOTIFICATION,
  StatusBoard,
  type Item,
  outcomeNotice,
  isFinal,
  needsConfirmation,
  orderActions,
  outputLines,
  parseRunStatus,
  isPrewarmToken,
  notificationTitle,
} from './runs';
import { ACCEPT, DISCARD, applyTextEdits, lineCounts, reviewInfo, reviewMessage, withoutAnnotations } from './review';
import { configurationResponse, isMachineSetting, needsRestart, readSettings, serverSettings, type Settings } from './settings';
import type { ProgressValue } from './status';

const SECRET_KEY = 'fixpoint.apiKey';
const RECENT_GOALS_KEY = 'fixpoint.recentGoals';

/** vscode-languageclient's own workspace/applyEdit handler (private in its types). */
interface LanguageClientApply {
  handleApplyWorkspaceEdit(p: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult>;
}

/** The scheme of a verified edit's proposed file contents, shown in a diff until accepted or discarded. */
const PROPOSED_SCHEME = 'fixpoint-proposed';

/** The context key that is true while a verified edit waits for Accept / Discard (menus.commandPalette). */
const REVIEW_ACTIVE_KEY = 'fixpoint.reviewActive';

/** The context key that is true while a run is active (menus.commandPalette: Cancel Run). */
const RUN_ACTIVE_KEY = 'fixpoint.runActive';

class Extension {
  private client: LanguageClient | undefined;
  private settings: Settings;
  private readonly output: vscode.OutputChannel;
  private readonly board: StatusBoard;
  private runActive = false;
  /** The proposed contents of files under review, by fixpoint-proposed: URI. */
  private readonly proposed = new Map<string, string>();
  private reviews = 0;
  private pendingReview: ((answer: string) => void) | undefined;

  constructor(private readonly ctx: vscode.ExtensionContext) {
    this.settings = Extension.read();
    this.output = vscode.window.createOutputChannel('fixpoint');
    this.board = new StatusBoard(() => vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10) as Item);
    ctx.subscriptions.push(this.output, { dispose: () => this.board.dispose() });
    void vscode.commands.executeCommand('setContext', RUN_ACTIVE_KEY, false);
  }

  static config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration('fixpoint');
  }

  static read(): Settings {
    const cfg = Extension.config();
    return readSettings((k) => cfg.get(k));
  }

  /** One handler per contributed command; the Record type makes a missing one a compile error. */
  handlers(): Record<CommandId, (...args: unknown[]) => unknown> {
    return {
      'fixpoint.goal': () => this.solveGoal(),
      'fixpoint.fix': () => this.execute(SERVER_COMMANDS.fixTests, [{ uri: this.activeUri() }]),
      'fixpoint.test': () => this.execute(SERVER_COMMANDS.runTests, [{ uri: this.activeUri() }]),
      'fixpoint.cancelRun': () => this.execute(SERVER_COMMANDS.cancel, []),
      'fixpoint.showOutput': () => this.output.show(true),
      'fixpoint.restartServer': () => this.restart(),
      'fixpoint.setApiKey': () => this.setApiKey(),
      'fixpoint.pickModel': () => this.pickModel(),
      'fixpoint.acceptFix': () => this.answerReview(ACCEPT),
      'fixpoint.discardFix': () => this.answerReview(DISCARD),
    };
  }

  register(): void {
    const handlers = this.handlers();
    for (const id of COMMAND_IDS) {
      this.ctx.subscriptions.push(vscode.commands.registerCommand(id, handlers[id]));
    }
    this.ctx.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => this.configChanged(e)));
    this.ctx.subscriptions.push(
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, {
        provideTextDocumentContent: (uri) => this.proposed.get(uri.toString()) ?? '',
      }),
    );
  }

  private async configChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration('fixpoint')) return;
    const prev = this.settings;
    this.settings = Extension.read();
    if (needsRestart(prev, this.settings)) {
      await this.restart();
      return;
    }
    if (this.client?.isRunning()) {
      await this.client.setTrace(Trace.fromString(this.settings.traceServer));
      await this.client.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { fixpoint: serverSettings(this.settings) },
      });
    }
  }

  async start(): Promise<void> {
    const bin = resolveBinary(this.settings.path, process.env.PATH ?? '', isExecutable, path.delimiter, path.sep);
    if (!bin) {
      this.board.setIdle({ kind: 'failed', text: '$(error) fixpoint: not installed', tooltip: 'fixpoint: binary not found' });
      void this.notify(missingBinaryNotice(this.settings.path));
      return;
    }
    const env = await this.serverEnv();
    const serverOptions: ServerOptions = { command: bin, args: ['serve'], options: { env } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: documentSelector(),
      outputChannel: this.output,
      // workspaceTrusted: the server prepares (installs, runs the tests of) only folders the user trusts; the
      // extension runs only in workspaces VS Code trusts (capabilities.untrustedWorkspaces), and says so.
      initializationOptions: { ...serverSettings(this.settings), workspaceTrusted: vscode.workspace.isTrusted },
      middleware: {
        workspace: {
          configuration: (params) => configurationResponse(params.items, this.settings),
        },
      },
    };
    const client = new LanguageClient('fixpoint', 'fixpoint', serverOptions, clientOptions);
    this.client = client;
    client.onNotification(STATUS_NOTIFICATION, (p: unknown) => this.runStatus(p));
    // The extension tells the user how each run ended (runStatus): the server sends no message of its own for it.
    client.registerFeature({
      fillClientCapabilities: (caps) => {
        caps.experimental = { ...(caps.experimental as object | undefined), fixpointOutcomes: true };
      },
      initialize: () => undefined,
      getState: () => ({ kind: 'static' as const }),
      clear: () => undefined,
    });
    try {
      await client.start();
      // Replace vscode-languageclient's handlers (registered by start): its
      // progress is a status bar spinner beside ours with no cancel button,
      // and its message requests make the first action the primary button.
      client.onRequest(WorkDoneProgressCreateRequest.type, (p) => this.progressCreate(client, p.token));
      client.onRequest(ShowMessageRequest.type, (p) => this.showMessageRequest(p));
      // A verified edit that needs confirmation (preview = "always"): VS Code's Refactor Preview would show its
      // changes unticked, so the extension shows the diff and asks Accept / Discard, then applies the edit
      // unannotated through vscode-languageclient's own handler (pinned at 9.0.1): one undo reverts it.
      const defaultApply = (client as unknown as LanguageClientApply).handleApplyWorkspaceEdit.bind(client);
      client.onRequest(ApplyWorkspaceEditRequest.type, async (p) => {
        if (!needsConfirmation(p.edit)) return defaultApply(p);
        if ((await this.review(p.edit)) !== ACCEPT) return { applied: false, failureReason: 'declined' };
        return defaultApply({ ...p, edit: withoutAnnotations(p.edit) });
      });
      await client.setTrace(Trace.fromString(this.settings.traceServer));
    } catch (err) {
      this.output.appendLine(`fixpoint serve failed to start: ${String(err)}`);
      this.board.setIdle({ kind: 'failed', text: '$(error) fixpoint: server failed', tooltip: String(err) });
    }
    void this.doctor(bin, env);
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) await c.stop().catch(() => undefined);
  }

  private async restart(): Promise<void> {
    await this.stop();
    this.board.reset();
    this.syncRunActive();
    await this.start();
  }

  /** The server's environment: ours plus the key from SecretStorage (never from settings.json). */
  private async serverEnv(): Promise<NodeJS.ProcessEnv> {
    const env = { ...process.env };
    const key = await this.ctx.secrets.get(SECRET_KEY);
    if (key) env.FIXPOINT_API_KEY = key;
    return env;
  }

  /**
   * A run's work-done progress: a cancellable notification (cancel sends
   * window/workDoneProgress/cancel for the run's token, which cancels that
   * run) and, until the run sends $/fixpoint/status, its status bar item.
   */
  private progressCreate(client: LanguageClient, token: ProgressToken): void {
    let report: ((message: string) => void) | undefined;
    let pending: string | undefined;
    let end: (() => void) | undefined;
    const sub = client.onProgress(WorkDoneProgress.type, token, (value) => {
      const v = value as ProgressValue;
      // A prewarm (preparing the sandbox) is no run: the last run's final
      // status stays in the status bar; the notification still shows it.
      if (!isPrewarmToken(token)) this.board.progress(token, v);
      this.syncRunActive();
      if (v.message) this.output.appendLine(`[progress] ${v.message}`);
      if (v.kind === 'begin') {
        pending = v.message;
        void vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: notificationTitle(v.title), cancellable: true },
          (progress, cancel) => {
            report = (message) => progress.report({ message });
            if (pending) report(pending);
            cancel.onCancellationRequested(() => void client.sendNotification(WorkDoneProgressCancelNotification.type, { token }));
            return new Promise<void>((resolve) => (end = resolve));
          },
        );
      } else if (v.kind === 'report' && v.message) {
        if (report) report(v.message);
        else pending = v.message;
      } else if (v.kind === 'end') {
        end?.();
        sub.dispose();
      }
    });
  }

  /** $/fixpoint/status: the run's status bar item; at the end its diff in the output and, when applied, one summary. */
  private runStatus(params: unknown): void {
    const s = parseRunStatus(params);
    if (!s) {
      this.output.appendLine(`ignored a malformed ${STATUS_NOTIFICATION}: ${JSON.stringify(params)}`);
      return;
    }
    this.board.status(s);
    this.syncRunActive();
    if (!isFinal(s)) return;
    for (const line of outputLines(s)) this.output.appendLine(line);
    const n = outcomeNotice(s);
    if (!n) return;
    const show = n.severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(n.message, ...n.actions).then(async (picked) => {
      if (picked === SHOW_OUTPUT) this.output.show(true);
      if (picked === OPEN_FILES) {
        for (const f of s.files) {
          const uri = resolveFile(f.path);
          if (uri) await vscode.window.showTextDocument(uri, { preview: false, preserveFocus: false });
        }
      }
    });
  }

  /**
   * Shows each file of a verified edit as a diff (current ↔ proposed) and
   * asks Accept / Discard, in a notification and on the diff's title bar.
   * Resolves with ACCEPT, or DISCARD when the user declines or closes every diff.
   */
  private async review(edit: unknown): Promise<string> {
    const info = reviewInfo(edit);
    const id = String(++this.reviews);
    const diffs: { left: vscode.Uri; right: vscode.Uri; title: string }[] = [];
    const counts: { name: string; added: number; removed: number }[] = [];
    for (const [i, f] of info.files.entries()) {
      const uri = vscode.Uri.parse(f.uri);
      const name = vscode.workspace.asRelativePath(uri, false);
      let before = '';
      if (!f.create) {
        try {
          before = (await vscode.workspace.openTextDocument(uri)).getText();
        } catch {
          before = '';
        }
      }
      const after = f.delete ? '' : applyTextEdits(before, f.edits);
      const right = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${id}/${i}/${path.posix.basename(uri.path)}` });
      this.proposed.set(right.toString(), after);
      let left = uri;
      if (f.create) {
        left = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${id}/${i}/empty/${path.posix.basename(uri.path)}` });
        this.proposed.set(left.toString(), '');
      }
      diffs.push({ left, right, title: `${name} ↔ fixpoint's verified fix` });
      counts.push({ name, ...lineCounts(before, after) });
    }
    void vscode.commands.executeCommand('setContext', REVIEW_ACTIVE_KEY, true);
    for (const d of diffs) await vscode.commands.executeCommand('vscode.diff', d.left, d.right, d.title, { preview: false });
    const isOurs = (t: vscode.Tab) =>
      t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PROPOSED_SCHEME && t.input.modified.path.startsWith(`/${id}/`);
    const answer = await new Promise<string>((resolve) => {
      this.pendingReview = resolve;
      // Closing every diff of the edit without answering declines it.
      const sub = vscode.window.tabGroups.onDidChangeTabs((e) => {
        if (e.closed.some(isOurs) && !vscode.window.tabGroups.all.some((g) => g.tabs.some(isOurs))) resolve(DISCARD);
      });
      const done = resolve;
      resolve = (a) => {
        sub.dispose();
        done(a);
      };
      this.pendingReview = resolve;
      void vscode.window.showInformationMessage(reviewMessage(info, counts), ACCEPT, DISCARD).then((picked) => {
        if (picked) resolve(picked);
      });
    });
    this.pendingReview = undefined;
    void vscode.commands.executeCommand('setContext', REVIEW_ACTIVE_KEY, false);
    await this.closeReview(id);
    return answer;
  }

  /** Accept / Discard from the diff's title bar (menus.editor/title) or the palette. */
  private answerReview(answer: string): void {
    const r = this.pendingReview;
    if (!r) {
      void vscode.window.showInformationMessage('fixpoint: no verified fix is waiting for review.');
      return;
    }
    r(answer);
  }

  /** Closes the diff tabs of review id and forgets their contents. */
  private async closeReview(id: string): Promise<void> {
    const prefix = `/${id}/`;
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PROPOSED_SCHEME && t.input.modified.path.startsWith(prefix));
    if (tabs.length) await vscode.window.tabGroups.close(tabs).then(undefined, () => undefined);
    for (const k of [...this.proposed.keys()]) if (vscode.Uri.parse(k).path.startsWith(prefix)) this.proposed.delete(k);
  }

  private syncRunActive(): void {
    const active = this.board.active() > 0;
    if (active === this.runActive) return;
    this.runActive = active;
    void vscode.commands.executeCommand('setContext', RUN_ACTIVE_KEY, active);
  }

  /** window/showMessageRequest, with an unverified "Apply best attempt" never the primary button. */
  private async showMessageRequest(p: ShowMessageRequestParams): Promise<MessageActionItem | null> {
    const actions = p.actions ?? [];
    const show =
      p.type === MessageType.Error
        ? vscode.window.showErrorMessage
        : p.type === MessageType.Warning
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const picked = await show(p.message, ...orderActions(actions.map((a) => a.title)));
    if (picked === undefined || (picked === NOT_NOW && !actions.some((a) => a.title === NOT_NOW))) return null;
    return actions.find((a) => a.title === picked) ?? null;
  }

  /** Fixpoint: Select Model…: the endpoint's models (fixpoint.listModels), written to the user's fixpoint.model. */
  private async pickModel(): Promise<void> {
    if (!this.client?.isRunning()) {
      void vscode.window.showErrorMessage('fixpoint: the server is not running. Run "Fixpoint: Restart Server" or check the output.');
      return;
    }
    let reply: unknown;
    try {
      reply = await this.client.sendRequest(ExecuteCommandRequest.type, {
        command: SERVER_COMMANDS.listModels,
        arguments: [dropUndefined({ uri: this.activeUri() })],
      });
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      const open = await vscode.window.showErrorMessage(
        `fixpoint: could not list the models: ${msg}. Check "fixpoint.baseUrl" and the API key (Fixpoint: Set API Key), or type the name into "fixpoint.model".`,
        'Open Settings',
      );
      if (open) await openSetting('fixpoint.model');
      return;
    }
    const list = parseModelList(reply);
    if (!list) {
      void vscode.window.showErrorMessage('fixpoint: this fixpoint binary cannot list models (no fixpoint.listModels): update it, or set "fixpoint.model" by hand.');
      return;
    }
    const picked = await vscode.window.showQuickPick(modelItems(list, this.settings.model), {
      title: `fixpoint: model (${list.models.length} at ${list.baseUrl || 'the default endpoint'})`,
      placeHolder: 'The model fixpoint asks; saved in your user settings (fixpoint.model)',
      matchOnDescription: true,
    });
    if (!picked) return;
    await Extension.config().update('model', picked.value || undefined, vscode.ConfigurationTarget.Global);
  }

  private async solveGoal(): Promise<void> {
    const recent = this.ctx.globalState.get<string[]>(RECENT_GOALS_KEY, []);
    const goal = await pickGoal(recent);
    if (goal === undefined) return;
    await this.ctx.globalState.update(RECENT_GOALS_KEY, rememberGoal(recent, goal));
    const editor = vscode.window.activeTextEditor;
    const arg: { goal: string; uri?: string; range?: unknown } = { goal: goal.trim() };
    if (editor && this.client) {
      arg.uri = editor.document.uri.toString();
      if (!editor.selection.isEmpty) arg.range = this.client.code2ProtocolConverter.asRange(editor.selection);
    }
    await this.execute(SERVER_COMMANDS.solveGoal, [arg]);
  }

  private activeUri(): string | undefined {
    return vscode.window.activeTextEditor?.document.uri.toString();
  }

  private async execute(command: string, args: unknown[]): Promise<void> {
    if (!this.client?.isRunning()) {
      void vscode.window.showErrorMessage('fixpoint: the server is not running. Run "Fixpoint: Restart Server" or check the output.');
      return;
    }
    try {
      await this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args.map(dropUndefined) });
    } catch (err) {
      void vscode.window.showErrorMessage(`fixpoint: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async setApiKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: 'fixpoint: API key',
      prompt: 'Stored in VS Code SecretStorage and passed to fixpoint as FIXPOINT_API_KEY. Leave empty to remove it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key.trim() === '') await this.ctx.secrets.delete(SECRET_KEY);
    else await this.ctx.secrets.store(SECRET_KEY, key.trim());
    await this.restart();
  }

  private doctor(bin: string, env: NodeJS.ProcessEnv): Promise<void> {
    return new Promise((resolve) => {
      // In the workspace folder: doctor reads its .fixpoint.toml (image, sandbox) as the server does.
      const cwd = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
      execFile(bin, ['doctor', '--json'], { env, cwd, timeout: 60_000 }, (err, stdout, stderr) => {
        const checks = parseDoctor(stdout);
        if (!checks) {
          this.output.appendLine(`fixpoint doctor gave no JSON (${err ? err.message : 'no error'}): ${stderr.trim()}`);
          resolve();
          return;
        }
        for (const c of checks) {
          this.output.appendLine(`[doctor] ${c.status.toUpperCase().padEnd(4)} ${c.name}${c.detail ? ': ' + c.detail : ''}${c.fix ? ' (fix: ' + c.fix + ')' : ''}`);
        }
        const n = doctorNotice(checks);
        if (n) void this.notify(n);
        resolve();
      });
    });
  }

  private async notify(n: Notice): Promise<void> {
    const show = n.severity === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    const picked = await show(n.message, ...n.actions.map((a) => a.title));
    const a = n.actions.find((x) => x.title === picked);
    if (!a) return;
    if (a.copy) await vscode.env.clipboard.writeText(a.copy);
    if (a.command === 'workbench.action.openSettings' && typeof a.args?.[0] === 'string') await openSetting(a.args[0]);
    else if (a.command) await vscode.commands.executeCommand(a.command, ...(a.args ?? []));
  }
}

/** A quick pick that offers recent goals and accepts whatever is typed. */
function pickGoal(recent: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick();
    qp.title = 'fixpoint: Solve Goal';
    qp.placeholder = 'Describe the change, e.g. "make TestParse pass" (Enter to run)';
    qp.ignoreFocusOut = true;
    const recentItems = recent.map((g) => ({ label: g, description: 'recent' }));
    qp.items = recentItems;
    qp.onDidChangeValue((v) => {
      qp.items = v.trim() ? [{ label: v, description: 'new goal' }, ...recentItems.filter((i) => i.label !== v)] : recentItems;
    });
    let done = false;
    qp.onDidAccept(() => {
      const goal = qp.selectedItems[0]?.label ?? qp.value;
      const bad = validateGoal(goal);
      if (bad) {
        qp.placeholder = bad; // QuickPick has no validation message in VS Code 1.82
        return;
      }
      done = true;
      resolve(goal);
      qp.hide();
    });
    qp.onDidHide(() => {
      if (!done) resolve(undefined);
      qp.dispose();
    });
    qp.show();
  });
}

/**
 * Opens the Settings editor on a setting, in the scope where it lives: a
 * machine-scoped setting (fixpoint.path, .model, .baseUrl, .sandbox) in a
 * remote window (code-server, SSH, containers) is in the Remote tab, where
 * the User tab would say "No Settings Found".
 */
async function openSetting(key: string): Promise<void> {
  if (vscode.env.remoteName && isMachineSetting(key)) {
    const cmds = await vscode.commands.getCommands(true);
    if (cmds.includes('workbench.action.openRemoteSettings')) {
      await vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query: key });
      return;
    }
  }
  await vscode.commands.executeCommand('workbench.action.openSettings', key);
}

/** A changed file's URI: absolute, or the first workspace folder holding it. */
function resolveFile(p: string): vscode.Uri | undefined {
  if (path.isAbsolute(p)) return vscode.Uri.file(p);
  const folders = vscode.workspace.workspaceFolders ?? [];
  for (const f of folders) {
    const full = path.join(f.uri.fsPath, p);
    try {
      if (statSync(full).isFile()) return vscode.Uri.file(full);
    } catch {
      // not in this folder
    }
  }
  return folders[0] ? vscode.Uri.file(path.join(folders[0].uri.fsPath, p)) : undefined;
}

function dropUndefined(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined));
}

function isExecutable(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

let ext: Extension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  ext = new Extension(context);
  ext.register();
  await ext.start();
}

export async function deactivate(): Promise<void> {
  await ext?.stop();
  ext = undefined;
}
