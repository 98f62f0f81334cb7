"""``seer_env.testing.verify``: every planted porting bug caught, and located."""

import re
import sys

import heat_ring_prototype
import pytest
from plugin_build import PLANTED, cmake_build

import seer_env
from seer_env.testing import verify


class HeatRing(heat_ring_prototype.HeatRing):
    """The prototype of tests/support/plugins/planted (the planted bugs live in the port)."""

    name = "planted_heat"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    build = cmake_build(PLANTED, tmp_path_factory.mktemp("planted"))
    sys.path.insert(0, str(build))
    try:
        import _planted_heat

        seer_env.register_cpp_model("planted_heat", _planted_heat)
        yield _planted_heat
    finally:
        sys.path.remove(str(build))


def _verify(mode, **kw):
    return verify("planted_heat", HeatRing, config={"mode": mode}, strict=False, **kw)


def _failed(report):
    return {c.name: c.detail for c in report.failures}


def test_a_python_model_alone_passes_with_parallel_executors_skipped():
    report = verify(HeatRing, seeds=(0, 1), steps=10)
    serial = next(c for c in report.checks if c.name == "serial equivalence")
    assert serial.status == "ok" and "a PythonModel runs serially" in serial.detail


@pytest.mark.slow
def test_a_faithful_port_passes(planted):
    report = _verify(0)
    assert report.ok, str(report)
    models = next(c for c in report.checks if c.name == "prototype vs port")
    assert "entity states, pending events and the digest" in models.detail
    assert "verify: passed" in str(report)


@pytest.mark.slow
def test_reordered_arithmetic_is_located_while_outputs_agree(planted):
    report = _verify(1, steps=100)
    assert list(_failed(report)) == ["prototype vs port"]
    detail = _failed(report)["prototype vs port"]
    assert re.search(r"at step \d+ \(outputs still equal\): entity \d+ state field 'heat'", detail)
    assert "state field 'heat'" in detail
    # The outputs alone would have passed all 100 steps.
    from seer_env.testing import assert_models_equivalent

    assert_models_equivalent(
        lambda: seer_env.SeerParallelEnv(HeatRing, {"mode": 1}),
        lambda: seer_env.SeerParallelEnv("planted_heat", {"mode": 1}),
        seeds=(0,),
        steps=100,
    )


@pytest.mark.slow
def test_a_neighbour_write_is_caught_with_checking_on(planted):
    detail = _failed(_verify(2))["contract (port)"]
    assert "[event-locality] seed 0, step 1" in detail
    assert re.search(r"entity 0 handling 'TICK' at t=0\.1\d* wrote the state of entity 1", detail)


@pytest.mark.slow
@pytest.mark.parametrize("num_threads", ["auto", 2])
def test_a_neighbour_write_is_caught_by_a_plain_env_with_default_arguments(planted, num_threads):
    # A silent 484 vs 494: the default first-steps checks stop it at step 1,
    # on any executor (a checked step runs one handler at a time).
    env = seer_env.SeerParallelEnv("planted_heat", {"mode": 2}, num_threads=num_threads)
    env.reset(seed=0)
    with pytest.raises(seer_env.ContractViolation) as info:
        env.step({a: 0 for a in env.agents})
    err = info.value
    assert re.search(r"entity 0 handling 'TICK' at t=0\.1\d* wrote the state of entity 1", str(err))
    assert (err.entity, err.kind, err.target) == (0, "TICK", 1) and 0.1 <= err.time < 0.11
    assert env.sim.needs_reset
    # Turned off, the breach runs silently (what the default is for).
    quiet = seer_env.SeerParallelEnv("planted_heat", {"mode": 2}, num_threads=1, check_steps=0)
    quiet.reset(seed=0)
    for _ in range(3):
        quiet.step({a: 0 for a in quiet.agents})


@pytest.mark.slow
def test_a_neighbour_live_read_is_located(planted):
    failed = _failed(_verify(3))
    where = r"\(seed 0\) at step \d+: entity \d+ state field 'heat'"
    assert re.search(rf"differs from serial {where}", failed["serial equivalence"])
    assert re.search(rf"port differs from prototype {where}", failed["prototype vs port"])


@pytest.mark.slow
def test_a_forgotten_reset_allocation_is_caught(planted):
    detail = _failed(_verify(4))["reset (reused env)"]
    assert "a reused env (reset(seed=0) after an episode with seed 0) differs" in detail
    assert re.search(r"at reset: entity \d+ state field 'heat'", detail)
    assert "reset_states" in detail


@pytest.mark.slow
def test_an_early_cross_event_is_caught(planted):
    failed = _failed(_verify(5))
    detail = failed["contract (port)"]
    assert "cross-entity event scheduled before now + lookahead" in detail
    assert "[event-locality] seed 0, step 1" in detail
    scheduled = r"entity \d+ handling 'action' at t=0 scheduled 'TOKEN' for entity \d+"
    assert re.search(scheduled, detail)
    assert "ContractViolation" in failed["serial equivalence"]


@pytest.mark.slow
def test_strict_verify_raises_the_readable_report(planted):
    with pytest.raises(AssertionError, match=r"verify: \d check\(s\) failed") as info:
        verify("planted_heat", HeatRing, config={"mode": 3}, seeds=(0,), steps=10)
    assert "  FAILED  serial equivalence: executor 'parallel'" in str(info.value)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="steps must be an int >= 1"):
        verify(HeatRing, steps=0)
    with pytest.raises(ValueError, match="seeds must name at least one seed"):
        verify(HeatRing, seeds=())
    with pytest.raises(ValueError, match="model must be a registered name"):
        verify(42)


@pytest.mark.slow
def test_the_heat_ring_speed_script_measures_both_ports(planted):
    import heat_ring_speed

    ratios = heat_ring_speed.measure([8], steps=2, rounds=1)
    assert set(ratios) == {(8, 0), (8, 1)}
    assert all(r.a_seconds > 0 and r.b_seconds > 0 for r in ratios.values())
