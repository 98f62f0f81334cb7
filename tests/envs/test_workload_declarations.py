"""Workload declarations: exported from C++, and the one source of defaults, checks and docs.

The envs' signatures, argument checks and "Arguments" docs and the references'
defaults are derived from ``_core.workload_spec``; the record dtypes too. The
last test changes a default in the declaration only (in a fresh interpreter)
and shows that all of them follow.
"""

import inspect
import json
import subprocess
import sys

import numpy as np
import pytest

import seer_env
from seer_env import _core, workloads
from seer_env.envs import aircraft, aircraft_v0, pcs_v0
from seer_env.testing.reference.aircraft import UAV_STATE_DTYPE, AircraftParams
from seer_env.testing.reference.pcs import PcsReference

SMALL = {
    "pcs": {"width": 2, "height": 3},
    "pcs_v1": {"width": 2, "height": 3},
    "aircraft": {"num_uavs": 3},
    "aircraft_v1": {"num_uavs": 3},
    "phold": {"num_entities": 5},
    "faulty": {"num_entities": 4},
}
SPEC_KEYS = {
    "name",
    "summary",
    "params",
    "spaces",
    "info_keys",
    "total_keys",
    "event_kinds",
    "decisions",
    "action_mask",
}
PARAM_KEYS = {"name", "type", "default", "default_doc", "low", "high", "low_open", "high_is_cap"}


def signature_defaults(fn) -> dict:
    return {
        name: p.default
        for name, p in inspect.signature(fn).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_builtin_is_declared_and_its_records_match_the_cpp_sizes(name):
    assert name in _core.model_names()
    spec = _core.workload_spec(name)
    assert SPEC_KEYS | {"records"} == set(spec)
    assert spec["name"] == name
    for p in spec["params"]:
        assert PARAM_KEYS | {"doc"} == set(p), p["name"]
        assert p["type"] in ("int", "real") and p["doc"], p["name"]
        if p["default"] is not None:
            assert p["low"] <= p["default"] <= p["high"], p["name"]
    sim = seer_env.Simulation(name, SMALL[name])
    sim.reset(0)
    state = workloads.record_dtype(name, "state")
    assert state.itemsize == sim.entity_states().shape[1]
    assert workloads.entity_records(sim, state).shape == (sim.spec["num_entities"],)
    assert list(spec["info_keys"]) == list(sim.spec["info_keys"])
    assert list(spec["total_keys"]) == list(sim.spec["total_keys"])
    for record in spec["records"]:
        dtype = workloads.record_dtype(name, record)
        assert dtype.itemsize == spec["records"][record]["itemsize"]


def test_the_cpp_reader_uses_the_declared_defaults():
    # Every parameter passed explicitly at its declared default == nothing passed.
    for name, config in SMALL.items():
        spec = _core.workload_spec(name)
        full = {p["name"]: p["default"] for p in spec["params"] if p["default"] is not None}
        full.update(config)
        a, b = seer_env.Simulation(name, config), seer_env.Simulation(name, full)
        a.reset(1), b.reset(1)
        assert a.spec == b.spec and a.digest() == b.digest(), name


def test_unknown_workload_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"model must be one of .*pcs.*; got 'nope'"):
        _core.workload_spec("nope")
    with pytest.raises(ValueError, match=r"record must be one of .*state.*, got 'nope'"):
        workloads.record_dtype("pcs", "nope")


def test_uav_record_is_derived_from_the_cpp_struct():
    assert UAV_STATE_DTYPE == aircraft.UAV_STATE_DTYPE
    assert UAV_STATE_DTYPE.itemsize == 2304  # static_assert in aircraft.hpp
    assert UAV_STATE_DTYPE["table"].shape == (32,)
    assert UAV_STATE_DTYPE["table"].base.names == ("id", "pad", "pos", "vel", "t_heard")
    assert UAV_STATE_DTYPE.fields["table"][1] == 27 * 8 + 2 * 8 + 6 * 4


@pytest.mark.parametrize(
    ("version", "reference_defaults", "name"),
    [
        (pcs_v0, lambda: signature_defaults(PcsReference.__init__), "pcs"),
        (
            aircraft_v0,
            # the generated __init__ (dataclasses.fields() filters by a sentinel that a
            # library reloading the dataclasses module replaces: empty in a long run)
            lambda: signature_defaults(AircraftParams.__init__),
            "aircraft",
        ),
    ],
)
def test_env_signature_docs_and_reference_come_from_the_declaration(
    version, reference_defaults, name
):
    spec = _core.workload_spec(name)
    declared = workloads.model_defaults(spec)
    env = signature_defaults(version.parallel_env)
    assert list(env)[: len(declared)] == list(declared)  # declared order, then runtime args
    assert {k: env[k] for k in declared} == declared
    ref = reference_defaults()
    assert set(declared) <= set(ref), (sorted(ref), sorted(declared))
    assert {k: ref[k] for k in declared} == declared
    assert workloads.arguments_doc(spec) in version.__doc__


