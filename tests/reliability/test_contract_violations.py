import math

import pytest
from executor_cases import executor_configs

import seer_env

VIOLATIONS = {
    1: "before now \\+ lookahead",
    2: "before now",
    3: "not an entity",
    4: "not finite",
}


def faulty(mode, executor="serial", num_threads=1, **kw):
    cfg = dict(num_entities=8, mode=mode, culprit=3, fail_after=2.0)
    cfg.update(kw.pop("config", {}))
    sim = seer_env.Simulation("faulty", cfg, executor=executor, num_threads=num_threads, **kw)
    sim.reset(0)
    return sim


def assert_recovers(sim):
    with pytest.raises(RuntimeError, match="reset"):
        sim.run_until(10.0)
    sim.reset(1)
    sim.run_until(1.0)  # before fail_after: works again
    assert sim.events_processed > 0


@pytest.mark.parametrize("executor,num_threads", executor_configs(4))
@pytest.mark.parametrize("mode", sorted(VIOLATIONS))
def test_contract_violations_name_entity_kind_and_times(mode, executor, num_threads):
    sim = faulty(mode, executor, num_threads)
    with pytest.raises(seer_env.ContractViolation, match=VIOLATIONS[mode]) as info:
        sim.run_until(10.0)
    err = info.value
    assert err.entity == 3
    assert err.kind in ("TOKEN", "TICK")
    assert err.time >= 2.0
    assert "entity 3" in str(err)
    if mode == 1:
        assert err.target == 4 and err.event_time < err.time + 0.25
    if mode == 4:
        assert math.isnan(err.event_time)
    assert_recovers(sim)


@pytest.mark.parametrize("executor,num_threads", executor_configs(4))
def test_handler_exception_reaches_python(executor, num_threads):
    sim = faulty(5, executor, num_threads)
    with pytest.raises(seer_env.HandlerError, match="deliberate failure") as info:
        sim.run_until(10.0)
    assert info.value.entity == 3 and info.value.time >= 2.0
    assert_recovers(sim)


def test_foreign_write_caught_only_in_checked_mode():
    sim = faulty(6)
    sim.run_until(10.0)  # unchecked: the breach goes unnoticed (documented)
    sim = faulty(6, check=True)
    with pytest.raises(seer_env.ContractViolation, match="wrote the state of entity 4") as info:
        sim.run_until(10.0)
    assert info.value.entity == 3 and info.value.target == 4
    assert_recovers(sim)


@pytest.mark.parametrize("executor,num_threads", executor_configs(4))
def test_event_budget_stops_a_cascade(executor, num_threads):
    sim = faulty(7, executor, num_threads, event_budget=10_000)
    with pytest.raises(seer_env.EventBudgetExceeded, match="10000"):
        sim.run_until(10.0)
    assert_recovers(sim)


def test_well_behaved_faulty_model_runs():
    sim = faulty(0, check=True)
    sim.run_until(20.0)
    assert sim.events_processed > 0
