// The socialnet sandbox upstream: a local implementation of src/platforms/socialnet/README.md from
// generated data. Pages (home, profile, reels tab, about tab), GraphQL (timeline, reels,
// replies), the redirects of README.md's "URLs", gated, unavailable and not-found pages, blocks (login
// wall, checkpoint, 429, GraphQL rate limit), rotating sessions and the shared account faults.
// The accounts and what each shows are in ./socialnet/accounts.ts and ./socialnet/catalogue.ts.
import { Rng, isBrowserNavigation, type SandboxContext, type SandboxPlatform, type SandboxRequest, type SandboxResponse } from '../common.ts';
import { accountById, accountByVanity, faultOf, withDelay, type AccountSpec } from './socialnet/accounts.ts';
import { SOCIALNET_CATALOGUE } from './socialnet/catalogue.ts';
import { reelEdge, reelsPageSize, storyNode, type Json, type Profile } from './socialnet/data.ts';
import { handleGraphql } from './socialnet/graphql.ts';
import { WWW, cursorOf } from './socialnet/ids.ts';
import {
  checkpointPage,
  contentPage,
  gatedPage,
  homePage,
  loginWall,
  notFoundPage,
  pageStyle,
  preloaderName,
  tooManyRequestsPage,
  unavailablePage,
  type Preloader,
} from './socialnet/pages.ts';
import { SeedState } from './socialnet/state.ts';

export type SocialnetTab = 'profile' | 'reels' | 'about';

type Route =
  | { kind: 'home' }
  | { kind: 'graphql' }
  | { kind: 'people'; id: string }
  | { kind: 'page'; tab: SocialnetTab; vanity: string; rest: string }
  | { kind: 'page-id'; tab: SocialnetTab; id: string }
  | { kind: 'login' }
  | { kind: 'checkpoint' }
  | { kind: 'unknown' };

const ID = /^[1-9][0-9]{14,16}$/;
const VANITY = /^(?=.*[A-Za-z])[A-Za-z0-9.]{5,50}$/;
const RESERVED = new Set([
  'people', 'pages', 'groups', 'events', 'watch', 'reel', 'reels', 'stories', 'photo', 'photos', 'video', 'videos', 'share',
  'sharer', 'login', 'checkpoint', 'recover', 'help', 'policies', 'privacy', 'settings', 'marketplace', 'gaming', 'hashtag',
  'search', 'api', 'ajax',
]);
const PROFILE_TABS = new Set(['photos', 'videos', 'followers', 'following', 'reviews']);

const tabOfSegment = (segment: string): SocialnetTab | null => {
  const folded = segment.toLowerCase();
  if (folded === 'reels') return 'reels';
  if (folded === 'about' || folded.startsWith('about_')) return 'about';
  return PROFILE_TABS.has(folded) ? 'profile' : null;
};

/** Which page a path names. */
export function route(path: string, query: URLSearchParams): Route {
  let segments: string[];
  try {
    segments = path.split('/').slice(1).map((segment) => decodeURIComponent(segment));
  } catch {
    return { kind: 'unknown' };
  }
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  const [first = '', second, third, ...more] = segments;
  const folded = first.toLowerCase();
  if (segments.length === 1 && first === '') return { kind: 'home' };
  if (folded === 'api' && second === 'graphql' && third === undefined) return { kind: 'graphql' };
  if (folded === 'login' || folded === 'login.php') return { kind: 'login' };
  if (folded === 'checkpoint' || folded === 'recover') return { kind: 'checkpoint' };
  if (folded === 'profile.php' && second === undefined) {
    const id = query.get('id') ?? '';
    if (!ID.test(id)) return { kind: 'unknown' };
    const sk = (query.get('sk') ?? '').toLowerCase();
    const tab: SocialnetTab = sk === 'reels_tab' ? 'reels' : sk === 'about' || sk.startsWith('about_') ? 'about' : 'profile';
    return { kind: 'page-id', tab, id };
  }
  if (folded === 'people' && second !== undefined && third !== undefined && more.length === 0) {
    return ID.test(third) ? { kind: 'people', id: third } : { kind: 'unknown' };
  }
  if (!VANITY.test(first) || first.startsWith('.') || first.endsWith('.') || RESERVED.has(folded) || folded.endsWith('.php')) {
    return { kind: 'unknown' };
  }
  if (third !== undefined) return { kind: 'unknown' };
  const tab = second === undefined ? 'profile' : tabOfSegment(second);
  if (tab === null) return { kind: 'unknown' };
  const slash = path.indexOf('/', 1);
  return { kind: 'page', tab, vanity: first, rest: slash < 0 ? '' : path.slice(slash) };
}

