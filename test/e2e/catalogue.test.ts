// The sandbox catalogue as the README shows it: every entry's description ends in the API's
// answer, in one form across the five platforms ("→ 200", "→ 404 NOT_FOUND", or "first page →
// 200, next page → 400 BAD_REQUEST" for a listing that fails on its next page), and that answer
// is the one the service gives against the sandbox, credits and envelope checked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endpoints } from '../../src/endpoints/index.ts';
import { platforms } from '../../sandbox/platforms/index.ts';
import { startE2e, type E2e } from './harness.ts';
import { expectError, expectLive } from './support.ts';

interface Answer {
  status: number;
  code?: string;
}
interface Stated {
  /** The answer to the entry's call. */
  first: Answer;
  /** For a listing: the answer to its next page, with the token of the first. */
  next?: Answer;
}

/** The error codes each status can carry (the API's error envelope). */
const CODES: Record<number, string[]> = {
  400: ['BAD_REQUEST'],
  404: ['NOT_FOUND'],
  502: ['UPSTREAM_BLOCKED', 'UPSTREAM_UNRECOGNISED'],
  503: ['SERVICE_UNAVAILABLE'],
};

const ENDING = /^(?<what>[^→]*[^\s→]) (?:→ (?<status>\d{3})(?: (?<code>[A-Z_]+))?|first page → 200, next page → (?<nextStatus>\d{3}) (?<nextCode>[A-Z_]+))$/u;

/** The answer a description states, or why it does not state one in the catalogue's form. */
export function statedAnswer(description: string): Stated | string {
  const match = ENDING.exec(description);
  if (!match?.groups) return 'does not end in "→ 200", "→ <status> <CODE>" or "first page → 200, next page → <status> <CODE>"';
  const { status, code, nextStatus, nextCode } = match.groups;
  const answer = (rawStatus: string, rawCode: string | undefined): Answer | string => {
    const value = Number(rawStatus);
    if (value === 200) return rawCode === undefined ? { status: 200 } : `"→ 200" takes no code, got ${rawCode}`;
    if (rawCode === undefined) return `"→ ${value}" needs the error code`;
    if (!CODES[value]?.includes(rawCode)) return `${value} ${rawCode} is not an answer of the API`;
    return { status: value, code: rawCode };
  };
  if (nextStatus !== undefined) {
    const next = answer(nextStatus, nextCode);
    if (typeof next === 'string') return next;
    if (next.status === 200) return 'a next page that answers 200 is an ordinary listing: state "→ 200"';
    return { first: { status: 200 }, next };
  }
  const first = answer(status ?? '', code);
  return typeof first === 'string' ? first : { first };
}

const entries = platforms.flatMap((platform) => platform.catalogue.map((entry) => ({ platform: platform.name, ...entry })));

describe('sandbox catalogue: the stated answer', () => {
  test('the form is recognised, and descriptions in other forms are refused', () => {
    assert.deepEqual(statedAnswer('ordinary profile → 200'), { first: { status: 200 } });
    assert.deepEqual(statedAnswer('slow: answers after the configured latency; retried → 200'), { first: { status: 200 } });
    assert.deepEqual(statedAnswer('Private profile → 404 NOT_FOUND'), { first: { status: 404, code: 'NOT_FOUND' } });
    assert.deepEqual(statedAnswer('always 503; retried → 502 UPSTREAM_BLOCKED'), { first: { status: 502, code: 'UPSTREAM_BLOCKED' } });
    assert.deepEqual(statedAnswer('rejects every token: first page → 200, next page → 400 BAD_REQUEST'), {
      first: { status: 200 },
      next: { status: 400, code: 'BAD_REQUEST' },
    });
    for (const description of [
      'empty 200 body (transient, retried)', // the upstream's behaviour only
      'Flaky upstream: 503, then a reset connection, then the answer (per request)',
      'down: always 503 → 502', // no code
      'captcha page with HTTP 200: 502 UPSTREAM_BLOCKED', // no arrow
      'inactive storefront (INACTIVE_STOREFRONT): 404',
      'first page fine; next page 502 UPSTREAM_BLOCKED',
      'private profile → 404 (any `private-…` name)', // the answer is not at the end
      'ordinary page → 200 OK',
      'missing → 404 UPSTREAM_BLOCKED', // a code the status never carries
      'login wall → 502 NOT_FOUND',
      'two answers → 404 NOT_FOUND → 200',
      '→ 200', // nothing described
    ]) {
      assert.equal(typeof statedAnswer(description), 'string', description);
    }
  });

  test('every entry of the five platforms states its answer in that form', () => {
    assert.deepEqual(new Set(entries.map((entry) => entry.platform)), new Set(['socialnet', 'snapmsg', 'linkpage-a', 'linkpage-b', 'shopfront']));
    const unstated = entries.flatMap((entry) => {
      const stated = statedAnswer(entry.description);
      return typeof stated === 'string' ? [`${entry.platform} ${entry.query}: "${entry.description}": ${stated}`] : [];
    });
    assert.deepEqual(unstated, []);
  });
});

describe('sandbox catalogue: the stated answer is the service’s answer (the service against the sandbox)', () => {
  let e2e: E2e;
  before(async () => {
    e2e = await startE2e({ sandbox: { slowMs: 300 } });
  });
  after(() => e2e.close());

  for (const entry of entries) {
    const stated = statedAnswer(entry.description);
    if (typeof stated === 'string') continue; // refused by the form test above
    const query = Object.fromEntries(new URLSearchParams(entry.query));
    const label = `${entry.endpoint}?${entry.query}: ${entry.description}`;
    test(label, async () => {
      if (stated.first.status === 200) {
        const first = await expectLive(e2e, entry.endpoint, query);
        if (!stated.next) return;
        const paging = endpoints.find((endpoint) => endpoint.path === entry.endpoint)?.paging;
        assert.ok(paging, `${entry.endpoint} pages`);
        const token = (first.data.paging as Record<string, unknown>)[paging.field];
        assert.equal(typeof token, 'string');
        assert.notEqual(token, paging.end, 'the first page has a next page');
        await expectError(e2e, entry.endpoint, { ...query, [paging.param]: token as string }, stated.next.status, stated.next.code ?? '');
      } else {
        await expectError(e2e, entry.endpoint, query, stated.first.status, stated.first.code ?? '');
      }
    });
  }
});
