// The socialnet sandbox's accounts: who exists, how each one behaves, and the structural
// facts (sizes, ids) that do not depend on the seed, so that the catalogue holds for any seed.
import { accountFault, type SandboxContext, type SandboxResponse, type TextFlavour } from '../../common.ts';
import { namedPerson } from '../../people.ts';
import { profileIdOf } from './ids.ts';

/** How an account's pages and queries are answered. */
export type AccountState =
  /** Public content. */
  | 'ok'
  /** Gated page on every page path; GraphQL `data.node: null`. */
  | 'gated'
  /** Unavailable page, `data-reason="PRIVATE"` (not found); GraphQL `data.node: null`. */
  | 'private'
  /** Unavailable page, `data-reason="REMOVED"` (not found); GraphQL `data.node: null`. */
  | 'removed'
  /** Login wall instead of every page, and as the answer of its GraphQL queries. */
  | 'login-wall'
  /** 302 to `/checkpoint/…` on every page and query. */
  | 'checkpoint'
  /** HTTP 429 on every page and query. */
  | 'http-429'
  /** Pages are served; every GraphQL query on it answers error 1675004. */
  | 'graphql-rate-limit'
  /**
   * Public content; each successful GraphQL query on it retires the session values issued so
   * far for its queries (alternately the lsd tokens and the doc ids), so that a client reusing
   * a session meets 1357004 / 1675030 and must refresh it.
   */
  | 'rotating'
  /** Content pages lack the preloader their kind needs (only the header is there): unrecognised. */
  | 'broken'
  /** Public content; every GraphQL query with a non-null cursor answers error 1675012. */
  | 'cursor-rejects';

export type GateReason = 'AGE_RESTRICTED' | 'COUNTRY_RESTRICTED' | 'LOGGED_OUT_UNAVAILABLE';
export type Gender = 'MALE' | 'FEMALE' | 'NEUTER' | 'UNKNOWN';
export type HoursStatus =
  | 'Open now'
  | 'Closes soon'
  | 'Closed now'
  | 'Opens soon'
  | 'Always open'
  | 'Temporarily closed'
  | 'Permanently closed';

export interface AccountSpec {
  /** Account number: fixes the profile id and every structural id. */
  no: number;
  /** Registered vanity spelling; null for an id-only profile. */
  vanity: string | null;
  name: string;
  kind: 'page' | 'person';
  gender?: Gender;
  flavour: TextFlavour;
  state: AccountState;
  gateReason?: GateReason;
  verified?: boolean;
  alternateName?: string;
  /** Pages: where it is (title, og:description). */
  place?: string;
  categories?: string[];
  hours?: HoursStatus;
  posts: number;
  reels: number;
  /** Replies of the first top comment of the newest post. */
  firstCommentReplies: number;
  /** Replies of the second top comment of the newest post. */
  secondCommentReplies?: number;
  /** Absent optional fields: no cover, bio, followers, media, link, captions, soundtracks. */
  sparse?: boolean;
  /** The intro card is present but its bio is null. */
  bioless?: boolean;
  /** Status of the id-path redirect to the vanity path. */
  redirectStatus?: 301 | 302;
  /** Business page inactive (delegate page present, `is_business_page_active: false`). */
  inactiveBusiness?: boolean;
  /** An account fault of `accountFault` (`slow-`, `flaky-`, `down-`) applies to it. */
  fault?: 'slow' | 'flaky' | 'down';
  /**
   * A transient 200 that the first attempt of each GraphQL query on the account gets
   * (every odd attempt of one exact request), the real answer coming on the retry:
   * `empty`: a body that is empty after `for (;;);`, on every query;
   * `no-page-info`: the timeline's NDJSON without its page_info line;
   * `cut-off`: the timeline's NDJSON with its last line cut in half.
   */
  hiccup?: 'empty' | 'no-page-info' | 'cut-off';
}

