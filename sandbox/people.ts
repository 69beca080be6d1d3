// The people (and businesses) behind the sandbox's handles. A handle is one person on every
// platform that has it: the socialnet page `lunavoss`, `lunavoss` on snapmsg and `luna.voss` on
// linkpage-a and linkpage-b are all Luna Voss, with one bio. The platforms spell a handle
// differently (dots, underscores, dashes, capitals, an `@`), so a person is found by the
// handle's key, without them. The catalogue's people have their names here; any other handle
// gets a name generated from the seed and its key alone, the same wherever it is asked for.
import { Rng, type TextFlavour } from './common.ts';

export interface Person {
  /** The display name every platform shows. */
  name: string;
  /** The bio every platform that has one shows (unless the account shows none). */
  bio: string;
}

/** What identifies a handle across platforms: lower case, without `@`, `.`, `_`, `-` or spaces. */
export const handleKey = (handle: string): string => handle.toLowerCase().replace(/[@._\s-]/g, '');

/**
 * The names of the catalogue's people and businesses, by handle key: every socialnet account
 * (whose names the catalogue shows), and the handles of the other platforms that stand for one.
 */
const NAMED: Readonly<Record<string, string>> = {
  lunavoss: 'Luna Voss',
  lunacooks: 'Luna Cooks',
  ruisilva: 'Rui Silva',
  noorhaddad: 'نور الحداد',
  sakurakato: '加藤 さくら',
  tidewaterkitchen: 'Tidewater Kitchen',
  metrodailynews: 'Metro Daily News',
  marinagallery: 'Marina Gallery',
  emojimixtape: 'Mixtape Café <3 🎧✨ "Late Night" & Co',
  quietcorner: 'Quiet Corner',
  emptyshelf: 'Empty Shelf Books',
  velvetcellar: 'Velvet Cellar',
  borderlandradio: 'Borderland Radio',
  membersonlyclub: 'Members Only Club',
  privatejournal: 'Private Journal',
  closedshop: 'Closed Shop',
  walledgarden: 'Walled Garden',
  checkpointed: 'Checkpointed Page',
  ratelimited: 'Rate Limited Page',
  throttledpage: 'Throttled Page',
  rotatingsessions: 'Rotating Sessions Diner',
  brokenlayout: 'Broken Layout Co',
  cursorrejects: 'Cursor Rejects Cafe',
  blankanswers: 'Blank Answers Bakery',
  lostpageinfo: 'Lost Page Info Deli',
  cutofffeed: 'Cut Off Feed Bar',
};

/** The catalogue's name for `handle`; throws for a handle that has none (a typo in a platform's accounts). */
export function namedPerson(handle: string): string {
  const name = NAMED[handleKey(handle)];
  if (name === undefined) throw new Error(`no named sandbox person ${handle}`);
  return name;
}

/**
 * The person behind `handle` for `seed`: the same on every platform. `flavour` is the text a
 * generated name and bio are written in (emoji, right-to-left, CJK, mixed scripts): a platform
 * passes its account's, the same for a handle wherever it is flavoured.
 */
export function personOf(seed: string, handle: string, flavour: TextFlavour = 'plain'): Person {
  const key = handleKey(handle);
  const rng = new Rng(seed, `person:${key}`);
  return { name: NAMED[key] ?? rng.name(flavour), bio: rng.sentence(rng.int(6, 12), flavour) };
}
