// HTML documents of the socialnet sandbox (src/platforms/socialnet/README.md, "Where the data
// sits" and "Signals"):
// content pages with their data-sjs blocks and preloaders, the home page, the login wall, the
// gated, not-found and unavailable pages. Each content page load picks its presentation from
// the variations the platform allows: block count, grouping, order and placement; attribute order,
// quoting and extras; `data-content-len` present, absent or wrong; JSON whitespace, `\/` and
// `\uXXXX` escaping; key order; entity styles in attributes; a login upsell form.
import { Rng } from '../../common.ts';
import type { Json } from './data.ts';
import { WWW } from './ids.ts';
import type { IssuedSession } from './session.ts';

// ---------------------------------------------------------------------------------------
// Encoders

export interface JsonStyle {
  slashes: boolean;
  ascii: boolean;
  indent: number;
}

/**
 * JSON as the upstream writes it: `<` always as `\u003c`, U+2028/2029 escaped, `/` as `\/`
 * when `slashes`, every non-ASCII UTF-16 unit as `\uXXXX` when `ascii` (emoji as surrogate
 * pairs), pretty-printed when `indent` > 0.
 */
export function encodeJson(value: unknown, style: JsonStyle): string {
  let out = JSON.stringify(value, null, style.indent > 0 ? style.indent : undefined)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  if (style.slashes) out = out.replace(/\//g, '\\/');
  if (style.ascii) out = out.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return out;
}

export type EntityStyle = 'named' | 'decimal' | 'hex';
const NAMED: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#039;' };

/** HTML-escapes text or an attribute value with named, decimal or hexadecimal references. */
export function escapeWith(value: string, style: EntityStyle): string {
  let out = '';
  for (const ch of value) {
    const cp = ch.codePointAt(0)!;
    const special = NAMED[ch] !== undefined;
    if (style === 'named') out += special ? NAMED[ch] : cp === 0xb7 ? '&middot;' : ch;
    else if (special || cp > 0x7e) out += style === 'decimal' ? `&#${cp};` : `&#x${cp.toString(16)};`;
    else out += ch;
  }
  return out;
}

/** Recursively reverses the key order of every object (key order is free). */
export function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Json).reverse().map(([key, inner]) => [key, reverseKeys(inner)]));
  }
  return value;
}

