"""pcs_v0: the classic PCS model, guard channels for handoffs.

Cells on a torus serve phones that call, hang up and move; every cell picks
its number of guard channels each step. The model, spaces, rewards, infos and
rendering are ``seer_env.envs.pcs``'s (:class:`~seer_env.envs.pcs.PcsEnv`);
this version's arguments and defaults are below.

```python
from seer_env.envs import pcs_v0

env = pcs_v0.parallel_env(width=32, height=32, executor="serial", seed=0)
observations, infos = env.reset()
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
print(env.unwrapped.stats())
```

| | |
|---|---|
| Import | ``from seer_env.envs import pcs_v0`` or ``seer_env.make("pcs_v0")`` |
| Observation shape | ``(10,)`` float32 |

## Arguments

<!-- declared arguments: generated from the model's declaration -->
``pcs_v0.parallel_env(width=32, height=32, channels=10, phones_per_cell=16,
call_interval=360.0, call_duration=180.0, move_interval=4500.0,
handoff_delay=1.0, step_minutes=60.0, handoff_weight=5.0, max_cycles=1000,
seed=None, executor=None, num_threads='auto', check=False, check_steps=2,
event_budget=50000000, render_mode=None)``

- ``width``: cells along x (a torus); 1..4096, default ``32``.
- ``height``: cells along y (a torus); 1..4096, default ``32``.
- ``channels``: channels per cell; 1..64, default ``10``.
- ``phones_per_cell``: phones per cell at reset (phones_per_cell * width *
  height <= 1e8); 1..65536, default ``16``.
- ``call_interval``: mean minutes between a phone's call attempts (exponential;
  >= call_duration / 1e4: a call's busy lines are drawn in one handler); > 0.0,
  default ``360.0``.
- ``call_duration``: mean minutes of a call (exponential); > 0.0, default
  ``180.0``.
- ``move_interval``: mean minutes between a phone's moves (exponential; >=
  call_interval / 1e4 and >= handoff_delay / 1e4: an idle phone's moves are
  drawn in one handler); > 0.0, default ``4500.0``.
- ``handoff_delay``: minutes a phone takes to arrive in another cell (the
  runtime's lookahead: larger values give the parallel executor more work per
  synchronization round); > 0.0, default ``1.0``.
- ``step_minutes``: simulated minutes per step; > 0.0, default ``60.0``.
- ``handoff_weight``: cost of a dropped handoff relative to a blocked call; >=
  0.0, default ``5.0``.
- ``max_cycles``: steps until every agent is truncated, >= 1 (an env version
  sets its own default); default ``1000``.
- ``seed``: seed of the first ``reset()`` without one (None: fresh entropy);
  ``reset()`` without a seed afterwards continues deterministically from the
  previous episode's seed; default ``None``.
- ``executor``: a name from ``seer_env.executor_names()``, or None: chosen with
  ``num_threads`` (``"serial"`` for 1 thread, else ``"parallel"``; STPA's
  choice for ``"auto"``); outputs never depend on it; default ``None``.
- ``num_threads``: threads of the executor (the calling thread included), or
  ``"auto"``: STPA chooses executor and pool size at the first ``reset()`` from
  a short preflight (``env.runtime.stpa`` says what and why; docs/stpa.md);
  default ``'auto'``.
- ``check``: run the contract checks on every step (no handler writes another
  entity's state or the snapshot; one handler at a time; about 1.3-3x an
  unchecked serial step); default ``False``.
- ``check_steps``: run the same checks on the first ``check_steps`` steps after
  the first ``reset()`` only (0: off), so that a breach raises
  ``ContractViolation`` at once; outputs are byte-identical either way; default
  ``2``.
- ``event_budget``: most events one step may handle (0: unlimited); default
  ``50000000``.
- ``render_mode``: None or one of the env's ``metadata['render_modes']``;
  default ``None``.
<!-- end of declared arguments -->

## Version history

- v0: initial release.
"""

from seer_env.envs.pcs import PcsEnv
from seer_env.envs.version import EnvVersion

VERSION = EnvVersion("pcs_v0", PcsEnv, declaration="pcs", defaults={"max_cycles": 1000})
parallel_env, raw_env, env = VERSION.functions(__name__)
__doc__ = VERSION.document(__doc__)
