// One handle is one person: the sandbox's platforms show the same name and bio for a handle
// wherever it exists (spelled `lunavoss` on socialnet and snapmsg, `luna.voss` on the link
// pages, `mixed-bag` on shopfront), as the service extracts them, so a demo that follows a
// person across platforms meets the same one.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startE2e, type E2e } from './harness.ts';

type Profile = Record<string, unknown>;
interface Seen {
  where: string;
  name: unknown;
  bio: unknown;
}

/** How to ask each platform for a handle, and where its answer holds the name and the bio. */
const ON = {
  socialnet: (handle: string) => ({ path: '/v1/socialnet/profile', query: { url: `https://www.socialnet.example/${handle}` }, read: (data: Profile) => data.profile as Profile, name: 'name', bio: 'intro' }),
  snapmsg: (handle: string) => ({ path: '/v1/snapmsg/profile', query: { username: handle }, read: (data: Profile) => data.profile as Profile, name: 'displayName', bio: 'bio' }),
  'linkpage-a': (handle: string) => ({ path: '/v1/linkpage-a/profile', query: { url: `https://linkpage-a.example/${handle}` }, read: (data: Profile) => data.profile as Profile, name: 'displayName', bio: 'bio' }),
  'linkpage-b': (handle: string) => ({ path: '/v1/linkpage-b/page', query: { url: `https://linkpage-b.example/${handle}` }, read: (data: Profile) => data.page as Profile, name: 'name', bio: 'description' }),
  shopfront: (handle: string) => ({ path: '/v1/shopfront/shop', query: { url: `https://www.shopfront.example/shop/${handle}` }, read: (data: Profile) => data.shop as Profile, name: 'name', bio: 'bio' }),
} as const;

/** Each person: the name the catalogue gives them (null for a generated one), and their handle on each platform. */
const PEOPLE: [name: string | null, handles: [keyof typeof ON, string][]][] = [
  ['Luna Voss', [['socialnet', 'lunavoss'], ['snapmsg', 'lunavoss'], ['linkpage-a', 'luna.voss'], ['linkpage-b', 'luna.voss']]],
  ['نور الحداد', [['socialnet', 'noor.haddad'], ['linkpage-b', 'noor.haddad']]],
  ['Rui Silva', [['socialnet', 'profile.php?id=61500098707727989'], ['linkpage-a', 'rui.silva'], ['linkpage-b', 'rui.silva']]],
  // (snapmsg usernames have at most 15 characters; the generated linkpage-b page of this one is a sparse page, without a name.)
  ['Tidewater Kitchen', [['socialnet', 'tidewaterkitchen'], ['linkpage-a', 'tidewaterkitchen'], ['shopfront', 'tidewaterkitchen']]],
  ['Luna Cooks', [['shopfront', 'lunacooks'], ['snapmsg', 'lunacooks'], ['linkpage-a', 'lunacooks'], ['linkpage-b', 'lunacooks']]],
  [null, [['snapmsg', 'mixedbag'], ['linkpage-b', 'mixed.bag'], ['shopfront', 'mixed-bag']]],
  [null, [['snapmsg', 'anyname42'], ['linkpage-a', 'anyname42'], ['linkpage-b', 'anyname42'], ['shopfront', 'anyname42']]],
];

describe('one handle is one person on every platform of the sandbox', () => {
  let e2e: E2e;
  before(async () => {
    e2e = await startE2e();
  });
  after(() => e2e.close());

  for (const [name, handles] of PEOPLE) {
    test(`${name ?? handles[0]?.[1]}: ${handles.map(([platform, handle]) => `${platform} ${handle}`).join(', ')}`, async () => {
      const seen: Seen[] = [];
      for (const [platform, handle] of handles) {
        const ask = ON[platform](handle);
        const response = await e2e.get(ask.path, ask.query);
        assert.equal(response.status, 200, `${platform} ${handle}: ${JSON.stringify(response.body).slice(0, 300)}`);
        const profile = ask.read(response.body.data);
        seen.push({ where: `${platform} ${handle}`, name: profile[ask.name], bio: profile[ask.bio] });
      }
      const shown = JSON.stringify(seen, null, 1);
      assert.equal(new Set(seen.map((each) => each.name)).size, 1, `one name:\n${shown}`);
      if (name !== null) assert.equal(seen[0]?.name, name);
      // A bio wherever the account has one (socialnet's id-only profile of Rui Silva has one too).
      const bios = seen.filter((each) => each.bio !== null && each.bio !== undefined && each.bio !== '');
      assert.ok(bios.length >= 2, `bios to compare:\n${shown}`);
      assert.equal(new Set(bios.map((each) => each.bio)).size, 1, `one bio:\n${shown}`);
    });
  }
});
