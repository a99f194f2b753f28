import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SETTING_KEYS, type SettingKey, configurationResponse, needsRestart, readSettings, serverSettings } from '../src/settings';

const getter = (vals: Partial<Record<SettingKey, unknown>>) => (k: SettingKey) => vals[k];

test('readSettings defaults and cleans values', () => {
  assert.deepEqual(readSettings(getter({})), {
    path: 'fixpoint',
    model: '',
    baseUrl: '',
    sandbox: '',
    maxIterations: 0,
    preview: 'always',
    traceServer: 'off',
  });
  assert.deepEqual(
    readSettings(
      getter({
        path: ' /opt/fp ',
        model: 'qwen2.5-coder',
        baseUrl: 'http://localhost:11434/v1',
        sandbox: 'bwrap',
        maxIterations: 4,
        preview: 'never',
        'trace.server': 'verbose',
      }),
    ),
    {
      path: '/opt/fp',
      model: 'qwen2.5-coder',
      baseUrl: 'http://localhost:11434/v1',
      sandbox: 'bwrap',
      maxIterations: 4,
      preview: 'never',
      traceServer: 'verbose',
    },
  );
  const bad = readSettings(getter({ maxIterations: 2.5, 'trace.server': 'loud', model: 42, preview: 'sometimes' }));
  assert.equal(bad.preview, 'always', 'an unknown preview value keeps the preview');
  assert.equal(bad.maxIterations, 0);
  assert.equal(bad.traceServer, 'off');
  assert.equal(bad.model, '');
});

test('readSettings reads every key', () => {
  const read = new Set<string>();
  readSettings((k) => {
    read.add(k);
    return undefined;
  });
  assert.deepEqual([...read].sort(), [...SETTING_KEYS].sort());
});

test('serverSettings maps to the server keys and leaves out unset values', () => {
  const cases: { name: string; in: Partial<Record<SettingKey, unknown>>; want: object }[] = [
    { name: 'nothing set: preview is always sent', in: { path: '/x/fixpoint', 'trace.server': 'verbose' }, want: { preview: 'always' } },
    {
      name: 'all set',
      in: { model: 'gpt-4o', baseUrl: 'https://example.test/v1', sandbox: 'docker', maxIterations: 3, preview: 'never' },
      want: { preview: 'never', model: 'gpt-4o', baseUrl: 'https://example.test/v1', sandbox: 'docker', maxIterations: 3 },
    },
    { name: 'zero iterations means server default', in: { maxIterations: 0, sandbox: 'none' }, want: { preview: 'always', sandbox: 'none' } },
  ];
  for (const c of cases) assert.deepEqual(serverSettings(readSettings(getter(c.in))), c.want, c.name);
});

test('configurationResponse answers each item', () => {
  const s = readSettings(getter({ model: 'm', maxIterations: 2 }));
  assert.deepEqual(
    configurationResponse([{ section: 'fixpoint' }, { section: 'fixpoint.model' }, { section: 'fixpoint.preview' }, { section: 'editor' }, {}], s),
    [{ preview: 'always', model: 'm', maxIterations: 2 }, 'm', 'always', null, null],
  );
});

test('needsRestart only for the binary path', () => {
  const a = readSettings(getter({}));
  assert.equal(needsRestart(a, readSettings(getter({ model: 'x' }))), false);
  assert.equal(needsRestart(a, readSettings(getter({ path: '/bin/other' }))), true);
});
