// OpenFeature's OFREP providers for JavaScript against the server, run by scripts/ofrep-e2e.sh
// with BASE, ADMIN_KEY, FRONTEND_KEY, CLIENT_KEY and NODE_PATH (the installed packages).
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const require = createRequire(`${process.env.NODE_PATH}/`);
// Browsers have EventSource; Node 20 has not: the polyfill stands in for it.
globalThis.EventSource = require('eventsource').EventSource;
const web = require('@openfeature/web-sdk');
const { OFREPWebProvider } = require('@openfeature/ofrep-web-provider');
const server = require('@openfeature/server-sdk');
const { OFREPProvider } = require('@openfeature/ofrep-provider');

const { BASE, ADMIN_KEY, FRONTEND_KEY, CLIENT_KEY } = process.env;
let failures = 0;
let passed = 0;
async function check(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (error) {
    failures += 1;
    console.log(`FAIL ${name}: ${error.message}`);
  }
}

function expectDetails(details, value, variant, reason) {
  assert.deepEqual(details.value, value);
  assert.equal(details.variant, variant);
  assert.equal(details.reason, reason);
  assert.equal(details.errorCode, undefined, `error ${details.errorCode}: ${details.errorMessage}`);
}

async function admin(method, path) {
  const answer = await fetch(`${BASE}${path}`, { method, headers: { Authorization: ADMIN_KEY } });
  assert.ok(answer.ok, `${method} ${path}: ${answer.status}`);
}

// --- the web provider: one bulk evaluation, then changes pushed through its stream.
web.OpenFeature.setContext({ targetingKey: 'u1' });
await web.OpenFeature.setProviderAndWait(
  new OFREPWebProvider({ baseUrl: BASE, headers: [['Authorization', FRONTEND_KEY]] }),
);
const client = web.OpenFeature.getClient();

await check('web: a constraint and a rollout at 100 % for u1: TARGETING_MATCH', () =>
  expectDetails(client.getBooleanDetails('on', false), true, 'enabled', 'TARGETING_MATCH'));
await check('web: on for everyone: STATIC', () =>
  expectDetails(client.getBooleanDetails('everyone', false), true, 'enabled', 'STATIC'));
await check('web: disabled', () =>
  expectDetails(client.getBooleanDetails('off', true), false, 'disabled', 'DISABLED'));
await check('web: a string payload', () =>
  expectDetails(client.getStringDetails('text', 'x'), 'hello', 'v1', 'SPLIT'));
await check('web: a csv payload is a string', () =>
  expectDetails(client.getStringDetails('csv', 'x'), 'a,b,c', 'v1', 'SPLIT'));
await check('web: an integer payload', () =>
  expectDetails(client.getNumberDetails('int', 0), 42, 'v1', 'SPLIT'));
await check('web: a fraction payload', () =>
  expectDetails(client.getNumberDetails('float', 0), 2.5, 'v1', 'SPLIT'));
await check('web: a json payload is an object', () =>
  expectDetails(client.getObjectDetails('object', {}), { color: 'red', sizes: [1, 2] }, 'v1', 'SPLIT'));
await check('web: a variant without a payload is true', () =>
  expectDetails(client.getBooleanDetails('bare', false), true, 'v1', 'SPLIT'));
await check('web: a 50 % rollout is a boolean either way', () => {
  const details = client.getBooleanDetails('half', false);
  assert.ok(['TARGETING_MATCH', 'DISABLED'].includes(details.reason), details.reason);
});
await check('web: a missing flag: FLAG_NOT_FOUND, the default', () => {
  const details = client.getBooleanDetails('missing', true);
  assert.equal(details.value, true);
  assert.equal(details.errorCode, 'FLAG_NOT_FOUND');
});
await check('web: a flag of another project: FLAG_NOT_FOUND', () =>
  assert.equal(client.getBooleanDetails('hidden', false).errorCode, 'FLAG_NOT_FOUND'));
await check('web: a string asked for as a number: TYPE_MISMATCH', () => {
  const details = client.getNumberDetails('text', 7);
  assert.equal(details.value, 7);
  assert.equal(details.errorCode, 'TYPE_MISMATCH');
});
await check('web: a change is pushed through the stream', async () => {
  const changed = new Promise((resolve) =>
    client.addHandler(web.ProviderEvents.ConfigurationChanged, resolve));
  const started = Date.now();
  await admin('POST', '/api/admin/projects/default/features/off/environments/development/on');
  await Promise.race([
    changed,
    new Promise((_, reject) => setTimeout(() => reject(new Error('no change within 5 s')), 5000)),
  ]);
  console.log(`     (the change arrived after ${Date.now() - started} ms)`);
  expectDetails(client.getBooleanDetails('off', false), true, 'enabled', 'STATIC');
});
await check('web: a new context is evaluated anew', async () => {
  await web.OpenFeature.setContext({ targetingKey: 'u3' });
  expectDetails(client.getBooleanDetails('on', true), false, 'disabled', 'DISABLED');
});
await web.OpenFeature.close();

// --- the server provider: one request per evaluation.
await server.OpenFeature.setProviderAndWait(
  new OFREPProvider({ baseUrl: BASE, headers: [['Authorization', CLIENT_KEY]] }),
);
const backend = server.OpenFeature.getClient();
const u1 = { targetingKey: 'u1' };
await check('server: TARGETING_MATCH for u1', async () =>
  expectDetails(await backend.getBooleanDetails('on', false, u1), true, 'enabled', 'TARGETING_MATCH'));
await check('server: DISABLED for u3', async () =>
  expectDetails(await backend.getBooleanDetails('on', true, { targetingKey: 'u3' }), false, 'disabled', 'DISABLED'));
await check('server: a string', async () =>
  expectDetails(await backend.getStringDetails('text', 'x', u1), 'hello', 'v1', 'SPLIT'));
await check('server: numbers', async () => {
  expectDetails(await backend.getNumberDetails('int', 0, u1), 42, 'v1', 'SPLIT');
  expectDetails(await backend.getNumberDetails('float', 0, u1), 2.5, 'v1', 'SPLIT');
});
await check('server: an object', async () =>
  expectDetails(await backend.getObjectDetails('object', {}, u1), { color: 'red', sizes: [1, 2] }, 'v1', 'SPLIT'));
await check('server: missing and out of scope: FLAG_NOT_FOUND', async () => {
  for (const name of ['missing', 'hidden']) {
    const details = await backend.getBooleanDetails(name, true, u1);
    assert.equal(details.errorCode, 'FLAG_NOT_FOUND', name);
    assert.equal(details.value, true);
  }
});
await check('server: a type mismatch', async () =>
  assert.equal((await backend.getBooleanDetails('text', false, u1)).errorCode, 'TYPE_MISMATCH'));
await server.OpenFeature.close();

console.log(`${passed} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