/** An account's spec; its name, unless given, is its vanity's person's (sandbox/people.ts), as on every platform. */
type Given = Omit<AccountSpec, 'kind' | 'flavour' | 'state' | 'name'> & Partial<AccountSpec>;
const account = (kind: AccountSpec['kind'], spec: Given): AccountSpec => ({
  kind,
  flavour: 'plain',
  state: 'ok',
  ...spec,
  name: spec.name ?? namedPerson(spec.vanity ?? ''),
});
const page = (spec: Given): AccountSpec => account('page', spec);
const person = (spec: Given): AccountSpec => account('person', spec);

const TIDEWATER = {
  name: namedPerson('tidewaterkitchen'),
  verified: true,
  place: 'Portland, Oregon',
  categories: ['Seafood restaurant', 'Bar'],
  hours: 'Open now' as const,
  posts: 42,
  reels: 24,
  firstCommentReplies: 3,
};

export const ACCOUNTS: readonly AccountSpec[] = [
  page({ no: 1, vanity: 'tidewaterkitchen', ...TIDEWATER }),
  person({ no: 2, vanity: 'lunavoss', gender: 'FEMALE', alternateName: 'Lu', posts: 14, reels: 5, firstCommentReplies: 4, secondCommentReplies: 1 }),
  page({
    no: 3,
    vanity: 'metrodailynews',
    verified: true,
    place: 'Chicago, Illinois',
    categories: ['Newspaper', 'Media/news company'],
    hours: 'Always open',
    posts: 320,
    reels: 215,
    firstCommentReplies: 260,
    secondCommentReplies: 12,
  }),
  page({
    no: 4,
    vanity: 'MarinaGallery',
    place: 'Lisbon, Portugal',
    categories: ['Art gallery'],
    hours: 'Closed now',
    posts: 9,
    reels: 3,
    firstCommentReplies: 2,
    redirectStatus: 301,
  }),
  person({ no: 5, vanity: 'noor.haddad', gender: 'FEMALE', flavour: 'rtl', alternateName: 'Noor Haddad', posts: 12, reels: 4, firstCommentReplies: 6 }),
  person({ no: 6, vanity: 'sakura.kato', gender: 'FEMALE', flavour: 'cjk', bioless: true, posts: 10, reels: 4, firstCommentReplies: 3 }),
  page({
    no: 7,
    vanity: 'emoji.mixtape',
    flavour: 'mixed',
    place: 'Montréal, Québec',
    categories: ['Café', 'Music venue'],
    hours: 'Opens soon',
    inactiveBusiness: true,
    posts: 15,
    reels: 8,
    firstCommentReplies: 7,
  }),
  person({ no: 8, vanity: 'quietcorner', gender: 'UNKNOWN', sparse: true, posts: 6, reels: 3, firstCommentReplies: 0 }),
  person({ no: 9, vanity: null, name: namedPerson('rui.silva'), gender: 'MALE', posts: 8, reels: 2, firstCommentReplies: 2 }),
  page({ no: 10, vanity: 'emptyshelf', place: 'Leeds, England', categories: ['Bookstore'], hours: 'Temporarily closed', posts: 0, reels: 0, firstCommentReplies: 0 }),
  page({ no: 11, vanity: 'velvetcellar', state: 'gated', gateReason: 'AGE_RESTRICTED', place: 'Napa, California', categories: ['Winery'], posts: 5, reels: 2, firstCommentReplies: 2 }),
  page({ no: 12, vanity: 'borderlandradio', state: 'gated', gateReason: 'COUNTRY_RESTRICTED', categories: ['Radio station'], posts: 5, reels: 2, firstCommentReplies: 2 }),
  page({ no: 13, vanity: 'membersonlyclub', state: 'gated', gateReason: 'LOGGED_OUT_UNAVAILABLE', categories: ['Club'], posts: 5, reels: 2, firstCommentReplies: 2 }),
  person({ no: 14, vanity: 'privatejournal', state: 'private', posts: 5, reels: 1, firstCommentReplies: 2 }),
  page({ no: 15, vanity: 'closedshop', state: 'removed', categories: ['Shop'], posts: 5, reels: 1, firstCommentReplies: 2 }),
  page({ no: 16, vanity: 'walledgarden', state: 'login-wall', categories: ['Garden'], posts: 5, reels: 2, firstCommentReplies: 2 }),
  page({ no: 17, vanity: 'checkpointed', state: 'checkpoint', categories: ['Community'], posts: 5, reels: 2, firstCommentReplies: 2 }),
  page({ no: 18, vanity: 'ratelimited', state: 'http-429', categories: ['Community'], posts: 5, reels: 2, firstCommentReplies: 2 }),
  page({
    no: 19,
    vanity: 'throttledpage',
    state: 'graphql-rate-limit',
    place: 'Austin, Texas',
    categories: ['Food truck'],
    hours: 'Closes soon',
    posts: 20,
    reels: 14,
    firstCommentReplies: 4,
  }),
  page({
    no: 20,
    vanity: 'rotating.sessions',
    state: 'rotating',
    place: 'Denver, Colorado',
    categories: ['Diner'],
    hours: 'Permanently closed',
    posts: 60,
    reels: 30,
    firstCommentReplies: 25,
  }),
  page({ no: 24, vanity: 'brokenlayout', state: 'broken', categories: ['Community'], posts: 8, reels: 4, firstCommentReplies: 2 }),
  page({ no: 25, vanity: 'cursorrejects', state: 'cursor-rejects', categories: ['Cafe'], hours: 'Open now', posts: 30, reels: 25, firstCommentReplies: 30 }),
  page({ no: 26, vanity: 'blankanswers', place: 'Bristol, England', categories: ['Bakery'], posts: 12, reels: 14, firstCommentReplies: 15, hiccup: 'empty' }),
  page({ no: 27, vanity: 'lostpageinfo', place: 'Utrecht, Netherlands', categories: ['Deli'], posts: 11, reels: 3, firstCommentReplies: 2, hiccup: 'no-page-info' }),
  page({ no: 28, vanity: 'cutofffeed', place: 'Hobart, Tasmania', categories: ['Bar'], posts: 10, reels: 3, firstCommentReplies: 2, hiccup: 'cut-off' }),
  page({ no: 21, vanity: 'slow.tidewater', ...TIDEWATER, fault: 'slow' }),
  page({ no: 22, vanity: 'flaky.tidewater', ...TIDEWATER, fault: 'flaky' }),
  page({ no: 23, vanity: 'down.tidewater', ...TIDEWATER, fault: 'down' }),
];

