import { randomBytes } from 'node:crypto';

/** `req_` followed by 24 URL-safe characters (144 random bits). */
export const newRequestId = (): string => `req_${randomBytes(18).toString('base64url')}`;
