// The VS Code side of fixpoint: a thin client for `fixpoint serve`. All the
// logic a test can reach lives in the vscode-free modules beside this file
// (status, goals, settings, doctor); this file only wires them to VS Code.
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ProgressType,
  type ProgressToken,
  type ServerOptions,
  Trace,
} from 'vscode-languageclient/node';
import { COMMAND_IDS, type CommandId, SERVER_COMMANDS } from './commands';
import { type Notice, doctorNotice, missingBinaryNotice, parseDoctor, resolveBinary } from './doctor';
import { rememberGoal, validateGoal } from './goals';
import { configurationResponse, needsRestart, readSettings, serverSettings, type Settings } from './settings';
import { IDLE, type ProgressValue, type Status, clickCommand, nextStatus } from './status';

const SECRET_KEY = 'fixpoint.apiKey';
const RECENT_GOALS_KEY = 'fixpoint.recentGoals';

type ProgressTap = (token: ProgressToken, value: ProgressValue) => void;

/** A LanguageClient that lets the extension watch work-done progress without replacing VS Code's own UI for it. */
class FixpointClient extends LanguageClient {
  constructor(id: string, name: string, server: ServerOptions, client: LanguageClientOptions, private readonly tap: ProgressTap) {
    super(id, name, server, client);
  }
  override onProgress<P>(type: ProgressType<P>, token: ProgressToken, handler: (params: P) => void): vscode.Disposable {
    return super.onProgress(type, token, (value: P) => {
      try {
        this.tap(token, value as unknown as ProgressValue);
      } finally {
        handler(value);
      }
    });
  }
}

class Extension {
  private client: FixpointClient | undefined;
  private settings: Settings;
  private status: Status = IDLE;
  private readonly titles = new Map<ProgressToken, string>();
  private readonly output: vscode.OutputChannel;
  private readonly bar: vscode.StatusBarItem;

  constructor(private readonly ctx: vscode.ExtensionContext) {
    this.settings = Extension.read();
    this.output = vscode.window.createOutputChannel('fixpoint');
    this.bar = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
    ctx.subscriptions.push(this.output, this.bar);
    this.show(IDLE);
    this.bar.show();
  }

  static read(): Settings {
    const cfg = vscode.workspace.getConfiguration('fixpoint');
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
    };
  }

  register(): void {
    const handlers = this.handlers();
    for (const id of COMMAND_IDS) {
      this.ctx.subscriptions.push(vscode.commands.registerCommand(id, handlers[id]));
    }
    this.ctx.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => this.configChanged(e)));
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
      this.show({ kind: 'failed', text: '$(error) fixpoint: not installed', tooltip: 'fixpoint: binary not found' });
      void this.notify(missingBinaryNotice(this.settings.path));
      return;
    }
    const env = await this.serverEnv();
    const serverOptions: ServerOptions = { command: bin, args: ['serve'], options: { env } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
      initializationOptions: serverSettings(this.settings),
      middleware: {
        workspace: {
          configuration: (params) => configurationResponse(params.items, this.settings),
        },
      },
    };
    this.client = new FixpointClient('fixpoint', 'fixpoint', serverOptions, clientOptions, (t, v) => this.progress(t, v));
    try {
      await this.client.start();
      await this.client.setTrace(Trace.fromString(this.settings.traceServer));
    } catch (err) {
      this.output.appendLine(`fixpoint serve failed to start: ${String(err)}`);
      this.show({ kind: 'failed', text: '$(error) fixpoint: server failed', tooltip: String(err) });
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
    this.show(IDLE);
    await this.start();
  }

  /** The server's environment: ours plus the key from SecretStorage (never from settings.json). */
  private async serverEnv(): Promise<NodeJS.ProcessEnv> {
    const env = { ...process.env };
    const key = await this.ctx.secrets.get(SECRET_KEY);
    if (key) env.FIXPOINT_API_KEY = key;
    return env;
  }

  private progress(token: ProgressToken, value: ProgressValue): void {
    if (value.kind === 'begin' && value.title) this.titles.set(token, value.title);
    this.show(nextStatus(this.status, value, this.titles.get(token)));
    if (value.kind === 'end') this.titles.delete(token);
    if (value.message) this.output.appendLine(`[progress] ${value.message}`);
  }

  private show(s: Status): void {
    this.status = s;
    this.bar.text = s.text;
    this.bar.tooltip = s.tooltip;
    this.bar.command = clickCommand(s);
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
      execFile(bin, ['doctor', '--json'], { env, timeout: 60_000 }, (err, stdout, stderr) => {
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
    if (a.command) await vscode.commands.executeCommand(a.command, ...(a.args ?? []));
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
