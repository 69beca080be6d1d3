// Observability: the Prometheus metrics at /metrics (counted by real requests through the
// harness, optionally behind a bearer token) and the structured request log (one JSON line
// per request, never the key; unexpected faults logged with the request id, never leaked).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import type { EndpointDeclaration, ExtractResult } from '../../src/endpoints/types.ts';
import { start } from '../../src/main.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { byId, defaultScript, exampleQuery, startHarness, type Harness } from '../api/harness.ts';
import { expectError, REQUEST_ID, until, variantQuery } from '../api/support.ts';

/** Prometheus text exposition → `name{label="value",…}` (labels sorted) → value. */
function parseMetrics(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((label) => `${label[1]}="${label[2]}"`).sort();
    series.set(`${match[1]}{${labels.join(',')}}`, Number(match[3]));
  }
  return series;
}

const key = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort()
    .join(',')}}`;

describe('GET /metrics', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 100 });
  });
  after(() => h.close());

  const scrape = async () => {
    const response = await h.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return { text: response.body, series: parseMetrics(response.body) };
  };

  test('is the Prometheus text format with the documented families', async () => {
    const { text } = await scrape();
    for (const [family, type] of [
      ['api_requests_total', 'counter'],
      ['api_request_duration_seconds', 'histogram'],
      ['api_cache_lookups_total', 'counter'],
      ['api_credits_charged_total', 'counter'],
      ['api_credits_refunded_total', 'counter'],
      ['api_upstream_outcomes_total', 'counter'],
      // The process's own, event loop delay included (sampled every 50 ms: metrics.ts).
      ['process_cpu_seconds_total', 'counter'],
      ['nodejs_eventloop_lag_p99_seconds', 'gauge'],
    ]) {
      assert.match(text, new RegExp(`^# HELP ${family} \\S`, 'm'), family);
      assert.match(text, new RegExp(`^# TYPE ${family} ${type}$`, 'm'), family);
    }
  });

  test('every counter moves with the requests that it counts', async () => {
    const profile = byId('snapmsg.profile');
    const linkA = byId('linkpage-a.profile');
    const linkB = byId('linkpage-b.page');
    const shop = byId('shopfront.shop');
    h.script = async (endpoint: EndpointDeclaration, request, signal, upstream): Promise<ExtractResult> => {
      if (endpoint.id === linkB.id) throw new UpstreamOutcome('blocked', endpoint.platform, 'scripted block');
      return defaultScript(endpoint, request, signal, upstream);
    };
    const before = (await scrape()).series;
    const target = variantQuery(profile, 'metrics');
    const statuses = [
      // live 200, then a cache hit of the same target
      (await h.get(`${profile.path}?${new URLSearchParams(target)}`)).statusCode,
      (await h.get(`${profile.path}?${new URLSearchParams({ ...target, cache_max_age: '1d' })}`)).statusCode,
      // a cache miss that scrapes live
      (await h.get(`${linkA.path}?${exampleQuery(linkA, { cache_max_age: '7d' })}`)).statusCode,
      // a blocked upstream: 502, refunded
      (await h.get(`${linkB.path}?${exampleQuery(linkB)}`)).statusCode,
      // unauthenticated
      (await h.get(`${shop.path}?${exampleQuery(shop)}`, {})).statusCode,
    ];
    assert.deepEqual(statuses, [200, 200, 200, 502, 401]);
    const after = (await scrape()).series;
    const delta = (name: string, labels: Record<string, string>) => (after.get(key(name, labels)) ?? 0) - (before.get(key(name, labels)) ?? 0);

    assert.equal(delta('api_requests_total', { endpoint: profile.id, status: '200' }), 2);
    assert.equal(delta('api_requests_total', { endpoint: linkA.id, status: '200' }), 1);
    assert.equal(delta('api_requests_total', { endpoint: linkB.id, status: '502' }), 1);
    assert.equal(delta('api_requests_total', { endpoint: shop.id, status: '401' }), 1);
    assert.equal(delta('api_requests_total', { endpoint: shop.id, status: '200' }), 0);

    assert.equal(delta('api_request_duration_seconds_count', { endpoint: profile.id }), 2);
    assert.equal(delta('api_request_duration_seconds_bucket', { endpoint: profile.id, le: '+Inf' }), 2);
    assert.ok(delta('api_request_duration_seconds_sum', { endpoint: profile.id }) > 0);
    assert.equal(delta('api_request_duration_seconds_count', { endpoint: shop.id }), 1);

    assert.equal(delta('api_cache_lookups_total', { endpoint: profile.id, result: 'hit' }), 1);
    assert.equal(delta('api_cache_lookups_total', { endpoint: profile.id, result: 'miss' }), 0, 'a request without cache_max_age looks nothing up');
    assert.equal(delta('api_cache_lookups_total', { endpoint: linkA.id, result: 'miss' }), 1);

    assert.equal(delta('api_credits_charged_total', { endpoint: profile.id }), 1, 'the cache hit is not charged');
    assert.equal(delta('api_credits_charged_total', { endpoint: linkA.id }), 1);
    assert.equal(delta('api_credits_charged_total', { endpoint: linkB.id }), 0);
    assert.equal(delta('api_credits_refunded_total', { reason: 'failed' }), 1);

    assert.equal(delta('api_upstream_outcomes_total', { platform: 'snapmsg', outcome: 'ok' }), 1);
    assert.equal(delta('api_upstream_outcomes_total', { platform: 'linkpage-a', outcome: 'ok' }), 1);
    assert.equal(delta('api_upstream_outcomes_total', { platform: 'linkpage-b', outcome: 'blocked' }), 1);
    assert.equal(delta('api_upstream_outcomes_total', { platform: 'shopfront', outcome: 'ok' }), 0);
    h.script = defaultScript;
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  const token = 'metrics-token-9f8e7d6c5b4a';
  let h: Harness;
  before(async () => {
    h = await startHarness({ app: { metricsToken: token } });
  });
  after(() => h.close());

  test('needs the bearer token: missing or wrong is 401 with the envelope, right is 200', async () => {
    const metrics = (headers: Record<string, string>) => h.app.inject({ method: 'GET', url: '/metrics', headers });
    expectError(await metrics({}), 401, 'UNAUTHORIZED', { authed: false });
    expectError(await metrics({ authorization: 'Bearer metrics-token-wrong' }), 401, 'UNAUTHORIZED', { authed: false });
    expectError(await metrics({ authorization: `Bearer ${token}x` }), 401, 'UNAUTHORIZED', { authed: false });
    expectError(await metrics({ authorization: token }), 401, 'UNAUTHORIZED', { authed: false });
    // An API key is not the metrics token, in either header.
    expectError(await metrics({ authorization: `Bearer ${h.key}` }), 401, 'UNAUTHORIZED', { authed: false });
    expectError(await metrics({ 'x-api-key': token }), 401, 'UNAUTHORIZED', { authed: false });
    const ok = await metrics({ authorization: `Bearer ${token}` });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.body, /^# TYPE api_requests_total counter$/m);
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  test('is not served on the API listener: 404, as any path that does not exist', async () => {
    const h = await startHarness({ app: { openMetrics: false } });
    try {
      const response = await h.app.inject({ method: 'GET', url: '/metrics' });
      expectError(response, 404, 'NOT_FOUND', { authed: false });
      assert.doesNotMatch(response.body, /api_requests_total/);
    } finally {
      await h.close();
    }
  });

  test('the service started from its configuration serves it on 127.0.0.1:METRICS_PORT alone; METRICS_TOKEN adds the bearer route', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'metrics-'));
    const base = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' };
    try {
      const closed = await start(loadConfig(base));
      try {
        assert.equal(closed.metricsAddress, null, 'no metrics listener unless METRICS_PORT is set');
        assert.equal((await fetch(`${closed.address}/metrics`)).status, 404, 'the default configuration serves no open /metrics');
      } finally {
        await closed.stop();
      }
      const apart = await start(loadConfig({ ...base, METRICS_PORT: '0' }));
      try {
        assert.match(apart.metricsAddress ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
        assert.notEqual(apart.metricsAddress, apart.address);
        const served = await fetch(`${apart.metricsAddress}/metrics`);
        assert.equal(served.status, 200);
        assert.match(await served.text(), /^# TYPE api_requests_total counter$/m);
        assert.equal((await fetch(`${apart.metricsAddress}/v1/account`)).status, 404, 'the metrics listener serves nothing else');
        assert.equal((await fetch(`${apart.address}/metrics`)).status, 404, 'nor the API listener the metrics');
      } finally {
        await apart.stop();
      }
      const token = 'metrics-token-0a1b2c3d4e5f';
      const guarded = await start(loadConfig({ ...base, METRICS_TOKEN: token }));
      try {
        assert.equal((await fetch(`${guarded.address}/metrics`)).status, 401);
        assert.equal((await fetch(`${guarded.address}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
      } finally {
        await guarded.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('METRICS_PORT is a port number', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'metrics-'));
    try {
      assert.equal(loadConfig({ DATA_DIR: dataDir }).metricsPort, undefined);
      assert.equal(loadConfig({ DATA_DIR: dataDir, METRICS_PORT: '9464' }).metricsPort, 9464);
      assert.throws(() => loadConfig({ DATA_DIR: dataDir, METRICS_PORT: 'http' }), /METRICS_PORT must be an integer/);
      assert.throws(() => loadConfig({ DATA_DIR: dataDir, METRICS_PORT: '70000' }), /METRICS_PORT must be at most 65535/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

interface LogLine {
  level: number;
  msg: string;
  requestId?: string;
  team?: string | null;
  endpoint?: string | null;
  status?: number;
  credits?: number;
  cached?: boolean;
  durationMs?: number;
  err?: { message?: string; stack?: string };
  platform?: string;
  problem?: string;
}

describe('request logs', () => {
  let h: Harness;
  const raw: string[] = [];
  const lines = () => raw.map((line) => JSON.parse(line) as LogLine);
  before(async () => {
    h = await startHarness({
      credits: 100,
      app: {
        logger: {
          level: 'info',
          stream: {
            write: (chunk: string) => {
              for (const line of chunk.split('\n')) if (line.trim() !== '') raw.push(line);
            },
          },
        },
      },
    });
  });
  after(() => h.close());

  /** The request lines of one request id, once it has been written. */
  const requestLines = async (requestId: string) => {
    await until(() => lines().some((line) => line.requestId === requestId && line.msg === 'request'));
    return lines().filter((line) => line.requestId === requestId && line.msg === 'request');
  };

  test('each request writes one JSON line with requestId, team, endpoint, status, credits, cached and durationMs, and never the key', async () => {
    const profile = byId('linkpage-a.profile');
    const url = `${profile.path}?${exampleQuery(profile, { cache_max_age: '1d' })}`;
    const wrongKey = `psk_live_${'Z'.repeat(32)}`;
    const cases: { headers: Record<string, string>; status: number; team: string | null; credits: number; cached: boolean }[] = [
      { headers: { 'x-api-key': h.key }, status: 200, team: h.team.id, credits: 1, cached: false },
      { headers: { authorization: `Bearer ${h.key}` }, status: 200, team: h.team.id, credits: 0, cached: true },
      { headers: { 'x-api-key': h.key, authorization: `Bearer ${h.key}` }, status: 200, team: h.team.id, credits: 0, cached: true },
      { headers: { authorization: `Bearer ${wrongKey}` }, status: 401, team: null, credits: 0, cached: false },
      { headers: { 'x-api-key': wrongKey }, status: 401, team: null, credits: 0, cached: false },
    ];
    for (const expected of cases) {
      const response = await h.get(url, expected.headers);
      assert.equal(response.statusCode, expected.status, response.body);
      const requestId = String(response.headers['x-request-id']);
      assert.match(requestId, REQUEST_ID);
      const found = await requestLines(requestId);
      assert.equal(found.length, 1, `one line for ${requestId}`);
      const line = found[0] as LogLine;
      assert.equal(line.level, 30);
      assert.equal(line.team, expected.team);
      assert.equal(line.endpoint, profile.id);
      assert.equal(line.status, expected.status);
      assert.equal(line.credits, expected.credits);
      assert.equal(line.cached, expected.cached);
      assert.equal(typeof line.durationMs, 'number');
      assert.ok((line.durationMs as number) >= 0);
    }
    // A validation error is one line too.
    const invalid = await h.get(`${profile.path}?cache_max_age=2d`);
    assert.equal(invalid.statusCode, 422);
    const invalidLines = await requestLines(String(invalid.headers['x-request-id']));
    assert.equal(invalidLines.length, 1);
    assert.equal(invalidLines[0]?.status, 422);
    assert.equal(invalidLines[0]?.team, h.team.id);

    assert.ok(raw.length >= cases.length + 1);
    for (const line of raw) {
      assert.ok(!line.includes(h.key), `a log line carries the key: ${line}`);
      assert.ok(!line.includes(h.key.slice(9)), `a log line carries the key's secret part: ${line}`);
      assert.ok(!line.includes(wrongKey.slice(9)), `a log line carries a presented key: ${line}`);
    }
  });

  test('the service started with a log file writes its lines there: one a request, at the default level', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'log-file-'));
    const log = join(dataDir, 'service.log');
    try {
      const running = await start(loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }), undefined, { log });
      let requestId: string | null;
      try {
        const response = await fetch(`${running.address}/v1/account`);
        assert.equal(response.status, 401);
        requestId = response.headers.get('x-request-id');
        assert.match(requestId ?? '', REQUEST_ID);
      } finally {
        await running.stop();
      }
      const logged = readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as LogLine);
      const requestLines = logged.filter((line) => line.requestId === requestId && line.msg === 'request');
      assert.equal(requestLines.length, 1, `one line for the request in ${JSON.stringify(logged)}`);
      assert.equal(requestLines[0]?.status, 401);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('an unexpected fault is logged at error level with the request id; the 500 leaks nothing', async () => {
    const endpoint = byId('snapmsg.profile');
    const secret = 'postgres://admin:hunter2@10.1.2.3/internal';
    h.script = async () => {
      throw new Error(`connection to ${secret} failed`);
    };
    const balance = await h.balance();
    try {
      const response = await h.get(`${endpoint.path}?${new URLSearchParams(variantQuery(endpoint, 'fault'))}`);
      const error = expectError(response, 500, 'INTERNAL_ERROR', { authed: true });
      for (const leak of ['hunter2', '10.1.2.3', 'postgres', 'connection to', 'Error', '.ts', ' at ']) {
        assert.ok(!response.body.includes(leak), `the 500 body leaks ${leak}: ${response.body}`);
      }
      const requestId = error.requestId;
      const found = await requestLines(requestId);
      assert.equal(found.length, 1);
      assert.equal(found[0]?.status, 500);
      assert.equal(found[0]?.credits, 0);
      const errors = lines().filter((line) => line.level >= 50 && line.requestId === requestId);
      assert.equal(errors.length, 1, 'one error line for the request');
      assert.match(errors[0]?.err?.message ?? '', /hunter2/, 'the log keeps the cause for the operators');
      assert.equal(await h.balance(), balance, 'the failed scrape is not charged');
    } finally {
      h.script = defaultScript;
    }
  });
  test('an unreadable upstream page: the answer names the platform only; the detail is logged with each request id', async () => {
    const endpoint = byId('linkpage-b.page');
    const internals = [
      'Maximum call stack size exceeded',
      `Unexpected token '<', "<html><body>secret-page-text" is not valid JSON`,
    ];
    try {
      for (const problem of internals) {
        // Two identical requests in flight share one scrape; each gets its own log line.
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => (release = resolve));
        h.script = async (e) => {
          await gate;
          throw new UpstreamOutcome('unrecognised', e.platform, problem, { cause: new RangeError(problem) });
        };
        const url = `${endpoint.path}?${new URLSearchParams(variantQuery(endpoint, `unread${internals.indexOf(problem)}`))}`;
        const pending = [h.get(url), h.get(url)];
        await until(() => h.calls.length > 0);
        release();
        const responses = await Promise.all(pending);
        for (const response of responses) {
          const error = expectError(response, 502, 'UPSTREAM_UNRECOGNISED', { authed: true });
          assert.equal(error.message, 'The linkpage-b page could not be read; the platform may have changed it.');
          for (const leak of ['Maximum', 'stack', 'Unexpected', 'secret-page-text', 'JSON']) assert.ok(!response.body.includes(leak), `the body leaks ${leak}`);
          await until(() => lines().some((line) => line.requestId === error.requestId && line.level === 40));
          const warned = lines().filter((line) => line.requestId === error.requestId && line.level === 40);
          assert.equal(warned.length, 1, `one warn line for ${error.requestId}`);
          assert.equal(warned[0]?.platform, 'linkpage-b');
          assert.equal(warned[0]?.problem, problem, 'the log keeps the detail');
          assert.match(warned[0]?.err?.stack ?? '', /RangeError/, 'and the cause');
        }
        h.calls.length = 0;
      }
    } finally {
      h.script = defaultScript;
    }
  });
});
