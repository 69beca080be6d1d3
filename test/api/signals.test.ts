// The abort signal each scrape hands its extractor: aborted by the request's time budget and by
// shutdown, and never tied to a signal that outlives the request. Node keeps every signal made
// by AbortSignal.any() in the set of dependants of each of its sources until it is collected, and
// prunes that set from finalizers that walk all of it: made from the service-wide shutdown
// signal at every request, the set grew by one entry per scrape and, some 10,000 scrapes in,
// those finalizers held the event loop for tens of seconds (no answer, not even /healthz).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { byId, exampleQuery, fixtureResult, startHarness } from './harness.ts';

/** The signals a composite signal follows (an internal of Node's AbortSignal.any()). */
function sourcesOf(signal: AbortSignal): number {
  const symbol = Object.getOwnPropertySymbols(signal).find((candidate) => candidate.description === 'kSourceSignals');
  const sources = symbol ? (signal as unknown as Record<symbol, Set<unknown> | undefined>)[symbol] : undefined;
  return sources?.size ?? 0;
}

const endpoint = byId('linkpage-a.profile');
const path = (n: number) => `${endpoint.path}?${exampleQuery(endpoint, { url: `https://linkpage-a.example/signals${n}` })}`;

describe('the signal of a scrape', () => {
  test('follows no long-lived signal', async () => {
    const h = await startHarness();
    const signals: AbortSignal[] = [];
    h.script = async (declaration, _request, signal) => {
      signals.push(signal);
      return fixtureResult(declaration);
    };
    try {
      for (let n = 0; n < 20; n += 1) assert.equal((await h.get(path(n))).statusCode, 200);
      assert.equal(signals.length, 20);
      for (const signal of signals) {
        assert.equal(sourcesOf(signal), 0, 'made with AbortSignal.any() from signals that outlive the request');
        assert.equal(signal.aborted, false);
      }
    } finally {
      await h.close();
    }
  });

  test('is aborted when the time budget runs out', async () => {
    const h = await startHarness({ app: { requestBudgetMs: 50 } });
    let seen: AbortSignal | null = null;
    h.script = async (_declaration, _request, signal) => {
      seen = signal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      throw signal.reason;
    };
    try {
      const response = await h.get(path(100));
      assert.equal(response.statusCode, 502);
      assert.equal((seen as AbortSignal | null)?.aborted, true);
      assert.equal(await h.ledgerSum(), 100, 'refunded');
    } finally {
      await h.close();
    }
  });

  test('is aborted at shutdown', async () => {
    const h = await startHarness();
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    let seen: AbortSignal | null = null;
    h.script = async (_declaration, _request, signal) => {
      seen = signal;
      started();
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      throw signal.reason;
    };
    try {
      const response = h.get(path(200));
      await running;
      h.app.abortScrapes();
      assert.equal((await response).statusCode, 502);
      assert.equal((seen as AbortSignal | null)?.aborted, true);
      assert.equal(await h.ledgerSum(), 100, 'refunded');
    } finally {
      await h.close();
    }
  });
});