const BY_NO = new Map(ACCOUNTS.map((account) => [account.no, account]));
const BY_VANITY = new Map(ACCOUNTS.filter((a) => a.vanity !== null).map((account) => [account.vanity!.toLowerCase(), account]));
const BY_ID = new Map(ACCOUNTS.map((account) => [profileIdOf(account.no), account]));

export const accountByNo = (no: number): AccountSpec | undefined => BY_NO.get(no);
/** Case-insensitive. */
export const accountByVanity = (vanity: string): AccountSpec | undefined => BY_VANITY.get(vanity.toLowerCase());
export const accountById = (id: string): AccountSpec | undefined => BY_ID.get(id);

export function accountNamed(vanity: string): AccountSpec {
  const account = accountByVanity(vanity);
  if (!account) throw new Error(`no socialnet sandbox account ${vanity}`);
  return account;
}

/** True when the account's content is served (pages and GraphQL nodes). */
export const isVisible = (account: AccountSpec): boolean =>
  account.state === 'ok' || account.state === 'graphql-rate-limit' || account.state === 'rotating' || account.state === 'broken' || account.state === 'cursor-rejects';

/** Name given to `accountFault`: a vanity cannot hold `-`, so `slow.x` stands for `slow-x`. */
export const faultName = (account: AccountSpec): string => (account.fault ? `${account.fault}-${account.no}` : `account-${account.no}`);

/**
 * The shared account fault (`accountFault`) of every request about the account, pages and
 * GraphQL alike: a response to give instead (503, reset), or the delay in ms to add (none).
 */
export function faultOf(account: AccountSpec, context: SandboxContext): SandboxResponse | number {
  const fault = accountFault(faultName(account), context);
  if (fault === null) return 0;
  if ('reset' in fault || 'status' in fault) return fault;
  return fault.delayMs;
}

export const withDelay = (response: SandboxResponse, delayMs: number): SandboxResponse =>
  delayMs > 0 && !('reset' in response) ? { ...response, delayMs } : response;