def test_env_rejects_undeclared_arguments_like_a_plain_function():
    with pytest.raises(TypeError, match="unexpected keyword argument 'widht'"):
        pcs_v0.parallel_env(widht=3)
    env = pcs_v0.parallel_env(3, 2, executor="serial")  # positional: width, height
    assert (env.width, env.height) == (3, 2)


CHANGED_DEFAULT = r"""
import json, sys
import seer_env
from seer_env import _core

original = _core.workload_spec

def patched(name):
    spec = original(name)
    for p in spec["params"]:
        if p["name"] == "width":
            p["default"] = 7
    return spec

_core.workload_spec = patched
import inspect
from seer_env.envs import pcs_v0
from seer_env.testing.reference.pcs import PcsReference

env = pcs_v0.parallel_env(executor="serial")
print(json.dumps({
    "signature": inspect.signature(pcs_v0.parallel_env).parameters["width"].default,
    "docs": "``width``: cells along x (a torus); 1..4096, default ``7``." in pcs_v0.__doc__,
    "docs_call": "pcs_v0.parallel_env(width=7, height=32" in pcs_v0.__doc__,
    "reference": inspect.signature(PcsReference.__init__).parameters["width"].default,
    "reference_built": PcsReference().width,
    "cpp_entities": env.sim.spec["num_entities"],
}))
"""


def test_a_default_changed_in_the_declaration_only_moves_env_docs_and_reference():
    out = subprocess.run(
        [sys.executable, "-c", CHANGED_DEFAULT], capture_output=True, text=True, check=True
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {
        "signature": 7,
        "docs": True,
        "docs_call": True,
        "reference": 7,
        "reference_built": 7,
        "cpp_entities": 7 * 32,
    }


class Declared(seer_env.PythonModel):
    """A ring that declares its parameters."""

    state_dtype = np.dtype([("n", "<u8"), ("v", "<f8", (2,))])
    event_kinds = ("TOKEN",)
    params = (
        {"name": "num_entities", "type": "int", "default": 4, "low": 1, "high": 64, "doc": "ring"},
        {"name": "delay", "type": "real", "default": 0.5, "low": 0.0, "high": 10.0,
         "low_open": True},
    )  # fmt: skip

    def __init__(self, num_entities, delay):
        super().__init__()
        self.num_entities = self.num_agents = num_entities
        self.lookahead, self.dt = delay, 1.0
        self.observation_space = seer_env.models.python_model.spaces.Box(0, 1, (1,), np.float32)

    def on_action(self, ctx, state, action):
        pass

    def on_event(self, ctx, state, event):
        pass

    def observe(self, agent, state, snapshot):
        return [0.0]

    def reward(self, agent, state, snapshot):
        return 0.0


def test_python_model_declares_itself_with_the_same_structure():
    spec = Declared.workload_spec()
    assert SPEC_KEYS | {"records"} == set(spec)
    assert {p["name"] for p in spec["params"]} == {"num_entities", "delay"}
    assert PARAM_KEYS <= set(spec["params"][0])
    assert np.dtype(spec["records"]["state"]) == Declared.state_dtype
    env = seer_env.SeerParallelEnv(Declared, {"num_entities": 3})
    assert len(env.possible_agents) == 3
    assert env.sim.spec["lookahead"] == 0.5  # the declared default
    with pytest.raises(
        ValueError, match=r"delay must be a finite number in \(0.0, 10.0\], got 0.0"
    ):
        seer_env.SeerParallelEnv(Declared, {"delay": 0})
    with pytest.raises(ValueError, match=r"unknown config key 'nope' for model Declared"):
        seer_env.SeerParallelEnv(Declared, {"nope": 1})


def test_declarations_match_names_the_first_difference():
    from seer_env.testing import assert_declarations_match

    assert_declarations_match("pcs", "pcs")
    with pytest.raises(AssertionError, match=r"declarations differ: params\[0\]"):
        assert_declarations_match("pcs", "aircraft")
    with pytest.raises(AssertionError, match=r"declarations differ: params"):
        assert_declarations_match(Declared, "phold")
