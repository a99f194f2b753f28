import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INSTALL_COMMAND, doctorNotice, missingBinaryNotice, parseDoctor, resolveBinary } from '../src/doctor';

test('parseDoctor', () => {
  const cases: { name: string; in: string; want: ReturnType<typeof parseDoctor> }[] = [
    {
      // What `fixpoint doctor --json` prints.
      name: 'doctor object',
      in: `{
  "ok": false,
  "checks": [
    {"name": "docker engine", "status": "fail", "detail": "no engine answers", "fix": "start Docker: sudo systemctl start docker"},
    {"name": "fixpoint-sandbox-node", "status": "warn", "detail": "missing", "fix": "fixpoint sandbox images build --lang node"},
    {"name": "model endpoint", "status": "info", "detail": "no model configured"},
    {"name": "bwrap", "status": "ok", "detail": ""}
  ]
}`,
      want: [
        { name: 'docker engine', status: 'fail', detail: 'no engine answers', fix: 'start Docker: sudo systemctl start docker' },
        { name: 'fixpoint-sandbox-node', status: 'warn', detail: 'missing', fix: 'fixpoint sandbox images build --lang node' },
        { name: 'model endpoint', status: 'info', detail: 'no model configured', fix: undefined },
        { name: 'bwrap', status: 'ok', detail: undefined, fix: undefined },
      ],
    },
    {
      name: 'bare array with ok booleans',
      in: '[{"name":"docker","ok":false},{"name":"binary","ok":true}]',
      want: [
        { name: 'docker', status: 'fail', detail: undefined, fix: undefined },
        { name: 'binary', status: 'ok', detail: undefined, fix: undefined },
      ],
    },
    { name: 'unknown status', in: '{"checks":[{"name":"x","status":"weird"}]}', want: [{ name: 'x', status: 'fail', detail: undefined, fix: undefined }] },
    { name: 'not json', in: 'unknown command "doctor"', want: undefined },
    { name: 'wrong shape', in: '[{"ok":true}]', want: undefined },
    { name: 'scalar', in: '42', want: undefined },
  ];
  for (const c of cases) assert.deepEqual(parseDoctor(c.in), c.want, c.name);
});

test('doctorNotice', () => {
  assert.equal(
    doctorNotice([
      { name: 'docker', status: 'ok' },
      { name: 'fixpoint-sandbox-node', status: 'warn', detail: 'missing' },
      { name: 'model endpoint', status: 'info' },
    ]),
    undefined,
  );
  const n = doctorNotice([
    { name: 'docker', status: 'fail', detail: 'no engine answers', fix: 'start Docker: sudo systemctl start docker' },
    { name: 'model endpoint', status: 'fail', detail: '401 Unauthorized', fix: 'set FIXPOINT_API_KEY' },
    { name: 'binary', status: 'ok' },
    { name: 'fixpoint-sandbox-node', status: 'warn', detail: 'missing' },
  ]);
  assert.ok(n);
  assert.equal(n.severity, 'warning');
  assert.equal(
    n.message,
    'fixpoint doctor: 2 checks failed. docker: no engine answers — fix: start Docker: sudo systemctl start docker; ' +
      'model endpoint: 401 Unauthorized — fix: set FIXPOINT_API_KEY',
  );
  assert.deepEqual(
    n.actions.map((a) => a.command),
    ['fixpoint.setApiKey', 'fixpoint.showOutput'],
  );
  // No engine answering: the language server's own notice says it once.
  assert.equal(
    doctorNotice([{ name: 'docker engine', status: 'fail', detail: 'not answering at unix:///var/run/docker.sock', fix: 'install and start it' }]),
    undefined,
  );
  const one = doctorNotice([{ name: 'bwrap', status: 'fail', fix: 'apt-get install bubblewrap' }]);
  assert.equal(one?.message, 'fixpoint doctor: 1 check failed. bwrap — fix: apt-get install bubblewrap');
  assert.deepEqual(one?.actions.map((a) => a.title), ['Show Output']);
});

test('missingBinaryNotice names the fix', () => {
  const onPath = missingBinaryNotice('fixpoint');
  assert.equal(onPath.severity, 'error');
  assert.ok(onPath.message.includes('not found on PATH'));
  assert.ok(onPath.message.includes(INSTALL_COMMAND));
  assert.deepEqual(onPath.actions[0], { title: 'Copy Install Command', copy: INSTALL_COMMAND });
  assert.deepEqual(onPath.actions[1].args, ['fixpoint.path']);
  assert.ok(missingBinaryNotice('/opt/fp').message.includes('at "/opt/fp"'));
});

test('resolveBinary', () => {
  const exists = new Set(['/usr/local/bin/fixpoint', '/opt/fp']);
  const isExec = (p: string) => exists.has(p);
  assert.equal(resolveBinary('fixpoint', '/usr/bin::/usr/local/bin/', isExec), '/usr/local/bin/fixpoint');
  assert.equal(resolveBinary('fixpoint', '/usr/bin', isExec), undefined);
  assert.equal(resolveBinary('/opt/fp', '', isExec), '/opt/fp');
  assert.equal(resolveBinary('./fp', '/usr/local/bin', isExec), undefined);
});

test('doctorNotice: a detail quoting the project shows no link', () => {
  const n = doctorNotice([{ name: 'project', status: 'fail', detail: '/w/[x](command:evil): python', fix: '' }]);
  assert.ok(n && !n.message.includes(']('), n?.message);
});
