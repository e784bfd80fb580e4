// The browser SDK `unleash-proxy-client` (from npm; Node 20's global fetch) against the
// server's frontend API. Run by scripts/frontend-e2e.sh with BASE (http://host:port) and
// ADMIN_KEY set.
//
// Sets flags through the admin API (a gradual rollout at 100 % and at 0 %, a constraint on a
// property, strategy variants chosen by a constraint), creates a frontend key, starts the
// SDK with one context, checks what it evaluates, switches to a second context with
// `updateContext` (which refetches), checks again, counts `isEnabled` calls, sends the
// metrics and checks that the counts reach the admin API. Exits non-zero on any mismatch.

const { UnleashClient, InMemoryStorageProvider } = require('unleash-proxy-client');

const BASE = process.env.BASE;
// Where the SDK connects: the server itself, or an Unleash Edge in front of it
// (scripts/edge-e2e.sh), which then forwards the metrics in its own time.
const SDK_BASE = process.env.SDK_BASE || BASE;
const METRICS_WAIT_SECONDS = Number(process.env.METRICS_WAIT_SECONDS || 0);
const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });
const ADMIN_KEY = process.env.ADMIN_KEY;
const ENV = 'development';
const APP = 'frontend-e2e';
let failed = false;

async function call(method, path, body, key = ADMIN_KEY) {
  const response = await fetch(BASE + path, {
    method,
    headers: body === undefined
      ? { Authorization: key }
      : { Authorization: key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`${method} ${path}: ${response.status} ${text}`);
  }
  return text ? JSON.parse(text) : null;
}

async function feature(name, strategies) {
  await call('POST', '/api/admin/projects/default/features', { name });
  const base = `/api/admin/projects/default/features/${name}/environments/${ENV}`;
  for (const strategy of strategies) {
    await call('POST', `${base}/strategies`, strategy);
  }
  await call('POST', `${base}/on`);
}

function check(what, actual, expected) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  const ok = a === e;
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}: ${a}${ok ? '' : ` (expected ${e})`}`);
  if (!ok) failed = true;
}

async function main() {
  await call('POST', '/api/admin/context', { name: 'plan' });
  await feature('fe.rollout', [{
    name: 'flexibleRollout',
    parameters: { rollout: '100', stickiness: 'userId', groupId: 'fe.rollout' },
  }]);
  await feature('fe.rollout-zero', [{
    name: 'flexibleRollout',
    parameters: { rollout: '0', stickiness: 'userId', groupId: 'fe.rollout-zero' },
  }]);
  await feature('fe.constraint', [{
    name: 'default',
    constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
  }]);
  const variant = (name, value) => ({
    name, weight: 1000, weightType: 'variable', stickiness: 'default',
    payload: { type: 'string', value },
  });
  await feature('fe.variant', [
    {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'fe.variant' },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['bob'] }],
      variants: [variant('blue', 'for bob')],
    },
    {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'fe.variant' },
      variants: [variant('red', 'for everyone else')],
    },
  ]);
  const key = await call('POST', '/api/admin/api-tokens', {
    tokenName: 'frontend-e2e', type: 'frontend', environment: ENV,
  });
  check('frontend key listed as', key.type, 'frontend');
  if (SDK_BASE !== BASE) {
    // Edge reads the flags in the background (every 5 s at the least, whatever
    // --features-refresh-interval-seconds says): wait until it has them.
    const deadline = Date.now() + 30000;
    for (;;) {
      const answer = await fetch(`${SDK_BASE}/api/frontend?userId=alice`, {
        headers: { Authorization: key.secret },
      });
      const names = answer.ok ? (await answer.json()).toggles.map((t) => t.name) : [];
      if (names.includes('fe.rollout')) break;
      if (Date.now() > deadline) throw new Error('Edge did not get the flags within 30 s');
      await sleep(250);
    }
  }

  const client = new UnleashClient({
    url: `${SDK_BASE}/api/frontend`,
    clientKey: key.secret,
    appName: APP,
    environment: ENV,
    context: { userId: 'alice', properties: { plan: 'pro' } },
    storageProvider: new InMemoryStorageProvider(),
    refreshInterval: 0,
    disableRefresh: true,
    metricsInterval: 3600,
    metricsIntervalInitial: 3600,
    fetch: globalThis.fetch,
  });
  let errors = 0;
  client.on('error', (e) => { errors += 1; console.error('SDK error', e); });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the SDK was not ready in 10 s')), 10000);
    client.on('ready', () => { clearTimeout(timer); resolve(); });
    client.start();
  });

  const look = () => ({
    rollout: client.isEnabled('fe.rollout'),
    rolloutZero: client.isEnabled('fe.rollout-zero'),
    constraint: client.isEnabled('fe.constraint'),
    variant: (({ name, enabled, payload }) => ({ name, enabled, payload }))(client.getVariant('fe.variant')),
    unknown: client.isEnabled('fe.unknown'),
  });
  check('alice (plan pro)', look(), {
    rollout: true, rolloutZero: false, constraint: true,
    variant: { name: 'red', enabled: true, payload: { type: 'string', value: 'for everyone else' } },
    unknown: false,
  });
  check('the answer lists only the enabled flags',
    client.getAllToggles().map((t) => t.name).sort(),
    ['fe.constraint', 'fe.rollout', 'fe.variant']);

  await client.updateContext({ userId: 'bob' });
  check('bob (no plan), after updateContext', look(), {
    rollout: true, rolloutZero: false, constraint: false,
    variant: { name: 'blue', enabled: true, payload: { type: 'string', value: 'for bob' } },
    unknown: false,
  });
  // fe.constraint: 1 × yes (alice), then 1 + 5 × no (bob).
  for (let i = 0; i < 5; i += 1) client.isEnabled('fe.constraint');
  await client.sendMetrics();
  client.stop();
  check('SDK errors', errors, 0);

  const usageOf = async (name) => {
    const usage = await call('GET', `/api/admin/client-metrics/features/${name}`);
    return usage.lastHourUsage.find((u) => u.appName === APP) || {};
  };
  let hour = await usageOf('fe.constraint');
  for (let waited = 0; hour.no !== 6 && waited < METRICS_WAIT_SECONDS; waited += 1) {
    await sleep(1000);
    hour = await usageOf('fe.constraint');
  }
  check('fe.constraint metrics (yes, no, environment)',
    [hour.yes, hour.no, hour.environment], [1, 6, ENV]);
  const vhour = await usageOf('fe.variant');
  check('fe.variant variant counts', vhour.variants, { blue: 1, red: 1 });

  // CORS: a browser's preflight from another origin.
  if (SDK_BASE !== BASE) return finish();
  // A 1 MB query string: refused before any handler (414/431), never a 500.
  const huge = await fetch(`${BASE}/api/frontend?userId=${'a'.repeat(1 << 20)}`, {
    headers: { Authorization: key.secret },
  });
  check('a 1 MB query string is refused as too long', [414, 431].includes(huge.status), true);
  const preflight = await fetch(`${BASE}/api/frontend`, {
    method: 'OPTIONS',
    headers: {
      Origin: 'https://app.example.com',
      'Access-Control-Request-Method': 'GET',
      'Access-Control-Request-Headers': 'authorization,unleash-sdk',
    },
  });
  check('preflight allows the origin', preflight.headers.get('access-control-allow-origin'), '*');
  return finish();
}

function finish() {
  if (failed) {
    console.error('frontend e2e: FAILED');
    process.exit(1);
  }
  console.log('frontend e2e: passed');
  // Keep-alive connections would hold the event loop open.
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
