"""NumbaModels whose compiled loops never end (params["where"]), for the interrupt tests.

Kept in a file of its own, so that editing the tests does not invalidate its
numba cache.
"""

from numba_faulty import Faulty

import seer_env

# params["fault"] (Faulty's parameter) picks the loop: none, in on_event, in
# observe, in a @kernel helper that on_event calls, or an index past a helper's array.
NONE, IN_EVENT, IN_OBSERVE, IN_HELPER, HELPER_OVERRUN = range(5)


@seer_env.kernel
def never_ends(x):
    while x >= 0:  # x stays in 0..6
        x = (x + 1) % 7
    return x


@seer_env.kernel
def poke(out, i):
    out[i] = 1.0


class Endless(Faulty):
    """Faulty's ring of pings, with a loop that never ends where ``fault`` says."""

    @staticmethod
    def on_event(ctx, state, snapshot, params, kind, payload):
        state["pings"] += payload["hops"]
        if params["fault"] == IN_EVENT:
            x = 0
            while x >= 0:
                x = (x + 1) % 7
        if params["fault"] == IN_HELPER:
            state["pings"] += never_ends(0)

    @staticmethod
    def observe(agent, state, snapshot, params, out):
        if params["fault"] == IN_OBSERVE:
            i = 0
            while i >= 0:  # i stays in 0..2
                i = (i + 1) % 3
                out[0] = i
        if params["fault"] == HELPER_OVERRUN:
            poke(out, 1000)  # out holds one value
        out[0] = state["pings"]
