"""``verify`` on every route: NumbaModel ports, env factories, serial-only models."""

import re

import heat_ring_numba
import heat_ring_prototype
import pytest

import seer_env
from seer_env.envs import pcs_v0
from seer_env.testing import assert_serial_equivalent, verify

pytest.importorskip("numba")

HeatRing = heat_ring_prototype.HeatRing
HeatRingNumba = heat_ring_numba.HeatRingNumba


def _failed(report):
    return {c.name: c.detail for c in report.failures}


def _verify_numba(mode, **kw):
    kw.setdefault("steps", 20)
    return verify(HeatRingNumba, HeatRing, config={"mode": mode}, strict=False, **kw)


def test_a_faithful_numba_port_passes_on_states_events_totals_and_digest():
    report = _verify_numba(0)
    assert report.ok, str(report)
    checks = {c.name: c for c in report.checks}
    assert checks["declarations"].status == "ok"
    assert "9 runs" in checks["serial equivalence"].detail  # parallel executors ran
    for name in ("prototype vs port", "interpreted vs compiled (port)"):
        assert "entity states, pending events and the digest" in checks[name].detail


def test_a_reordered_float_expression_in_a_numba_port_is_located_while_outputs_agree():
    detail = _failed(_verify_numba(1))["prototype vs port"]
    assert re.search(r"at step \d+ \(outputs still equal\): entity \d+ state field 'heat'", detail)


def _refused(cls, hook, argument):
    """verify's report on a port whose compilation is refused: every port check, located."""
    failed = _failed(verify(cls, HeatRing, config={"mode": 0}, strict=False, steps=20))
    pattern = (
        rf"NumbaCompileError: {cls.__name__}\.{hook} writes a read-only record "
        rf"\(.*heat_ring_numba\.py\): line \d+ writes `{argument}`"
    )
    for check in ("declarations", "contract (port)", "prototype vs port"):
        assert re.search(pattern, failed[check]), failed[check]
    return failed


def test_a_neighbour_write_in_a_numba_port_is_refused_where_it_is_written():
    _refused(heat_ring_numba.NeighbourWrite, "on_event", "snapshot")


def test_state_kept_across_resets_in_a_numba_port_is_refused_where_it_is_written():
    failed = _refused(heat_ring_numba.KeptState, "reset", "params")
    # Interpreted, the parameter record is a read-only array: the write fails there too.
    assert "assignment destination is read-only" in failed["interpreted vs compiled (port)"]


def test_an_early_cross_event_in_a_numba_port_is_located():
    detail = _failed(_verify_numba(5))["contract (port)"]
    assert "cross-entity event scheduled before now + lookahead" in detail
    assert re.search(r"entity \d+ handling 'action' at t=0 scheduled 'TOKEN' for entity", detail)


def test_an_interpreted_numba_model_skips_parallel_executors_with_a_reason():
    report = verify(HeatRingNumba, config={"compiled": False}, seeds=(0,), steps=5)
    serial = next(c for c in report.checks if c.name == "serial equivalence")
    assert "parallel executors skipped (an interpreted NumbaModel" in serial.detail


def test_an_env_factory_that_ignores_executor_and_threads_fails():
    report = verify(lambda **kw: pcs_v0.parallel_env(width=2, height=2), strict=False, steps=2)
    detail = _failed(report)["serial equivalence"]
    assert "ran on executor 'serial' with 1 threads" in detail


def test_an_env_factory_receives_the_config_and_its_model_is_declared():
    def make(**kw):
        return seer_env.SeerParallelEnv(HeatRingNumba, {"mode": kw.pop("mode")}, **kw)

    report = verify(make, HeatRing, config={"mode": 1}, strict=False, seeds=(0,), steps=20)
    assert next(c for c in report.checks if c.name == "declarations").status == "ok"
    assert "(outputs still equal)" in _failed(report)["prototype vs port"]


class TotalsDiffer(HeatRing):
    total_keys = ("tokens",)

    def totals(self, states):
        return [int(states["tokens"].sum()) + 1]


class TotalsRight(HeatRing):
    total_keys = ("tokens",)

    def totals(self, states):
        return [int(states["tokens"].sum())]


def test_totals_are_compared():
    detail = _failed(verify(TotalsDiffer, TotalsRight, strict=False, seeds=(0,), steps=3))
    assert "at reset: ['totals']['tokens']: 0 (int) != 1 (int)" in detail["prototype vs port"]


def test_serial_equivalence_of_a_python_model_says_it_skips_threads():
    with pytest.warns(UserWarning, match=r"parallel executors skipped \(a PythonModel"):
        assert_serial_equivalent(
            lambda **kw: seer_env.SeerParallelEnv(HeatRing, {}, **kw), seeds=(0,), threads=(1, 2)
        )


def test_a_config_mismatch_says_how_many_agents_not_which():
    from seer_env.testing import assert_models_equivalent

    with pytest.raises(AssertionError) as info:
        assert_models_equivalent(
            lambda: pcs_v0.parallel_env(width=8, height=8),
            lambda: pcs_v0.parallel_env(width=32, height=32),
        )
    assert "possible_agents: 64 vs 1024 agents" in str(info.value)
    assert len(str(info.value)) < 300
