"""``handler_api.schedule_values``: a payload without an allocation, the same bytes as an array."""

import numba_payload_ring
import pytest

from seer_env import SeerParallelEnv
from seer_env.testing import assert_modes_equivalent, random_policy

pytest.importorskip("numba")

PayloadRing = numba_payload_ring.PayloadRing


def _digests(config, steps=6):
    env = SeerParallelEnv(PayloadRing, config, num_threads=1)
    env.reset(seed=3)
    digests = []
    for step in range(steps):
        env.step(random_policy(3, step, env))
        digests.append(env.sim.digest())
    states = env.sim.entity_states().tobytes()
    env.close()
    return digests, states


def test_schedule_values_packs_the_bytes_an_array_would():
    by_values, states = _digests({"by_array": 0})
    assert _digests({"by_array": 1}) == (by_values, states)
    assert states != bytes(len(states))  # the payloads arrived


def test_schedule_values_is_the_same_interpreted_and_compiled():
    assert_modes_equivalent(PayloadRing, {}, seeds=(0,), steps=5, threads=(1, 2))


def test_a_payload_changed_in_place_and_forwarded_is_the_same_interpreted_and_compiled():
    # Compiled, the handler's payload is the event's own bytes, not a copy.
    _, plain = _digests({})
    _, forwarded = _digests({"forward": 1})
    assert forwarded != plain
    assert_modes_equivalent(PayloadRing, {"forward": 1}, seeds=(0, 1), steps=6, threads=(1, 2))
