import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { EndpointLatency } from '../../src/server/latency.ts';

test('the latency histogram is exposed as prom-client exposes one: cumulative buckets (a value on a bound counts in it), +Inf, sum and count per endpoint', async () => {
  const registry = new Registry();
  const latency = new EndpointLatency({ name: 'x_seconds', help: 'X', buckets: [0.1, 0.01, 1], registry });
  for (const seconds of [0.005, 0.01, 0.5, 3]) latency.observe('a.b', seconds);
  latency.observe('c.d', 0.2);
  const text = await registry.metrics();
  assert.equal(
    text.trim(),
    [
      '# HELP x_seconds X',
      '# TYPE x_seconds histogram',
      'x_seconds_bucket{endpoint="a.b",le="0.01"} 2',
      'x_seconds_bucket{endpoint="a.b",le="0.1"} 2',
      'x_seconds_bucket{endpoint="a.b",le="1"} 3',
      'x_seconds_bucket{endpoint="a.b",le="+Inf"} 4',
      'x_seconds_sum{endpoint="a.b"} 3.515',
      'x_seconds_count{endpoint="a.b"} 4',
      'x_seconds_bucket{endpoint="c.d",le="0.01"} 0',
      'x_seconds_bucket{endpoint="c.d",le="0.1"} 0',
      'x_seconds_bucket{endpoint="c.d",le="1"} 1',
      'x_seconds_bucket{endpoint="c.d",le="+Inf"} 1',
      'x_seconds_sum{endpoint="c.d"} 0.2',
      'x_seconds_count{endpoint="c.d"} 1',
    ].join('\n'),
  );
  await registry.resetMetrics();
  assert.equal((await registry.metrics()).trim(), '# HELP x_seconds X\n# TYPE x_seconds histogram');
});
