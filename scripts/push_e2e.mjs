// The Node SDK (unleash-client, from npm) in streaming mode and in delta-polling mode
// against the server (`toggle-admin serve`). Run by scripts/push-e2e.sh with:
//   SERVER   the `toggle-admin` binary
//   ADMIN_KEY the bootstrap admin key
//   STORAGE  "memory" (one instance), "data:<dir>" (one instance, restarted once) or
//            "postgres:<url>:<schema>" (two instances over one schema: changes through A,
//            SDKs on B)
// Checks: the SDKs hydrate; every kind of change (a toggle, a variants PATCH, a strategy, a
// segment, an archive) reaches a streaming SDK on the instance that made it within 100 ms
// of the admin call's answer; a flag toggled and a variant patched arrive at SDKs on
// another instance (streaming within 1 s); an archived flag disappears; after a server
// restart the streaming SDK reconnects and resumes (one instance).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { once } from 'node:events';

const require = createRequire(process.env.NODE_MODULES_DIR + '/');
const { Unleash } = require('unleash-client');

const SERVER = process.env.SERVER;
const ADMIN_KEY = process.env.ADMIN_KEY;
const STORAGE = process.env.STORAGE;
const ENV = 'development';
const FEATURE = 'push.e2e';
const STREAM_LIMIT_MS = 1000;
// Each kind of change, on the instance that made it, from the admin call's answer.
const KIND_LIMIT_MS = 100;
const KINDS_FEATURE = 'push.kinds';

function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exit(1);
}

