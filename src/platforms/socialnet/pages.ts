// Page requests (README.md) and the classification of a page response
//: content, gated, not found, blocked or unrecognised.
import { root, type Node } from '../shared/read.ts';
import { findPreloader, readBlocks, scanPage, PRELOADERS, type PreloaderKind, type ScannedPage, type SjsContent } from './html.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import type { Upstream, UpstreamResponse } from '../../upstream/types.ts';
import { PLATFORM, parseSocialnetUrl, type ProfileReference } from './urls.ts';

/** A page or answer that is not what README.md describes, where no single path names the problem. */
export const unrecognised = (what: string): UpstreamOutcome => new UpstreamOutcome('unrecognised', PLATFORM, what);

export type PageKind = 'profile' | 'reels' | 'about';

/** the upstream path of a page for a profile reference. */
export function pagePath(reference: ProfileReference, kind: PageKind): string {
  if (reference.kind === 'vanity') {
    const base = `/${encodeURIComponent(reference.vanity)}`;
    return kind === 'profile' ? base : kind === 'reels' ? `${base}/reels/` : `${base}/about_contact_and_basic_info`;
  }
  const base = `/profile.php?id=${reference.id}`;
  return kind === 'profile' ? base : kind === 'reels' ? `${base}&sk=reels_tab` : `${base}&sk=about_contact_and_basic_info`;
}

/**
 * References of the canonical URLs seen lately: the same profiles are asked for again and again.
 * Bounded in bytes too: a canonical URL is at most 2,048 characters (`url`'s limit), so 1,000
 * of them hold at most about 4 MiB with their references.
 */
const REFERENCES = new Map<string, ProfileReference>();
const MAX_REFERENCES = 1_000;

/** The profile reference of a canonical `url` parameter (as the endpoint's `normalise` made it). */
export function referenceOf(url: string | undefined): ProfileReference {
  const known = REFERENCES.get(url ?? '');
  if (known !== undefined) return known;
  const checked = parseSocialnetUrl(url ?? '');
  if (!checked.ok) throw new Error(`socialnet extractor given a url that normalise refuses: ${url}`);
  const reference = Object.freeze(checked.reference);
  if (REFERENCES.size >= MAX_REFERENCES) REFERENCES.delete(REFERENCES.keys().next().value ?? '');
  REFERENCES.set(url ?? '', reference);
  return reference;
}

const blocked = (message: string): UpstreamOutcome => new UpstreamOutcome('blocked', PLATFORM, message);
const notFound = (message: string): UpstreamOutcome => new UpstreamOutcome('not_found', PLATFORM, message);

/** a redirect that left the platform, or landed on a login, checkpoint or recover path. */
export function checkRedirect(response: UpstreamResponse): void {
  if (response.offPlatformLocation !== undefined) throw blocked(`redirected off the platform to ${response.offPlatformLocation}`);
  if (/^\/(login|checkpoint|recover)([/?#.]|$)/i.test(response.path)) throw blocked(`redirected to ${response.path}`);
}

const LOGIN_WALL_TITLE = 'socialnet - log in or sign up';

export type PageResult =
  | { kind: 'content'; page: ScannedPage; sjs: SjsContent; results: Map<PreloaderKind, Node>; via?: string }
  | { kind: 'gated'; page: ScannedPage; reason: string | null };

/**
 * GETs a page and classifies it (README.md, "Signals"; the client handles 429 and 5xx) inside the
 * client's retry loop. Content needs the header preloader plus `needs`; a missing one is
 * unrecognised, naming it. The preloader results come back as nodes under their kind.
 */
export function loadPage(upstream: Upstream, path: string, needs: readonly PreloaderKind[]): Promise<PageResult> {
  return fetchAndRead(upstream, { path, method: 'GET', kind: 'page' }, (response) => readPage(response, path, needs));
}

/** The signals of README.md, in order, for the answer to a page request for `path`. */
export function readPage(response: UpstreamResponse, path: string, needs: readonly PreloaderKind[]): PageResult {
  checkRedirect(response);
  if (response.status === 404) throw notFound(`HTTP 404 for ${path}`);
  if (response.status !== 200) throw blocked(`HTTP ${response.status} for ${path}`);
  const page = scanPage(response.body);
  const gate = page.markers.get('content_gate');
  if (gate !== undefined) return { kind: 'gated', page, reason: gate['data-gate-reason'] ?? null };
  const unavailable = page.markers.get('content_unavailable');
  if (unavailable !== undefined) throw notFound(`${path} is unavailable (${unavailable['data-reason'] ?? 'no reason'})`);
  const sjs = readBlocks(page.blocks);
  const results = new Map<PreloaderKind, Node>();
  for (const kind of ['header', ...needs] as const) {
    const result = findPreloader(sjs, kind);
    if (result !== undefined) results.set(kind, root(result, `${kind} preloader`));
  }
  if (results.has('header')) {
    const missing = needs.find((kind) => !results.has(kind));
    if (missing !== undefined) throw unrecognised(`${path} has no ${PRELOADERS[missing]}… preloader`);
    return { kind: 'content', page, sjs, results, ...(response.via ? { via: response.via } : {}) };
  }
  if (page.title === LOGIN_WALL_TITLE || page.markers.has('login_form')) throw blocked(`login wall instead of ${path}`);
  throw unrecognised(`${path} has no ${PRELOADERS.header}… preloader`);
}
