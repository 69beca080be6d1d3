// Sessions of the socialnet sandbox (src/platforms/socialnet/README.md). Every page load
// that carries a session issues a new lsd token; the doc-id map rotates to a new generation
// every few loads (and at the first load after 15 minutes). A value stays accepted for two hours
// after it was last shown (README.md, "Session", asks for at least 30 minutes); a restart retires
// everything, as it allows. The
// `rotating` account additionally retires, for its own queries, every value issued before its
// last successful query.
import { Rng } from '../../common.ts';
import type { AccountSpec } from './accounts.ts';

export const FRIENDLY = {
  timeline: 'ProfileCometTimelineFeedRefetchQuery',
  reels: 'ProfileCometAppCollectionReelsRendererPaginationQuery',
  replies: 'Depth1CommentsListPaginationQuery',
} as const;
export type FriendlyName = (typeof FRIENDLY)[keyof typeof FRIENDLY];
const OTHER_QUERIES = ['CometNotificationsDropdownQuery', 'CometSearchBootstrapKeywordsDataSourceQuery'];

/** Page loads between two doc-id generations. */
export const DOC_ID_ROTATION = 3;
/** A generation first shown longer ago than this is replaced at the next page load. */
export const DOC_ID_MAX_AGE_MS = 15 * 60 * 1_000;
/** How long a value stays accepted after it was last shown. */
export const VALIDITY_MS = 2 * 60 * 60 * 1_000;
const MAX_TOKENS = 200_000;
const MAX_GENERATIONS = 20_000;

export interface IssuedSession {
  /** Number of this page load (0 for the first) of this seed. */
  load: number;
  lsd: string;
  generation: number;
  docIds: Record<string, string>;
  rev: number;
}

interface RotatingState {
  successes: number;
  minLoad: number;
  minGeneration: number;
}

const TOKEN = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

export class SessionStore {
  readonly #seed: string;
  readonly #now: () => number;
  #loads = 0;
  #generation = 0;
  #newGenerationPending = false;
  #generationOfStart = 0;
  #generationStartedAt: number;
  readonly #lsds = new Map<string, { load: number; at: number }>();
  /** Generation -> time it was last shown. */
  readonly #shown = new Map<number, number>();
  /** Doc id -> its generation and friendly name. */
  readonly #docIds = new Map<string, { generation: number; name: string }>();
  readonly #rotating = new Map<number, RotatingState>();

  constructor(seed: string, now: () => number) {
    this.#seed = seed;
    this.#now = now;
    this.#generationStartedAt = now();
  }

  /** Page loads so far (the number the next load gets). */
  get loads(): number {
    return this.#loads;
  }

  /** The doc-id map of a generation: 15 to 17 digits per friendly name. */
  docIdsOf(generation: number): Record<string, string> {
    const rng = new Rng(this.#seed, `doc-ids:${generation}`);
    const ids: Record<string, string> = {};
    for (const name of [...Object.values(FRIENDLY), ...OTHER_QUERIES]) ids[name] = rng.digits(rng.int(15, 17));
    return ids;
  }

  /** A new session for one page load. */
  issue(): IssuedSession {
    const load = this.#loads;
    this.#loads += 1;
    const now = this.#now();
    const aged = now - this.#generationStartedAt > DOC_ID_MAX_AGE_MS;
    if ((load > 0 && (load % DOC_ID_ROTATION === 0 || aged)) || this.#newGenerationPending) {
      this.#generation += 1;
      this.#newGenerationPending = false;
    }
    if (this.#generation !== this.#generationOfStart) {
      this.#generationOfStart = this.#generation;
      this.#generationStartedAt = now;
    }
    const generation = this.#generation;
    const docIds = this.docIdsOf(generation);
    if (!this.#shown.has(generation)) {
      for (const [name, id] of Object.entries(docIds)) this.#docIds.set(id, { generation, name });
      if (this.#shown.size >= MAX_GENERATIONS) {
        const oldest = this.#shown.keys().next().value as number;
        this.#shown.delete(oldest);
        for (const id of Object.values(this.docIdsOf(oldest))) this.#docIds.delete(id);
      }
    }
    this.#shown.set(generation, now);
    const rng = new Rng(this.#seed, `lsd:${load}`);
    const lsd = `AV${rng.chars(rng.int(9, 20), TOKEN)}`;
    this.#lsds.set(lsd, { load, at: now });
    if (this.#lsds.size > MAX_TOKENS) this.#lsds.delete(this.#lsds.keys().next().value as string);
    return { load, lsd, generation, docIds, rev: 1_017_654_321 + generation };
  }

  /** The load that issued a still-valid lsd, or null (1357004). */
  checkLsd(lsd: string, account: AccountSpec | undefined): number | null {
    const issued = this.#lsds.get(lsd);
    if (!issued || this.#now() - issued.at > VALIDITY_MS) return null;
    const rotating = account ? this.#rotating.get(account.no) : undefined;
    if (rotating && issued.load < rotating.minLoad) return null;
    return issued.load;
  }

  /** The generation of a still-valid doc id that is the doc id of `name`, or null (1675030). */
  checkDocId(name: string, docId: string, account: AccountSpec | undefined): number | null {
    const known = this.#docIds.get(docId);
    if (!known || known.name !== name) return null;
    const shown = this.#shown.get(known.generation);
    if (shown === undefined || this.#now() - shown > VALIDITY_MS) return null;
    const rotating = account ? this.#rotating.get(account.no) : undefined;
    if (rotating && known.generation < rotating.minGeneration) return null;
    return known.generation;
  }

  /**
   * After a successful query on the `rotating` account: retire, for its queries, the lsd tokens
   * (odd successes) or the doc ids (even successes) issued so far. The next page load starts a
   * new doc-id generation when doc ids were retired.
   */
  retireFor(account: AccountSpec): void {
    const state = this.#rotating.get(account.no) ?? { successes: 0, minLoad: 0, minGeneration: 0 };
    state.successes += 1;
    if (state.successes % 2 === 1) {
      state.minLoad = this.#loads;
    } else {
      state.minGeneration = this.#generation + 1;
      this.#newGenerationPending = true;
    }
    this.#rotating.set(account.no, state);
  }
}