/** Path of a tab on the registered vanity. */
const vanityPath = (vanity: string, tab: SocialnetTab): string =>
  tab === 'profile' ? `/${vanity}` : tab === 'reels' ? `/${vanity}/reels/` : `/${vanity}/about_contact_and_basic_info`;

const HTML_TYPE = 'text/html; charset="utf-8"';
const page = (body: string, status = 200, headers: Record<string, string> = {}): SandboxResponse => ({
  status,
  headers: { 'content-type': HTML_TYPE, ...headers },
  body,
});
const redirectTo = (location: string, status: 301 | 302): SandboxResponse => ({ status, headers: { location }, body: '' });

const HEADER_PREFIX = 'adp_ProfileCometHeaderQueryRelayPreloader_';
const TIMELINE_PREFIX = 'adp_ProfileCometTimelineFeedQueryRelayPreloader_';
const TILES_PREFIX = 'adp_ProfilePlusCometLoggedOutRootQueryRelayPreloader_';
const REELS_PREFIX = 'adp_ProfileCometAppCollectionReelsRendererQueryRelayPreloader_';
const ABOUT_PREFIX = 'adp_ProfileCometAboutAppSectionQueryRelayPreloader_';

const final = (data: Json): Json => ({ data, extensions: { is_final: true } });

/** The preloaders of one content page. */
function preloadersOf(state: SeedState, profile: Profile, tab: SocialnetTab, rng: Rng): Preloader[] {
  const spec = profile.spec;
  const seed = state.seed;
  const header: Preloader = [preloaderName(rng, HEADER_PREFIX), final({ user: { id: profile.id, profile_header_renderer: { user: profile.header } } })];
  // A broken layout: the header is there, the preloader the page kind needs is not.
  if (spec.state === 'broken') return tab === 'profile' ? [header, [preloaderName(rng, TILES_PREFIX), final({ user: { id: profile.id, profile_tile_sections: profile.tiles } })]] : [header];
  if (tab === 'about') {
    return [header, [preloaderName(rng, ABOUT_PREFIX), final({ user: { id: profile.id, about_app_sections: profile.about } })]];
  }
  if (tab === 'reels') {
    const size = Math.min(spec.reels, reelsPageSize(seed, spec, 0, 10));
    const edges = Array.from({ length: size }, (_, index) => reelEdge(seed, profile, index));
    const collection = {
      __typename: 'AppCollection',
      id: profile.collectionId,
      aggregated_sn_shorts: {
        edges,
        page_info: { end_cursor: size > 0 ? cursorOf('reels', profile.collectionId, size) : null, has_next_page: size < spec.reels },
      },
    };
    return [header, [preloaderName(rng, REELS_PREFIX), final({ node: collection })]];
  }
  const hasPosts = spec.posts > 0;
  const timeline = {
    __typename: 'User',
    id: profile.id,
    timeline_list_feed_units: {
      edges: hasPosts ? [{ node: storyNode(seed, profile, 0), cursor: cursorOf('timeline', profile.id, 1) }] : [],
      page_info: { end_cursor: hasPosts ? cursorOf('timeline', profile.id, 1) : null, has_next_page: spec.posts > 1 },
    },
  };
  return [
    header,
    [preloaderName(rng, TILES_PREFIX), final({ user: { id: profile.id, profile_tile_sections: profile.tiles } })],
    [preloaderName(rng, TIMELINE_PREFIX), final({ user: timeline })],
  ];
}

function contentResponse(state: SeedState, account: AccountSpec, tab: SocialnetTab, path: string): SandboxResponse {
  const profile = state.profile(account);
  const session = state.sessions.issue();
  const style = pageStyle(state.seed, `${path}:${session.load}`);
  const preloaders = preloadersOf(state, profile, tab, style.rng);
  const body = contentPage(style, {
    title: profile.title,
    og: { title: profile.name, description: profile.ogDescription, image: profile.pictures.large, url: profile.url, id: profile.id },
    preloaders,
    session,
    path,
  });
  const headers: Record<string, string> = {};
  if (style.rng.bool(0.5)) headers['set-cookie'] = `datr=${style.rng.chars(24)}; Path=/; Domain=.socialnet.example; Secure; HttpOnly; SameSite=None`;
  return page(body, 200, headers);
}

