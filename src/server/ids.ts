import { randomFillSync } from 'node:crypto';

const ID_BYTES = 18;
// One system call fills the pool for 512 identifiers.
const pool = Buffer.alloc(ID_BYTES * 512);
let offset = pool.length;

/** `req_` followed by 24 URL-safe characters (144 random bits). */
export function newRequestId(): string {
  if (offset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `req_${id}`;
}
