// The shared URL helpers the platforms' URL rules are built from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { strictSegments } from '../../src/platforms/shared/url.ts';
import { parseLinkpageAUrl } from '../../src/platforms/linkpage-a/urls.ts';
import { parseLinkpageBUrl } from '../../src/platforms/linkpage-b/urls.ts';

test('strictSegments: decoded segments, one trailing slash allowed, empty segments and bad escapes refused', () => {
  const of = (path: string) => strictSegments(new URL(path, 'https://example.test'));
  assert.deepEqual(of('/name'), ['name']);
  assert.deepEqual(of('/name/'), ['name']);
  assert.deepEqual(of('/a/b%20c'), ['a', 'b c']);
  assert.equal(of('/'), null);
  assert.equal(of('//name'), null);
  assert.equal(of('/name//'), null);
  assert.equal(of('/%E0%A4%A'), null);
});

test('the link-in-bio URL rules take exactly one segment', () => {
  for (const parse of [parseLinkpageAUrl, parseLinkpageBUrl]) {
    const host = parse === parseLinkpageAUrl ? 'linkpage-a.example' : 'linkpage-b.example';
    assert.deepEqual(parse(`https://${host}/Mara.Quill/`), { ok: true, url: `https://${host}/mara.quill`, username: 'mara.quill' });
    for (const path of ['/', '/mara.quill//', '//mara.quill', '/mara.quill/links', '/%E0%A4%A']) {
      assert.equal(parse(`https://${host}${path}`).ok, false, `${host}${path}`);
    }
  }
});
