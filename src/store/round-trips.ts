// Every statement sent to PostgreSQL and every command sent to Redis is published on one
// diagnostics channel, synchronously in the async context of the code that sends it. The
// stores' own counters (`Stores.roundTrips`, for the backend metrics) count the process's round
// trips; a subscriber can instead tell whose they are, e.g. a test that counts one request's
// round trips with AsyncLocalStorage, unmixed with those of a timer that fires meanwhile.
// Without a subscriber, publishing costs one `hasSubscribers` check.
import { channel } from 'node:diagnostics_channel';

export interface RoundTripMessage {
  backend: 'postgres' | 'redis';
}

export const roundTripChannel = channel('pagescrape:store:round-trip');

export function publishRoundTrip(backend: RoundTripMessage['backend']): void {
  if (roundTripChannel.hasSubscribers) roundTripChannel.publish({ backend } satisfies RoundTripMessage);
}