function shuffle<T>(rng: Rng, items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const HEX = '0123456789abcdef';
/** Preloader name: fixed prefix plus 8 to 32 lowercase hex characters, new per load. */
export const preloaderName = (rng: Rng, prefix: string): string => `${prefix}${rng.chars(rng.int(8, 32), HEX)}`;

// ---------------------------------------------------------------------------------------
// Page style

export interface PageStyle {
  rng: Rng;
  entities: EntityStyle;
  quote: '"' | "'";
  metaContentFirst: boolean;
  selfClose: boolean;
  grouping: 'separate' | 'grouped' | 'combined';
  headBlocks: number;
  newline: string;
  loginUpsell: boolean;
  reorder: boolean;
  nonce: string;
  mount: string;
}

export function pageStyle(seed: string, key: string): PageStyle {
  const rng = new Rng(seed, `page-style:${key}`);
  return {
    rng,
    entities: rng.pick(['named', 'named', 'decimal', 'hex'] as const),
    quote: rng.bool(0.7) ? '"' : "'",
    metaContentFirst: rng.bool(0.3),
    selfClose: rng.bool(0.7),
    grouping: rng.pick(['separate', 'separate', 'grouped', 'combined'] as const),
    headBlocks: rng.int(0, 2),
    newline: rng.bool(0.8) ? '\n' : '',
    loginUpsell: rng.bool(0.35),
    reorder: rng.bool(0.25),
    nonce: rng.chars(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'),
    mount: `mount_0_0_${rng.chars(2, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz')}`,
  };
}

function metaTag(style: PageStyle, attribute: 'property' | 'name', key: string, content: string): string {
  const q = style.quote;
  const parts = [`${attribute}=${q}${key}${q}`, `content=${q}${escapeWith(content, style.entities)}${q}`];
  if (style.metaContentFirst) parts.reverse();
  return `<meta ${parts.join(' ')}${style.selfClose ? ' /' : ''}>`;
}

function jsonStyle(rng: Rng): JsonStyle {
  return { slashes: rng.bool(0.5), ascii: rng.bool(0.35), indent: rng.bool(0.15) ? rng.int(1, 2) : 0 };
}

/** A data-sjs `<script>` with varied attributes. */
function sjsScript(style: PageStyle, block: Json): string {
  const rng = style.rng;
  const body = encodeJson(style.reorder && rng.bool(0.5) ? reverseKeys(block) : block, jsonStyle(rng));
  const quoted = (value: string) => {
    const q = rng.pick(['"', "'", ''] as const);
    return `${q}${value}${q}`;
  };
  const attributes = [`type=${quoted('application/json')}`, rng.bool(0.7) ? 'data-sjs' : 'data-sjs=""'];
  const length = rng.int(0, 5);
  if (length <= 2) attributes.push(`data-content-len=${quoted(String(Buffer.byteLength(body, 'utf8')))}`);
  else if (length === 3) attributes.push(`data-content-len="${rng.int(1, 99_999)}"`);
  if (rng.bool(0.3)) attributes.push(`nonce="${style.nonce}"`);
  if (rng.bool(0.15)) attributes.push(`class="__sjs_${rng.chars(4, HEX)}"`);
  if (rng.bool(0.1)) attributes.push(`id="sjs_${rng.chars(6, HEX)}"`);
  return `<script ${shuffle(rng, attributes).join(' ')}>${body}</script>`;
}

// ---------------------------------------------------------------------------------------
// Blocks

export type Preloader = [name: string, result: Json];

const preloaderEntry = ([name, result]: Preloader): unknown[] => [
  'RelayPrefetchedStreamCache',
  'next',
  [],
  [name, { __bbox: { complete: true, result } }],
];
const handle = (...groups: unknown[][]): unknown[] => ['ScheduledServerJS', 'handle', null, groups.map((entries) => ({ __bbox: { require: entries } }))];
const TIME_SLICE = ['TimeSliceImpl', 'guard', null, []];

function defineEntries(session: IssuedSession): unknown[] {
  return [
    ['SiteData', [], { server_revision: session.rev, client_revision: session.rev, pkg_cohort: 'BP:DEFAULT', haste_session: `20512.HYP:comet_loggedout_pkg.2.1..0.0` }, 317],
    ['CometRelayDocIds', [], { ids: session.docIds, rev: session.rev }, 6021],
    ['CurrentUserInitialData', [], { ACCOUNT_ID: '0', USER_ID: '0', NAME: '', SHORT_NAME: null, IS_LOGGED_IN: false }, 270],
  ];
}

/** The data-sjs blocks of a page: its preloaders, the session's defines, unrelated entries. */
function blocks(style: PageStyle, preloaders: Preloader[], session: IssuedSession | null): Json[] {
  const rng = style.rng;
  const injector = ['CometSSRMergedContentInjector', 'onPayload', [], [{ id: style.mount, html: '<div></div>' }]];
  const upsell: Preloader = [
    preloaderName(rng, 'adp_CometLoggedOutUpsellQueryRelayPreloader_'),
    { data: { viewer: { upsell_config: { show: true } } }, extensions: {} },
  ];
  const defines = session === null ? [] : defineEntries(session);
  const unrelated: Json[] = [
    { require: [['qplTimingsServerJS', null, null, [rng.digits(16), 'tierThree']]] },
    { define: [['CometPersistQueryParams', [], { relative: {}, domain: {} }, 6231]] },
  ];
  const out: Json[] = [];
  const entries = preloaders.map(preloaderEntry);
  if (style.grouping === 'separate' || entries.length < 2) {
    if (defines.length > 0) out.push({ define: defines });
    for (const entry of entries) out.push({ require: [handle([entry])] });
    out.push({ require: [handle([injector, preloaderEntry(upsell)]), TIME_SLICE] });
    out.push(rng.pick(unrelated));
  } else if (style.grouping === 'grouped') {
    if (defines.length > 0) out.push({ define: defines });
    out.push({ require: [handle([...entries.slice(0, 1), injector, ...entries.slice(1), preloaderEntry(upsell)]), TIME_SLICE] });
  } else {
    const split = rng.int(1, entries.length - 1);
    out.push({
      ...(defines.length > 0 ? { define: defines } : {}),
      require: [handle(entries.slice(0, split), [injector, ...entries.slice(split)]), TIME_SLICE],
    });
    out.push({ require: [handle([preloaderEntry(upsell)])] });
    out.push(...unrelated);
  }
  return shuffle(rng, out);
}

function eqmc(rng: Rng, nonce: string, session: IssuedSession): string {
  const value: Json = {};
  if (rng.bool(0.9)) value.u = '/ajax/qm/?__a=1&__user=0&__comet_req=15';
  if (rng.bool(0.8)) value.e = rng.chars(12, HEX);
  if (rng.bool(0.7)) value.s = `${rng.chars(5)}:${rng.chars(6)}:${rng.chars(6)}`;
  value.w = 0;
  if (rng.bool(0.8)) value.f = `AZx${rng.chars(30, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`;
  value.l = session.lsd;
  if (rng.bool(0.3)) value.hsi = rng.digits(19);
  const ordered = rng.bool(0.3) ? reverseKeys(value) : value;
  const attributes = shuffle(rng, ['id="__eqmc"', 'type="application/json"', `nonce="${nonce}"`]);
  return `<script ${attributes.join(' ')}>${encodeJson(ordered, { slashes: rng.bool(0.7), ascii: false, indent: 0 })}</script>`;
}

// ---------------------------------------------------------------------------------------
// Documents

const HEAD_START = '<!DOCTYPE html>\n<html id="sn" lang="en" dir="ltr">\n<head>\n<meta charset="utf-8" />\n<meta name="referrer" content="origin-when-crossorigin" id="meta_referrer" />';

const loginForm = (action: string, style: EntityStyle = 'named'): string =>
  `<form id="login_form" action="${escapeWith(action, style)}" method="post">\n<input type="text" name="email" placeholder="Email or phone number" />\n<input type="password" name="pass" placeholder="Password" />\n<button name="login" type="submit">Log in</button>\n</form>`;

export interface ContentPageInput {
  /** `<title>` text. */
  title: string;
  og: { title: string; description: string; image: string; url: string; id: string };
  preloaders: Preloader[];
  session: IssuedSession;
  /** Path of the page, for the login upsell's `next`. */
  path: string;
}

/** A profile page, reels tab or about tab. */
export function contentPage(style: PageStyle, input: ContentPageInput): string {
  const nl = style.newline;
  const all = blocks(style, input.preloaders, input.session).map((block) => sjsScript(style, block));
  const head = all.slice(0, style.headBlocks);
  const body = all.slice(style.headBlocks);
  const lines = [
    HEAD_START,
    `<title>${escapeWith(input.title, style.entities)}</title>`,
    metaTag(style, 'property', 'og:title', input.og.title),
    metaTag(style, 'property', 'og:description', input.og.description),
    metaTag(style, 'property', 'og:image', input.og.image),
    metaTag(style, 'property', 'og:url', input.og.url),
    metaTag(style, 'property', 'og:type', 'profile'),
    metaTag(style, 'property', 'og:site_name', 'socialnet'),
    metaTag(style, 'property', 'al:android:url', `socialnet://profile/${input.og.id}`),
    `<link rel="canonical" href="${escapeWith(input.og.url, style.entities)}" />`,
    eqmc(style.rng, style.nonce, input.session),
    ...(head.length > 0 ? [head.join(nl)] : []),
    '</head>',
    `<body class="_9dls _2vja">`,
    `<div id="${style.mount}" class="x1q0g3np x78zum5"></div>`,
    ...(style.loginUpsell ? [`<div id="login_upsell" hidden>${loginForm(`/login/?next=${encodeURIComponent(input.path)}`).replace(/\n/g, '')}</div>`] : []),
    ...(body.length > 0 ? [body.join(nl)] : []),
    '</body>',
    '</html>',
    '',
  ];
  return lines.join('\n');
}

const loginPreloader = (rng: Rng): Json => ({
  require: [handle([preloaderEntry([preloaderName(rng, 'adp_useCometLogInFormQueryRelayPreloader_'), { data: { login_data: null }, extensions: { is_final: true } }])])],
});

function loginDocument(rng: Rng, formAction: string, session: IssuedSession | null): string {
  const parts = [
    HEAD_START,
    '<title>socialnet - log in or sign up</title>',
    '<meta name="description" content="Log in or sign up to see posts, photos and videos from people and pages on socialnet." />',
    '<meta property="og:site_name" content="socialnet" />',
    `<meta property="og:url" content="${WWW}/" />`,
    `<link rel="canonical" href="${WWW}/" />`,
  ];
  if (session !== null) {
    parts.push(eqmc(rng, rng.chars(8), session));
  }
  parts.push(
    '</head>',
    '<body class="_li">',
    '<div id="mount_0_0_Lw"><div role="main">',
    '<h2>Log in to see posts, photos and videos on socialnet.</h2>',
    loginForm(formAction),
    '<a href="/r.php">Create new account</a>',
    '</div></div>',
  );
  const jsonOptions = { slashes: rng.bool(0.5), ascii: false, indent: 0 };
  const login = encodeJson(loginPreloader(rng), jsonOptions);
  parts.push(`<script type="application/json" data-content-len="${Buffer.byteLength(login)}" data-sjs>${login}</script>`);
  if (session !== null) {
    const define = encodeJson({ define: defineEntries(session) }, jsonOptions);
    parts.push(`<script type="application/json" data-content-len="${Buffer.byteLength(define)}" data-sjs>${define}</script>`);
  }
  parts.push('</body>', '</html>', '');
  return parts.join('\n');
}

/** `GET /`: the login page plus `__eqmc` and `CometRelayDocIds`. */
export const homePage = (rng: Rng, session: IssuedSession): string => loginDocument(rng, '/login/?login_attempt=1', session);

/** The login wall, served with HTTP 200 instead of the page at `nextUrl`. */
export const loginWall = (rng: Rng, nextUrl: string): string =>
  loginDocument(rng, `/login/?login_attempt=1&next=${encodeURIComponent(nextUrl)}`, null);

export interface GatedInput {
  reason: string;
  name: string;
  url: string;
  image: string;
  id: string;
  path: string;
}

/** The gated page. */
export function gatedPage(style: PageStyle, input: GatedInput): string {
  return [
    HEAD_START,
    '<title>socialnet</title>',
    '<meta name="robots" content="noindex,nofollow" />',
    metaTag(style, 'property', 'og:title', input.name),
    metaTag(style, 'property', 'og:url', input.url),
    metaTag(style, 'property', 'og:image', input.image),
    metaTag(style, 'property', 'og:type', 'profile'),
    metaTag(style, 'property', 'og:site_name', 'socialnet'),
    metaTag(style, 'property', 'al:android:url', `socialnet://profile/${input.id}`),
    '</head>',
    '<body class="_li">',
    `<div id="${style.mount}">`,
    `<div id="content_gate" data-gate-reason="${input.reason}" role="main">`,
    '<h2>This content isn&#039;t available to everyone</h2>',
    '<p>Log in to see if you can view this content. Some pages are only shown to people over a certain age or in certain countries.</p>',
    loginForm(`/login/?next=${encodeURIComponent(input.path)}`),
    '</div>',
    '</div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** HTTP 404 page (not found: README.md, "Signals"). */
export function notFoundPage(): string {
  return [
    HEAD_START,
    '<title>Page not found | socialnet</title>',
    '<meta name="robots" content="noindex,nofollow" />',
    '<meta property="og:site_name" content="socialnet" />',
    '</head>',
    '<body class="_li">',
    '<div id="mount_0_0_Nf">',
    '<div id="content_unavailable" data-reason="NOT_FOUND" role="main">',
    '<h2>This page isn&#039;t available</h2>',
    '<p>The link may be broken, or the page may have been removed.</p>',
    '<a href="/">Go to socialnet</a>',
    '</div>',
    '</div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** HTTP 200 unavailable page of a private or removed profile (not found: README.md, "Signals"). */
export function unavailablePage(reason: 'PRIVATE' | 'REMOVED'): string {
  return [
    HEAD_START,
    '<title>socialnet</title>',
    '<meta name="robots" content="noindex,nofollow" />',
    '<meta property="og:site_name" content="socialnet" />',
    '</head>',
    '<body class="_li">',
    '<div id="mount_0_0_Un">',
    `<div id="content_unavailable" data-reason="${reason}" role="main">`,
    '<h2>This content isn&#039;t available right now</h2>',
    '<p>The owner may have limited who can see it, or it may have been removed.</p>',
    '</div>',
    '</div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** What a client that follows a checkpoint redirect sees: a login form, no data (a block: README.md, "Signals"). */
export function checkpointPage(): string {
  return [
    HEAD_START,
    '<title>Security check | socialnet</title>',
    '</head>',
    '<body class="_li">',
    '<div id="checkpoint_main" role="main"><h2>Please confirm it&#039;s you</h2>',
    loginForm('/checkpoint/?next=%2F'),
    '</div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** Body of an HTTP 429 answer. */
export function tooManyRequestsPage(): string {
  return [HEAD_START, '<title>socialnet</title>', '</head>', '<body><h2>You&#039;re temporarily blocked</h2><p>Please try again later.</p></body>', '</html>', ''].join('\n');
}
