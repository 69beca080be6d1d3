import { newOrderedId } from '../store/rules.ts';

/** `req_`, the time in 8 characters that sort as it does, then 24 URL-safe characters (144 random bits). */
export const newRequestId = (): string => newOrderedId('req');
