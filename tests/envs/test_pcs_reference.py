"""The C++ pcs model against the pure-Python reference: identical outputs, bytes compared."""

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from seer_env.envs import pcs_v0
from seer_env.testing.reference.pcs import PcsReference

CASES = [
    # grid, seed, handoff_delay, other arguments
    (4, 0, 1.0, {}),
    (4, 1, 7.5, dict(move_interval=150.0, channels=3)),
    (4, 2, 90.0, dict(move_interval=60.0, phones_per_cell=5)),  # L > step_minutes
    (8, 3, 0.25, dict(move_interval=400.0)),
    (8, 4, 3.0, dict(channels=6, call_duration=400.0, handoff_weight=2.5, step_minutes=45.0)),
]


def outputs(obs, infos):
    """Reset outputs, observations as raw float32 bytes (dict order included)."""
    return [list(obs), b"".join(o.tobytes() for o in obs.values()), list(infos.items())]


def step_outputs(obs, rew, term, trunc, infos):
    """Step outputs, observations as raw float32 bytes (dict order included)."""
    return outputs(obs, infos) + [list(rew.items()), list(term.items()), list(trunc.items())]


@pytest.mark.parametrize("grid,seed,handoff_delay,extra", CASES)
def test_cpp_model_equals_python_reference(grid, seed, handoff_delay, extra):
    args = dict(width=grid, height=grid, handoff_delay=handoff_delay, max_cycles=55, **extra)
    env = pcs_v0.parallel_env(**args)
    ref = PcsReference(**args)
    assert outputs(*env.reset(seed=seed)) == outputs(*ref.reset(seed=seed))
    rng = np.random.default_rng(seed)
    while env.agents:
        assert env.agents == ref.agents
        actions = {a: int(rng.integers(0, env.channels + 1)) for a in env.agents}
        assert step_outputs(*env.step(actions)) == step_outputs(*ref.step(actions))
        assert env.state().tobytes() == ref.state().tobytes()
        assert env.stats() == ref.stats()
        assert env.sim.pending_count == ref.pending_count == grid * grid * ref.phones_per_cell
    assert ref.agents == []
    assert env.stats()["handoffs"] > 0
    # reset() without a seed continues the same way in both
    assert outputs(*env.reset()) == outputs(*ref.reset())
    actions = {a: 0 for a in env.agents}
    assert step_outputs(*env.step(actions)) == step_outputs(*ref.step(actions))


def test_reference_is_a_parallel_env():
    parallel_api_test(PcsReference(width=3, height=3, phones_per_cell=4), num_cycles=30)