/** Start a server instance; resolves with { base, child } once it listens. */
async function startServer(args) {
  const child = spawn(SERVER, ['serve', ...args], {
    env: { ...process.env, TOGGLE_ADMIN_BOOTSTRAP_KEY: ADMIN_KEY, RUST_LOG: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const base = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/listening on (http:\/\/\S+)/);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return { base, child };
}

async function stopServer(server) {
  server.child.kill('SIGTERM');
  await once(server.child, 'exit');
}

async function call(base, method, path, body, extraHeaders = {}) {
  const response = await fetch(base + path, {
    method,
    headers: {
      Authorization: ADMIN_KEY,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...extraHeaders,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) fail(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Wait until `predicate()` holds; the time it took in ms. */
async function until(what, predicate, limitMs = 20000) {
  const started = performance.now();
  while (!predicate()) {
    if (performance.now() - started > limitMs) fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return performance.now() - started;
}

function sdk(base, token, mode, appName) {
  const client = new Unleash({
    url: `${base}/api/`,
    appName,
    customHeaders: { Authorization: token },
    disableMetrics: true,
    refreshInterval: mode.type === 'polling' ? 250 : 15000,
    experimentalMode: mode,
  });
  client.on('error', (e) => console.error(`${appName}: ${e}`));
  client.on('warn', (w) => console.error(`${appName} warn: ${w}`));
  return client;
}

async function ready(client) {
  await new Promise((resolve) => {
    if (client.isSynchronized?.()) return resolve();
    client.once('synchronized', resolve);
  });
}

const variantPath = `/api/admin/projects/default/features/${FEATURE}/environments/${ENV}/variants`;
const onPath = `/api/admin/projects/default/features/${FEATURE}/environments/${ENV}/on`;
const offPath = `/api/admin/projects/default/features/${FEATURE}/environments/${ENV}/off`;

/** The checks, changes made through `writer`, SDKs on `reader`. */
async function scenario(writer, reader, label) {
  const token = (
    await call(writer, 'POST', '/api/admin/api-tokens', {
      tokenName: `push-e2e-${label}`,
      type: 'client',
      projects: ['default'],
      environment: ENV,
    })
  ).secret;
  await call(writer, 'POST', '/api/admin/projects/default/features', { name: FEATURE });
  const streaming = sdk(reader, token, { type: 'streaming' }, `push-e2e-streaming-${label}`);
  const delta = sdk(reader, token, { type: 'polling', format: 'delta' }, `push-e2e-delta-${label}`);
  await Promise.all([ready(streaming), ready(delta)]);
  for (const [name, client] of [['streaming', streaming], ['delta', delta]]) {
    if (!client.getFeatureToggleDefinition(FEATURE)) fail(`${label} ${name}: not hydrated`);
    if (client.isEnabled(FEATURE)) fail(`${label} ${name}: enabled before being turned on`);
  }
  // Toggled on.
  await call(writer, 'POST', onPath);
  const toggled = await until(`${label}: streaming sees the toggle`, () => streaming.isEnabled(FEATURE));
  if (toggled > STREAM_LIMIT_MS) fail(`${label}: the toggle took ${toggled} ms to stream`);
  await until(`${label}: delta sees the toggle`, () => delta.isEnabled(FEATURE));
  console.log(`${label}: toggle streamed in ${toggled.toFixed(1)} ms`);
  // A variant patched.
  await call(writer, 'PATCH', variantPath, [
    { op: 'add', path: '/0', value: { name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' } },
  ]);
  const patched = await until(`${label}: streaming sees the variant`, () => streaming.getVariant(FEATURE).name === 'blue');
  if (patched > STREAM_LIMIT_MS) fail(`${label}: the variant took ${patched} ms to stream`);
  await until(`${label}: delta sees the variant`, () => delta.getVariant(FEATURE).name === 'blue');
  console.log(`${label}: variant streamed in ${patched.toFixed(1)} ms`);
  return { token, streaming, delta };
}

/**
 * Every kind of change made through `base` reaches a streaming SDK on `base` within
 * KIND_LIMIT_MS of the admin call's answer.
 */
async function kinds(base, token, label) {
  const streaming = sdk(base, token, { type: 'streaming' }, `push-e2e-kinds-${label}`);
  await ready(streaming);
  const path = `/api/admin/projects/default/features/${KINDS_FEATURE}`;
  const envPath = `${path}/environments/${ENV}`;
  const timed = async (what, change, seen) => {
    const answer = await change();
    const took = await until(`${label}: streaming sees ${what}`, () => seen(answer));
    if (took > KIND_LIMIT_MS) fail(`${label}: ${what} took ${took.toFixed(1)} ms to stream (limit ${KIND_LIMIT_MS} ms)`);
    console.log(`${label}: ${what} streamed in ${took.toFixed(1)} ms`);
  };
  const definition = () => streaming.getFeatureToggleDefinition(KINDS_FEATURE);
  await timed('a new flag', () => call(base, 'POST', '/api/admin/projects/default/features', { name: KINDS_FEATURE }), () => definition());
  await timed('a toggle', () => call(base, 'POST', `${envPath}/on`), () => streaming.isEnabled(KINDS_FEATURE));
  await timed(
    'a variants PATCH',
    () => call(base, 'PATCH', `${envPath}/variants`, [
      { op: 'add', path: '/0', value: { name: 'green', weight: 1000, weightType: 'variable', stickiness: 'default' } },
    ]),
    () => streaming.getVariant(KINDS_FEATURE).name === 'green',
  );
  const strategy = { name: 'flexibleRollout', parameters: { rollout: '0', stickiness: 'default', groupId: KINDS_FEATURE } };
  let added;
  await timed(
    'a strategy',
    async () => (added = await call(base, 'POST', `${envPath}/strategies`, strategy)),
    () => (definition()?.strategies ?? []).some((s) => s.name === 'flexibleRollout'),
  );
  const segment = await call(base, 'POST', '/api/admin/segments', {
    name: `push-kinds-${label.replace(/\W/g, '-')}`,
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }],
  });
  await timed(
    'a segment',
    () => call(base, 'PUT', `${envPath}/strategies/${added.id}`, { ...strategy, segments: [segment.id] }),
    () => streaming.repository.getSegment(segment.id) !== undefined,
  );
  await timed('an archive', () => call(base, 'DELETE', path), () => !definition());
  streaming.destroy();
}

async function archived(writer, clients, label) {
  await call(writer, 'DELETE', `/api/admin/projects/default/features/${FEATURE}`);
  for (const [name, client] of Object.entries(clients)) {
    await until(`${label} ${name}: the archived flag disappears`, () => !client.getFeatureToggleDefinition(FEATURE));
  }
  console.log(`${label}: archived flag gone from both SDKs`);
}

if (STORAGE === 'memory') {
  const server = await startServer(['--memory', '--addr', '127.0.0.1:0']);
  const { token, streaming, delta } = await scenario(server.base, server.base, 'memory');
  await kinds(server.base, token, 'memory');
  streaming.destroy();
  delta.destroy();
  await stopServer(server);
} else if (STORAGE.startsWith('data:')) {
  const dir = STORAGE.slice('data:'.length);
  let server = await startServer(['--data', dir, '--addr', '127.0.0.1:0']);
  const base = server.base;
  const { token, streaming, delta } = await scenario(base, base, 'one instance');
  await kinds(base, token, 'file store');
  // Restart on the same address: the streaming SDK reconnects (Last-Event-ID) and resumes.
  await stopServer(server);
  const addr = base.replace('http://', '');
  server = await startServer(['--data', dir, '--addr', addr]);
  await new Promise((r) => setTimeout(r, 100));
  await call(base, 'POST', offPath);
  await until('after a restart: streaming sees the change', () => !streaming.isEnabled(FEATURE), 30000);
  await until('after a restart: delta sees the change', () => !delta.isEnabled(FEATURE), 30000);
  console.log('one instance: changes after a restart arrive');
  await archived(base, { streaming, delta }, 'one instance');
  streaming.destroy();
  delta.destroy();
  await stopServer(server);
} else if (STORAGE.startsWith('postgres:')) {
  const rest = STORAGE.slice('postgres:'.length);
  const cut = rest.lastIndexOf(':');
  const url = rest.slice(0, cut);
  const schema = rest.slice(cut + 1);
  const args = ['--postgres', url, '--postgres-schema', schema, '--addr', '127.0.0.1:0'];
  const a = await startServer(args);
  const b = await startServer(args);
  const { token, streaming, delta } = await scenario(a.base, b.base, 'two instances');
  await kinds(a.base, token, 'postgres');
  await archived(a.base, { streaming, delta }, 'two instances');
  streaming.destroy();
  delta.destroy();
  await stopServer(a);
  await stopServer(b);
} else {
  fail(`unknown STORAGE ${STORAGE}`);
}
console.log('push e2e passed');
process.exit(0);
