// A socialnet session is bound to the proxy it was obtained through: its queries name that
// proxy (`via`), and when the proxy is blocked or benched the session is replaced, once, by one
// loaded through another.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GRAPHQL_PATH, runQuery } from '../../src/platforms/socialnet/graphql.ts';
import { Sessions, type SocialnetSession } from '../../src/platforms/socialnet/session.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';

const docIds = { posts: '1', reels: '2', replies: '3' } as unknown as SocialnetSession['docIds'];

test('queries go through the session\'s proxy; a block there brings a session from another proxy, once', async () => {
  const loads: string[] = [];
  const proxies = ['http://10.0.0.1:3128', 'http://10.0.0.2:3128'];
  const sessions = new Sessions(null, async () => {
    const via = proxies[loads.length % proxies.length] as string;
    loads.push(via);
    return { lsd: `lsd-${loads.length}`, docIds, obtainedAt: Date.now() + loads.length, via };
  });
  const sent: (string | undefined)[] = [];
  const upstream = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
    sent.push(request.via);
    if (request.via === proxies[0]) throw new UpstreamOutcome('blocked', 'socialnet', `${proxies[0]}, which this request is bound to, is benched`);
    const response = { status: 200, path: GRAPHQL_PATH, headers: {}, body: '{"data":{"node":{"id":"7"}}}', via: request.via };
    request.classify?.(response);
    return response;
  };
  const context = { upstream, signal: new AbortController().signal, deadline: Date.now() + 5_000 };
  const query = { name: 'CometModernPageFeedPaginationQuery' as never, variables: {}, framing: 'json' as const, origin: 'https://www.socialnet.example' };
  const [document] = await runQuery(sessions, context, query);
  assert.deepEqual(document.at('data').at('node').at('id').value, '7');
  assert.deepEqual(sent, [proxies[0], proxies[1]], 'first through the session\'s proxy, then through the new session\'s');
  assert.deepEqual(loads, proxies);

  // A block through the second proxy too: replaced only once per query.
  const stuck = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
    throw new UpstreamOutcome('blocked', 'socialnet', `blocked via ${request.via}`);
  };
  await assert.rejects(runQuery(sessions, { ...context, upstream: stuck }, query), (error: unknown) => error instanceof UpstreamOutcome && error.kind === 'blocked');
});
