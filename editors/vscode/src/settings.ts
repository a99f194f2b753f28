// Settings: maps the fixpoint.* VS Code settings to what the server reads
// (initializationOptions and workspace/configuration section "fixpoint").
// No vscode import: the getter is injected.

/** Every setting the extension contributes, without the "fixpoint." prefix. */
export const SETTING_KEYS = ['path', 'model', 'baseUrl', 'sandbox', 'maxIterations', 'preview', 'trace.server'] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];

/** The extension's settings, as read. */
export interface Settings {
  path: string;
  model: string;
  baseUrl: string;
  sandbox: string;
  maxIterations: number;
  /** always: VS Code's refactor preview shows a verified edit before it lands; never: it lands at once. */
  preview: 'always' | 'never';
  traceServer: 'off' | 'messages' | 'verbose';
}

/** What the server reads: the keys of config.Config's JSON form. Empty values are omitted. */
export interface ServerSettings {
  model?: string;
  baseUrl?: string;
  sandbox?: string;
  maxIterations?: number;
  preview: 'always' | 'never';
}

/** Reads every setting through get (e.g. workspace.getConfiguration('fixpoint').get). */
export function readSettings(get: (key: SettingKey) => unknown): Settings {
  const str = (k: SettingKey) => {
    const v = get(k);
    return typeof v === 'string' ? v.trim() : '';
  };
  const n = Number(get('maxIterations'));
  const trace = str('trace.server');
  return {
    path: str('path') || 'fixpoint',
    model: str('model'),
    baseUrl: str('baseUrl'),
    sandbox: str('sandbox'),
    maxIterations: Number.isInteger(n) && n > 0 ? n : 0,
    preview: str('preview') === 'never' ? 'never' : 'always',
    traceServer: trace === 'messages' || trace === 'verbose' ? trace : 'off',
  };
}

/**
 * Maps settings to the server's keys. Unset values are left out so that the
 * server's lower layers (env, .fixpoint.toml, defaults) still apply; path and
 * trace belong to the client and are never sent. preview is always sent.
 */
export function serverSettings(s: Settings): ServerSettings {
  const out: ServerSettings = { preview: s.preview };
  if (s.model) out.model = s.model;
  if (s.baseUrl) out.baseUrl = s.baseUrl;
  if (s.sandbox) out.sandbox = s.sandbox;
  if (s.maxIterations > 0) out.maxIterations = s.maxIterations;
  return out;
}

/** Answers a workspace/configuration request: one entry per item, the fixpoint section mapped. */
export function configurationResponse(items: { section?: string }[], s: Settings): unknown[] {
  const mapped = serverSettings(s);
  return items.map((it) => {
    if (it.section === 'fixpoint') return mapped;
    if (it.section?.startsWith('fixpoint.')) {
      return (mapped as unknown as Record<string, unknown>)[it.section.slice('fixpoint.'.length)] ?? null;
    }
    return null;
  });
}

/** Settings whose change needs the server process restarted (not just didChangeConfiguration). */
export function needsRestart(a: Settings, b: Settings): boolean {
  return a.path !== b.path;
}

/** Settings whose scope is "machine" (package.json): in a remote window they live in the remote machine's settings. */
export const MACHINE_SETTINGS: readonly string[] = ['path', 'model', 'baseUrl', 'sandbox', 'preview'];

/** Whether "fixpoint.<key>" (or the bare key) is machine-scoped. */
export function isMachineSetting(key: string): boolean {
  return MACHINE_SETTINGS.includes(key.replace(/^fixpoint\./, ''));
}
