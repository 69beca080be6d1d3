// Reading an answer inside the client's retry loop: a platform's reader becomes the request's
// `classify`, so that an answer the reader calls transient is retried like a 5xx, and what the
// reader made of the accepted answer is returned without reading it twice.
import type { Upstream, UpstreamRequest, UpstreamResponse } from './types.ts';

/**
 * Fetches `request` and returns `read` of the accepted answer. `read` runs on every answer the
 * client would return (see `UpstreamRequest.classify`): throwing `UpstreamOutcome('transient')`
 * asks for another attempt, any other error ends the request. An `Upstream` that does not call
 * `classify` (a test double) gets the same result: the answer is read once it is returned.
 */
export async function fetchAndRead<T>(upstream: Upstream, request: UpstreamRequest, read: (response: UpstreamResponse) => T): Promise<T> {
  let accepted: { response: UpstreamResponse; value: T } | null = null;
  const response = await upstream({
    ...request,
    classify: (answer) => {
      accepted = { response: answer, value: read(answer) };
    },
  });
  const last = accepted as { response: UpstreamResponse; value: T } | null;
  return last !== null && last.response === response ? last.value : read(response);
}