/** A page request about an account whose route and headers are fine. */
function accountPage(state: SeedState, account: AccountSpec, tab: SocialnetTab, path: string): SandboxResponse {
  const nextUrl = `${WWW}${path}`;
  switch (account.state) {
    case 'http-429':
      return page(tooManyRequestsPage(), 429, { 'retry-after': '60' });
    case 'checkpoint':
      return redirectTo(`/checkpoint/?next=${encodeURIComponent(nextUrl)}`, 302);
    case 'login-wall':
      return page(loginWall(new Rng(state.seed, `login-wall:${path}`), nextUrl));
    case 'private':
    case 'removed':
      return page(unavailablePage(account.state === 'private' ? 'PRIVATE' : 'REMOVED'));
    case 'gated': {
      const profile = state.profile(account);
      const style = pageStyle(state.seed, `gated:${path}:${state.sessions.loads}`);
      return page(
        gatedPage(style, {
          reason: account.gateReason ?? 'AGE_RESTRICTED',
          name: profile.name,
          url: profile.url,
          image: profile.pictures.large,
          id: profile.id,
          path,
        }),
      );
    }
    default:
      return contentResponse(state, account, tab, path);
  }
}

export interface SocialnetSandboxOptions {
  /** Clock of session validity; `Date.now` by default. */
  now?: () => number;
}

/** A socialnet sandbox with its own session state (one per seed). */
export function createSocialnetSandbox(options: SocialnetSandboxOptions = {}): SandboxPlatform {
  const now = options.now ?? Date.now;
  const states = new Map<string, SeedState>();
  const stateOf = (seed: string): SeedState => {
    let state = states.get(seed);
    if (!state) {
      state = new SeedState(seed, now);
      states.set(seed, state);
    }
    return state;
  };

  const handle = (request: SandboxRequest, context: SandboxContext): SandboxResponse => {
    const state = stateOf(context.seed);
    const target = route(request.path, request.query);
    if (target.kind === 'graphql') return handleGraphql(state, request, context);
    const method = request.method.toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') {
      return { status: 405, headers: { 'content-type': 'text/plain; charset=utf-8', allow: 'GET, HEAD' }, body: 'Method Not Allowed' };
    }
    const search = request.query.toString();
    const path = `${request.path}${search ? `?${search}` : ''}`;

    const account =
      target.kind === 'page' ? accountByVanity(target.vanity) : target.kind === 'page-id' ? accountById(target.id) : undefined;
    const fault = account ? faultOf(account, context) : 0;
    if (typeof fault !== 'number') return fault;

    // a page request without the browser navigation headers gets the login wall.
    if (!isBrowserNavigation(request)) return withDelay(page(loginWall(new Rng(state.seed, `login-wall:${path}`), `${WWW}${path}`)), fault);

    switch (target.kind) {
      case 'home': {
        const session = state.sessions.issue();
        return page(homePage(new Rng(state.seed, `home:${session.load}`), session));
      }
      case 'people':
        return redirectTo(`/profile.php?id=${target.id}`, 301);
      case 'login':
        return page(loginWall(new Rng(state.seed, 'login'), `${WWW}/`));
      case 'checkpoint':
        return page(checkpointPage());
      case 'page':
      case 'page-id': {
        if (!account) return page(notFoundPage(), 404);
        if (target.kind === 'page-id' && account.vanity !== null) {
          return withDelay(redirectTo(vanityPath(account.vanity, target.tab), account.redirectStatus ?? 302), fault);
        }
        if (target.kind === 'page' && account.vanity !== null && target.vanity !== account.vanity) {
          return withDelay(redirectTo(`/${account.vanity}${target.rest}${search ? `?${search}` : ''}`, 301), fault);
        }
        return withDelay(accountPage(state, account, target.tab, path), fault);
      }
      default:
        return page(notFoundPage(), 404);
    }
  };

  return { name: 'socialnet', handle, catalogue: SOCIALNET_CATALOGUE };
}

/** The socialnet platform of the sandbox upstream. */
export const socialnetSandbox: SandboxPlatform = createSocialnetSandbox();
