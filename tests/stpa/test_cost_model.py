"""The static cost model (``seer_env.stpa.cost_model``): the pool sizes worth measuring."""

import pytest

from seer_env.stpa import cost_model

# Every test: its own cache file and memo, no SEER_NUM_THREADS, a quiet machine
# (conftest.py).
pytestmark = pytest.mark.usefixtures("isolated")


def big_trace(seconds=2e-3, events=50_000, rounds=10, entities=65_536):
    return cost_model.Trace(seconds, events, events / 4, rounds, entities, 1024, 0.1)


def test_thread_ladder_doubles_from_one_and_ends_at_the_usable_threads():
    assert cost_model.ladder(1) == [1]
    assert cost_model.ladder(6) == [1, 2, 4, 6]
    assert cost_model.ladder(64) == [1, 2, 4, 8, 16, 32, 64]


@pytest.mark.parametrize("cores", [64, 128, 256])
def test_plan_keeps_preflight_bounded_on_many_cores(cores):
    plan = cost_model.plan(big_trace(), cores, cores)
    assert plan.best in plan.measure
    assert 1 <= len(plan.measure) <= cost_model.MAX_PARALLEL_CANDIDATES
    assert all(p <= cores for p in plan.measure)


def test_plan_skips_parallel_for_tiny_steps():
    tiny = cost_model.Trace(3e-6, 30, 5, 10, 64, 64, 0.1)
    assert cost_model.plan(tiny, 64, 64).measure == []
    # ... unless serial is not an option.
    assert cost_model.plan(tiny, 64, 64, serial_allowed=False).measure


def test_plan_prefers_more_threads_for_more_work():
    small = cost_model.plan(big_trace(seconds=50e-6, events=500, entities=512), 64, 64).best
    large = cost_model.plan(big_trace(seconds=50e-3), 64, 64).best
    assert small < large


def test_model_counts_smt_siblings_less():
    trace = big_trace()
    assert cost_model.predict_seconds(trace, 16, 8) > cost_model.predict_seconds(trace, 16, 16)


def test_next_size_hill_climbs():
    assert cost_model.next_size({8: 1.0, 16: 0.5}, 64) == 32
    assert cost_model.next_size({8: 0.5, 16: 1.0}, 64) == 4
    assert cost_model.next_size({4: 1.0, 8: 0.5, 16: 1.0}, 64) is None
    assert cost_model.next_size({32: 1.0, 64: 0.5}, 64) is None
