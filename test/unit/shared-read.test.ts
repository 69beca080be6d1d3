// The shared reader: the three absent-data rules, the converters, and the paths its errors name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  UnrecognisedData,
  arrayOf,
  boolean,
  converter,
  id,
  integer,
  isTrue,
  isoFromMillis,
  isoFromSeconds,
  isoFromString,
  number,
  oneOf,
  root,
  string,
  text,
  url,
} from '../../src/platforms/shared/read.ts';

const page = root(
  {
    user: { name: 'Ada', bio: '', followers: 12, ratio: 0.5, verified: false, nothing: null, tags: ['a', 'b'] },
    edges: [{ node: { id: 7 } }, { node: { id: '8' } }, null],
    'dotted.key': { value: 1 },
  },
  'profile',
);

const failsAt = (run: () => unknown, message: string): void => {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof UnrecognisedData);
    assert.equal(error.message, message);
    return true;
  });
};

test('get: a required value, converted; absent or of the wrong kind names the exact path', () => {
  assert.equal(page.get('user.name', string), 'Ada');
  assert.equal(page.get('user.bio', string), '');
  assert.equal(page.get('user.followers', integer), 12);
  assert.equal(page.get('edges.1.node.id', string), '8');
  failsAt(() => page.get('user.missing', string), 'profile.user.missing: expected a string, found nothing');
  failsAt(() => page.get('user.nothing', string), 'profile.user.nothing: expected a string, found null');
  failsAt(() => page.get('user.ratio', integer), 'profile.user.ratio: expected an integer, found a non-integer number');
  failsAt(() => page.get('edges.0.node.id', string), 'profile.edges[0].node.id: expected a string, found a number');
  failsAt(() => page.get('user.bio', text), 'profile.user.bio: expected a non-empty string, found an empty string');
});

test('orNull: absent (missing, null, or blank for `text`) is null; present but wrong is still unrecognised', () => {
  assert.equal(page.orNull('user.missing', string), null);
  assert.equal(page.orNull('user.nothing', integer), null);
  assert.equal(page.orNull('user.bio', text), null);
  assert.equal(page.orNull('user.bio', string), '');
  assert.equal(page.orNull('user.name', text), 'Ada');
  failsAt(() => page.orNull('user.name', integer), 'profile.user.name: expected an integer, found a string');
});

test("orEmpty: absent is the converter's empty default", () => {
  assert.equal(page.orEmpty('user.missing', string), '');
  assert.equal(page.orEmpty('user.missing', integer), 0);
  assert.equal(page.orEmpty('user.missing', number), 0);
  assert.equal(page.orEmpty('user.missing', boolean), false);
  assert.deepEqual(page.orEmpty('user.missing', arrayOf(string)), []);
  assert.deepEqual(page.orEmpty('user.tags', arrayOf(string)), ['a', 'b']);
  assert.equal(page.orEmpty('user.verified', boolean), false);
  failsAt(() => page.orEmpty('user.tags', arrayOf(integer)), 'profile.user.tags: expected an array of integers, found an array');
});

test('nodes and lists: required, or null / [] when absent; elements carry their index in the path', () => {
  const user = page.node('user');
  assert.equal(user.path, 'profile.user');
  assert.equal(page.nodeOrNull('user.nothing'), null);
  failsAt(() => page.node('user.name'), 'profile.user.name: expected an object, found a string');
  failsAt(() => page.nodeOrNull('user.tags'), 'profile.user.tags: expected an object, found an array');
  const edges = page.list('edges');
  assert.deepEqual(
    edges.map((edge) => edge.path),
    ['profile.edges[0]', 'profile.edges[1]', 'profile.edges[2]'],
  );
  assert.equal(edges[0]?.get('node.id', id), '7');
  failsAt(() => edges[2]!.get('node.id', id), 'profile.edges[2].node.id: expected a string or integer id, found nothing');
  assert.deepEqual(page.listOrEmpty('missing'), []);
  assert.equal(page.listOrNull('user.nothing'), null);
  failsAt(() => page.list('user'), 'profile.user: expected an array, found an object');
  assert.deepEqual(
    page.list('user.tags').map((tag) => tag.get('', string)),
    ['a', 'b'],
  );
});

test('paths: array form for keys with dots; only own properties count', () => {
  assert.equal(page.get(['dotted.key', 'value'], integer), 1);
  assert.equal(page.at(['dotted.key', 'value']).path, 'profile.dotted.key.value');
  assert.equal(page.has('user.toString'), false);
  assert.equal(page.has('__proto__'), false);
  assert.equal(page.orNull('user.constructor', string), null);
  assert.equal(page.has('user.nothing'), false);
  assert.equal(page.has('user.bio'), true);
});

test('converters', () => {
  const one = (value: unknown) => root({ value }, 'x');
  assert.equal(one(1_700_000_000).get('value', isoFromSeconds), '2023-11-14T22:13:20.000Z');
  assert.equal(one(1_700_000_000_123).get('value', isoFromMillis), '2023-11-14T22:13:20.123Z');
  assert.equal(one('2024-05-01T12:00:00+02:00').get('value', isoFromString), '2024-05-01T10:00:00.000Z');
  assert.equal(one('2024-05-01T12:00:00.5Z').get('value', isoFromString), '2024-05-01T12:00:00.500Z');
  failsAt(() => one('2024-05-01').get('value', isoFromString), 'x.value: expected a date-time string, found a string');
  failsAt(() => one(8.64e15 + 1).get('value', isoFromMillis), 'x.value: expected epoch milliseconds, found a number');
  failsAt(() => one(1.5).get('value', isoFromMillis), 'x.value: expected epoch milliseconds, found a non-integer number');
  assert.equal(one('https://cdn.example/a.png').get('value', url), 'https://cdn.example/a.png');
  failsAt(() => one('/a.png').get('value', url), 'x.value: expected an absolute http(s) URL, found a string');
  assert.equal(one('a').get('value', oneOf(['a', 'b'], 'a')), 'a');
  failsAt(() => one('c').get('value', oneOf(['a', 'b'], 'a')), 'x.value: expected one of "a", "b", found a string');
  failsAt(() => one(2 ** 53).get('value', integer), 'x.value: expected an integer, found a number');
  assert.equal(one('yes').get('value', isTrue), false);
  assert.equal(one(true).get('value', isTrue), true);
  const upper = converter('an upper-case string', (value) => (typeof value === 'string' ? value.toUpperCase() : undefined), '');
  assert.equal(one('ab').get('value', upper), 'AB');
  assert.equal(root({}, 'x').orEmpty('value', upper), '');
});
