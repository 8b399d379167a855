// The page's one source of truth for what is on screen: a small store with subscribe.
//
//   state = {
//     choices,   // what the user chose: a sparse scenario, sent to the core and kept in the URL
//     scenario,  // the core's normalized echo of the shown result
//     result,    // the shown result (the core's JSON, as returned)
//     errors,    // the core's errors for the last rejected input ([] when the input was applied)
//   }
//
// State is replaced, never mutated: set() builds a new frozen state object and calls every
// subscriber synchronously with (state, previous). Views read the state they are given and
// never write to it; only the wiring in app.js calls set(). A subscriber that throws does not
// stop the others; the first error is re-thrown after all have run, so that the caller (the
// input handler) can show it. Nothing here knows about the DOM, so node tests import it as is.

export const EMPTY_STATE = Object.freeze({ choices: null, scenario: null, result: null, errors: Object.freeze([]) });

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

// Latest-wins sequencing for answers that arrive later (the worker's): take() stamps a request,
// current(stamp) says whether it is still the newest one. An answer for an older request is
// dropped instead of overwriting what the newer one put on screen.
export function createSequence() {
  let n = 0;
  return { take: () => ++n, current: (stamp) => stamp === n };
}
