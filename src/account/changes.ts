// The account's settings that a key may change (the team's low-balance alert, a key's daily
// credit limit): PATCH endpoints, declared like every endpoint
// (path, body schema, data schema, an example) so that the route, its validation, the OpenAPI
// entry, the docs and the SDK come from one place. Free, authenticated and rate-limited.
//
// Who may change them: a live key made by the operator's CLI or by an owner in the dashboard
// (a key is its maker's: one a member made cannot), never a test key; and a key may lower its
// own daily credit limit but not raise or remove it (a guard the guarded key could lift would
// guard nothing).
import { Type, type Static, type TObject } from 'typebox';
import { DateTime, Int, Nullable, Obj, Str } from '../endpoints/schemas/common.ts';
import type { Caller } from '../server/plugins/auth.ts';
import { ApiError } from '../server/errors.ts';
import { MAX_DAILY_CREDITS, MAX_LOW_BALANCE_ALERT } from '../store/rules.ts';
import { AccountData, accountData } from './endpoints.ts';
import { spentOn, utcDay, type ApiKeyRecord, type Stores } from '../store/types.ts';

export interface ChangeContext {
  caller: Caller;
  stores: Stores;
  /** Epoch ms. */
  now: number;
}

export interface AccountChange<P extends TObject = TObject, B extends TObject = TObject, D extends TObject = TObject> {
  id: string;
  method: 'PATCH';
  /** The OpenAPI path, its parameters in braces: `/v1/account/keys/{id}`. */
  path: string;
  summary: string;
  description: string;
  /** Path parameters. */
  params: P;
  body: B;
  data: D;
  /** A sample for the docs. */
  example: { params: Static<P>; body: Static<B> };
  apply: (params: Static<P>, body: Static<B>, context: ChangeContext) => Promise<Static<D>>;
}

/** A whole number of credits from 0 to `max`, or null for none. */
const CreditsOrNone = (description: string, max: number) => Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 0, maximum: max, description });

export const DailyCreditLimit = CreditsOrNone(
  `Credits the key may spend on live scrapes per UTC day (cached results are free and always served); null: no limit of its own. At most ${MAX_DAILY_CREDITS}.`,
  MAX_DAILY_CREDITS,
);

/** A key as the API shows it (never in full). */
export const KeyView = Obj({
  id: Str(),
  name: Str(),
  key: Str({ description: 'The key, shortened: its prefix and last four characters.' }),
  createdAt: DateTime(),
  lastUsedAt: Nullable(DateTime()),
  revokedAt: Nullable(DateTime()),
  dailyCreditLimit: Nullable(Int({ description: 'Credits the key may spend on live scrapes per UTC day; null: no limit of its own.' })),
  spentToday: Int({ description: 'Credits the key has spent today (UTC), live scrapes in flight included.' }),
});

export const keyView = (key: ApiKeyRecord, now: number): Static<typeof KeyView> => ({
  id: key.id,
  name: key.name,
  key: `${key.prefix}…${key.last4}`,
  createdAt: key.createdAt,
  lastUsedAt: key.lastUsedAt,
  revokedAt: key.revokedAt,
  dailyCreditLimit: key.dailyCreditLimit,
  spentToday: spentOn(key, utcDay(now)),
});

/** The calling key, when it may change the account's settings; else 403. */
async function changer({ caller, stores }: ChangeContext): Promise<ApiKeyRecord> {
  if (caller.test) throw new ApiError('FORBIDDEN', 'A test key (psk_test_) cannot change the account: use a live key.');
  const key = await stores.accounts.getKey(caller.keyId);
  if (!key) throw new ApiError('UNAUTHORIZED', 'The API key is invalid or has been revoked.');
  const maker = key.createdBy === null ? null : await stores.users.getUser(key.createdBy);
  if (maker?.role === 'member') throw new ApiError('FORBIDDEN', "A key made by a member of the team cannot change the account's settings: use a key an owner made, or ask an owner.");
  return key;
}

const updateKey: AccountChange = {
  id: 'account.keys.update',
  method: 'PATCH',
  path: '/v1/account/keys/{id}',
  summary: "Set a key's daily credit limit",
  description:
    "Sets or removes (`null`) the daily credit limit of one of the team's keys: past it, its live scrapes get 402 `KEY_CREDIT_LIMIT` until midnight UTC, while cached results are still served. Made with a live key that the operator or an owner created; a key may lower its own limit but not raise or remove it. Free.",
  params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'The key id (`key_…`), as `GET /v1/account` shows it for the calling key.' }) }),
  body: Obj({ dailyCreditLimit: DailyCreditLimit }),
  data: KeyView,
  example: { params: { id: 'key_3q2VbX9kT0mW7yZ1aC4dE6fG' }, body: { dailyCreditLimit: 500 } },
  async apply(params, body, context) {
    const calling = await changer(context);
    const { stores, caller, now } = context;
    const { id } = params as { id: string };
    const { dailyCreditLimit } = body as { dailyCreditLimit: number | null };
    const target = id === calling.id ? calling : await stores.accounts.getKey(id);
    if (!target || target.teamId !== caller.team.id) throw new ApiError('NOT_FOUND', `The team has no key ${id.length > 100 ? `${id.slice(0, 100)}…` : id}.`);
    if (target.id === calling.id && target.dailyCreditLimit !== null && (dailyCreditLimit === null || dailyCreditLimit > target.dailyCreditLimit)) {
      throw new ApiError('FORBIDDEN', 'A key cannot raise or remove its own daily credit limit: an owner does it in the dashboard, or with another key.');
    }
    const updated = await stores.accounts.updateKey(target.id, { dailyCreditLimit });
    if (!updated) throw new ApiError('NOT_FOUND', `The team has no key ${id}.`);
    return keyView(updated, now);
  },
};

const updateAccount: AccountChange = {
  id: 'account.update',
  method: 'PATCH',
  path: '/v1/account',
  summary: "Set the team's low-balance alert",
  description:
    'Sets or removes (`null`) the balance under which the team is warned: a charge that takes the balance below it records `credits.low` once, one that takes it to 0 records `credits.exhausted` once, and a top-up to the alert or above re-arms both (these events are sent to webhooks); the dashboard shows a banner while the balance is below it. Made with a live key that the operator or an owner created. Free; answers the account as `GET /v1/account` does.',
  params: Type.Object({}),
  body: Obj({ lowBalanceAlert: CreditsOrNone(`Credits; null: no alert. At most ${MAX_LOW_BALANCE_ALERT}.`, MAX_LOW_BALANCE_ALERT) }),
  data: AccountData,
  example: { params: {}, body: { lowBalanceAlert: 100 } },
  async apply(_params, body, context) {
    await changer(context);
    const { lowBalanceAlert } = body as { lowBalanceAlert: number | null };
    const team = await context.stores.accounts.updateTeam(context.caller.team.id, { lowBalanceAlert });
    if (!team) throw new ApiError('UNAUTHORIZED', 'The API key is invalid or has been revoked.');
    return accountData(team, context);
  },
};

/** The account's PATCH endpoints, in the order of the docs. */
export const accountChanges: readonly AccountChange[] = [updateAccount, updateKey];

/** `/v1/account/keys/{id}` → `/v1/account/keys/:id` (Fastify's form). */
export const routePath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');
