// The garbage collector's settings of a process that serves the API; imported first by its
// entry points, so that they hold from the start.
//
// V8 allocates the objects of an allocation site (a literal in the code) straight into the old
// generation once most of them have been seen to outlive a young collection ("pretenuring").
// Start-up, whose objects mostly live on, tenures a dozen sites (`--trace-pretenuring`), and
// some lie on the path of a request: from then on each cache hit left old objects behind that
// held its request's young ones (its HTTP request and response, their listeners, the socket's
// write requests) through every young collection until the next full one: 2.1 KB promoted a
// hit against 4 B for a bare Fastify route in the same process, and 2.2 µs of collection pauses
// a hit. Without pretenuring: 86 B and 0.8 µs, and about 10% more cache hits a second (`npm run
// bench`; bench/servers.ts imports this module too). What the service keeps for long (cache
// entries, keys, counters) is not allocated per request, so pretenuring bought it nothing.
// The flag is read at each collection: set here, after V8 has started, it holds (measured).
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-allocation-site-pretenuring');
