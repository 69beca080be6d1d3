// The upstream body's text (src/upstream/body.ts, utf8Text): whichever way it is decoded, it is
// what Buffer's toString('utf8') makes of the same bytes, invalid UTF-8 included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { utf8Text } from '../../src/upstream/body.ts';

test('utf8Text: the same text as toString for ASCII, every plane of Unicode and a byte-order mark', () => {
  const texts = ['', 'plain <p>ASCII</p>', 'Zoë Brontë', '\uFEFF<!doctype html>', 'a😀b', '中文字符', '𝌆'.repeat(3), '\uD7FF\uE000\uFFFF', 'x\u0000y', 'é'.repeat(5000)];
  for (const text of texts) {
    const bytes = Buffer.from(text, 'utf8');
    assert.equal(utf8Text(bytes), text, JSON.stringify(text.slice(0, 20)));
    assert.equal(utf8Text(bytes), bytes.toString('utf8'));
  }
});

test('utf8Text: invalid UTF-8 is decoded with the replacement characters toString gives', () => {
  const cases = [
    Buffer.from([0x61, 0xe2, 0x82, 0x62]), // a sequence cut short
    Buffer.from([0xc3, 0xa9, 0xff, 0x62]), // a byte that never starts a character, after a valid one
    Buffer.from([0xc0, 0x80]), // an overlong NUL
    Buffer.from([0xed, 0xa0, 0x80]), // a surrogate written as UTF-8
    Buffer.from([0xc3, 0xa9, 0xf0, 0x9f, 0x98]), // ends inside a character
  ];
  for (const bytes of cases) assert.equal(utf8Text(bytes), bytes.toString('utf8'), bytes.toString('hex'));
});
