"""``seer_env.NumbaModel``: a model in Python whose handlers run compiled, in parallel.

Write the model once, as plain functions over numpy records; run it

* **interpreted** (``compiled=False``): through ``PythonModel``, serial, with
  ``print`` and a debugger; or
* **compiled** (the default, ``pip install seer_env[numba]``): numba compiles
  every handler to a C function (a ``cfunc`` in nopython mode) that the C++
  runtime calls on its worker threads, without the GIL, on any executor.

Both modes call the same runtime for random draws and scheduling
(``seer_env.handler_api``), so they are byte-identical; the testing kit checks
it (``assert_models_equivalent``). The records are numpy structured dtypes
without padding, like a ``PythonModel``'s; the handlers are static functions
(numba compiles functions, not methods)::

    import numpy as np
    from gymnasium import spaces
    import seer_env
    from seer_env import handler_api as api

    class Ring(seer_env.NumbaModel):
        state_dtype = np.dtype([("tokens", "<u8")])
        public_dtype = np.dtype([("tokens", "<u8")])
        payload_dtype = np.dtype([("hops", "<u8")])
        params_dtype = np.dtype([("delay", "<f8")])
        event_kinds = ("TOKEN",)

        def __init__(self, n=8, delay=0.5, compiled=True):
            super().__init__(compiled=compiled)
            self.num_entities = self.num_agents = n
            self.lookahead, self.dt = delay, 1.0
            self.observation_space = spaces.Box(0, np.inf, (1,), np.float32)
            self.action_space = spaces.Discrete(2)
            self.params_record = self.make_params(delay=delay)

        @staticmethod
        def on_action(ctx, state, snapshot, params, action):
            ...

Handlers (entity-local; ``state`` is the entity's own writable record,
``snapshot`` the read-only array of public records, ``params`` the read-only
parameter record; ``on_action``, ``on_event``, ``write_snapshot``, ``observe`` and
``reward`` are required, the rest optional):

=====================================================  =============================
``reset(states, params)``                              episode start, states zeroed
``on_init(ctx, state, snapshot, params)``              initial events
``on_step_begin(ctx, state, snapshot, params)``        every entity, step start
``on_action(ctx, state, snapshot, params, action)``    int (Discrete) or float32[dim]
``on_event(ctx, state, snapshot, params, kind, payload)``  payload: a writable copy
``write_snapshot(state, public, params)``              the entity's snapshot record
``observe(agent, state, snapshot, params, out)``       fills float32[obs_dim]
``reward(agent, state, snapshot, params)``             returns a float
``terminated``/``truncated(agent, state, snapshot, params)``  return a bool
``info(agent, state, snapshot, params, out)``          fills int64[len(info_keys)]
``global_state(states, snapshot, params, out)``        fills float32[state_dim]
``totals(states, params, out)``                        fills int64[len(total_keys)]
=====================================================  =============================

Helper functions that handlers call must be decorated with ``@seer_env.kernel``
(plain Python when interpreted, compiled inline by numba otherwise).

Errors: an exception in a compiled handler becomes ``seer_env.HandlerError``
naming the entity, event kind and time (numba keeps no message in compiled
code: rerun with ``compiled=False`` to see it); a contract breach in
``schedule`` is ``seer_env.ContractViolation``, as for every model. Compiled
handlers are bounds-checked (``bounds_check``): an index out of range is a
``HandlerError`` too. Every loop of a compiled handler or helper polls for
an interrupt (``loop_polls``), so Ctrl-C stops even a loop that never ends.
``handler_api.schedule_values`` builds a payload without an allocation.

Compiled code is cached on disk (numba's cache; the generated entry points
under ``~/.cache/seer_env/numba`` or ``$SEER_ENV_NUMBA_CACHE``): the first
construction of a model class compiles (seconds, a progress line on stderr),
later ones in any process load it. The key holds the sources and the values
numba freezes into the code (globals and closure variables the handlers
reach, ``frozen_values``): a model reading a value that cannot be hashed
stably is not cached on disk (``compile_report()`` says why).

The package: ``model`` (the base class), ``compile`` (compiled mode), its
``entry_points`` (the generated C entry points), ``cache`` (the on-disk cache),
``frozen_values`` (the global values its key holds),
``abi`` (``handler_api`` in compiled code) and ``loop_polls`` (the interrupt
polls numba inserts), ``interpreted`` (interpreted
mode) and ``kernel`` (helpers of the handlers).
"""

from __future__ import annotations

from seer_env.models.numba.compile import NumbaCompileError, compile_report
from seer_env.models.numba.kernel import kernel
from seer_env.models.numba.model import NumbaModel

__all__ = ["NumbaCompileError", "NumbaModel", "compile_report", "kernel"]
