// Assertions shared by the end-to-end tests: every answer is checked for its envelope and for
// what it did to the team's credits.
import assert from 'node:assert/strict';
import type { E2e, Envelope, ErrorEnvelope } from './harness.ts';

/** A live 200: 1 credit charged, exact balance after it. */
export async function expectLive(e2e: E2e, path: string, query: Record<string, string>): Promise<Envelope> {
  const before = await e2e.balance();
  const response = await e2e.get(path, query);
  assert.equal(response.status, 200, JSON.stringify(response.body).slice(0, 500));
  assert.equal(response.body.meta.cached, false);
  assert.equal(response.body.meta.creditsCharged, 1);
  assert.equal(response.body.meta.creditsRemaining, before - 1);
  assert.equal(await e2e.balance(), before - 1);
  assert.match(String(response.body.data.fetchedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  return response.body;
}

/** A cache hit: 0 credits, cachedAt equal to the data's fetchedAt. */
export async function expectCached(e2e: E2e, path: string, query: Record<string, string>): Promise<Envelope> {
  const before = await e2e.balance();
  const response = await e2e.get(path, { ...query, cache_max_age: '1d' });
  assert.equal(response.status, 200);
  assert.equal(response.body.meta.cached, true);
  assert.equal(response.body.meta.creditsCharged, 0);
  assert.equal(response.body.meta.cachedAt, response.body.data.fetchedAt);
  assert.equal(await e2e.balance(), before);
  return response.body;
}

/** An error answer: the code, the envelope, and no credit charged. */
export async function expectError(e2e: E2e, path: string, query: Record<string, string>, status: number, code: string): Promise<ErrorEnvelope> {
  const before = await e2e.balance();
  const response = await e2e.get(path, query);
  assert.equal(response.status, status, JSON.stringify(response.body).slice(0, 500));
  assert.equal(response.body.error.code, code);
  assert.equal(response.body.error.requestId, response.headers.get('x-request-id'));
  assert.equal(await e2e.balance(), before, 'an error is never charged');
  assert.equal((await e2e.stores.ledger.usage(e2e.team.id))?.pending, 0);
  return response.body;
}

/**
 * Follows a listing from its first page to its end; returns every page's data. Each page is a
 * live scrape charged 1 credit.
 */
export async function followListing(
  e2e: E2e,
  path: string,
  query: Record<string, string>,
  paging: { param: string; field: string; flag: string },
  maxPages = 200,
): Promise<Record<string, unknown>[]> {
  const pages: Record<string, unknown>[] = [];
  let token: string | null = null;
  for (let page = 0; page < maxPages; page += 1) {
    const body = await expectLive(e2e, path, token === null ? query : { ...query, [paging.param]: token });
    pages.push(body.data);
    const state = body.data.paging as Record<string, unknown>;
    if (!state[paging.flag]) return pages;
    token = state[paging.field] as string;
    assert.equal(typeof token, 'string');
    assert.ok(token.length > 0);
  }
  throw new Error(`listing did not end within ${maxPages} pages`);
}

/** Asserts that items carry distinct ids (every item exactly once). */
export function assertDistinct(items: Record<string, unknown>[], idField: string): void {
  const ids = items.map((item) => String(item[idField]));
  assert.equal(new Set(ids).size, ids.length, 'an item appeared twice');
}
