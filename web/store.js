// The one source of truth for what is on screen: {choices (the user's sparse scenario), scenario
// (the core's echo), result, errors, page (the link's other keys: hub, ladder, embed)}. set() replaces the frozen state and calls every subscriber
// with (state, previous); one that throws does not stop the others, the first error is re-thrown
// after all ran. Only app.js calls set() (docs/web.md, "How a change flows").

export const EMPTY_STATE = Object.freeze({ choices: null, scenario: null, result: null, errors: Object.freeze([]), page: Object.freeze({}) });

export function createStore(initial = {}) {
  let state = Object.freeze({ ...EMPTY_STATE, ...initial });
  const subscribers = new Set();
  return {
    get: () => state,
    // patch: some of the state's keys. Returns the new state.
    set(patch) {
      const previous = state;
      state = Object.freeze({ ...state, ...patch });
      let failure = null;
      for (const fn of [...subscribers]) {
        try { fn(state, previous); } catch (e) { failure ??= e; }
      }
      if (failure) throw failure;
      return state;
    },
    // fn(state, previous); returns the unsubscribe function.
    subscribe(fn) {
      subscribers.add(fn);
      return () => subscribers.delete(fn);
    },
  };
}

// Latest wins, for answers that arrive later: take() stamps a request, current(stamp) says
// whether it is still the newest.
export function createSequence() {
  let n = 0;
  return { take: () => ++n, current: (stamp) => stamp === n };
}
