// The page's store (web/store.js): replaced state, synchronous subscribers, isolation of a failing
// subscriber, latest-wins sequencing. Plain node: the store knows nothing about the DOM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStore, createSequence, EMPTY_STATE } from '../../web/store.js';

test('starts empty, set() replaces the state and leaves the old one untouched', () => {
  const store = createStore();
  assert.deepEqual(store.get(), EMPTY_STATE);
  const first = store.get();
  const next = store.set({ choices: { model: 'm' } });
  assert.equal(store.get(), next);
  assert.notEqual(next, first);
  assert.equal(first.choices, null, 'the previous state is not mutated');
  assert.deepEqual(next.errors, []);
  assert.ok(Object.isFrozen(next));
  assert.throws(() => { 'use strict'; next.result = {}; }, TypeError);
});

test('subscribers run synchronously with (state, previous), in order, until unsubscribed', () => {
  const store = createStore();
  const seen = [];
  const off = store.subscribe((s, prev) => seen.push(['a', prev.choices, s.choices]));
  store.subscribe((s) => seen.push(['b', s.choices]));
  store.set({ choices: 1 });
  assert.deepEqual(seen, [['a', null, 1], ['b', 1]]);
  off();
  store.set({ choices: 2 });
  assert.deepEqual(seen.at(-1), ['b', 2]);
  assert.equal(seen.length, 3);
});

test('a throwing subscriber does not stop the others; the first error reaches the caller after all ran', () => {
  const store = createStore();
  const ran = [];
  store.subscribe(() => { ran.push(1); throw new Error('first'); });
  store.subscribe(() => { ran.push(2); throw new Error('second'); });
  store.subscribe(() => ran.push(3));
  assert.throws(() => store.set({ result: { ok: true } }), /first/);
  assert.deepEqual(ran, [1, 2, 3]);
  assert.deepEqual(store.get().result, { ok: true }, 'the state was set');
});

test('one set() is one notification with every key of the patch', () => {
  const store = createStore();
  const calls = [];
  store.subscribe((s) => calls.push([s.choices, s.scenario, s.result]));
  store.set({ choices: 'c', scenario: 's', result: 'r' });
  assert.deepEqual(calls, [['c', 's', 'r']]);
});

test('createSequence: only the newest stamp is current', () => {
  const seq = createSequence();
  const a = seq.take();
  const b = seq.take();
  assert.equal(seq.current(a), false);
  assert.equal(seq.current(b), true);
});
