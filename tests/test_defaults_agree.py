"""One set of defaults: the C++ models, the envs and the Python references must agree.

Each workload's defaults are written three times (the C++ config reader, the
env's signature, the reference's signature or dataclass). The equivalence
tests pass explicit configs, so a default changed in one place alone would go
unnoticed there; these tests catch it.
"""

import dataclasses
import inspect

import numpy as np

import seer_env
from seer_env.envs import aircraft_v0, pcs_v0
from seer_env.reference.aircraft import AircraftParams
from seer_env.reference.pcs import PcsReference

# Arguments of the envs that are not model parameters.
RUNTIME_ARGS = {"seed", "executor", "num_threads", "check", "event_budget", "render_mode"}


def signature_defaults(fn) -> dict:
    return {
        name: p.default
        for name, p in inspect.signature(fn).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def test_pcs_reference_has_the_env_defaults():
    env = signature_defaults(pcs_v0.PcsEnv.__init__)
    ref = signature_defaults(PcsReference.__init__)
    model_args = set(env) - RUNTIME_ARGS
    assert model_args <= set(ref), f"missing in PcsReference: {model_args - set(ref)}"
    assert {k: ref[k] for k in model_args} == {k: env[k] for k in model_args}


def test_aircraft_reference_has_the_env_defaults():
    env = signature_defaults(aircraft_v0.AircraftEnv.__init__)
    ref = {f.name: f.default for f in dataclasses.fields(AircraftParams)}
    model_args = set(env) - RUNTIME_ARGS - {"max_cycles"}
    assert model_args <= set(ref), f"missing in AircraftParams: {model_args - set(ref)}"
    assert {k: ref[k] for k in model_args} == {k: env[k] for k in model_args}


def test_envs_with_defaults_equal_the_cpp_models_with_defaults():
    # Same state after reset and three steps <=> same parameters, as far as
    # they matter; the env passes every parameter, the bare Simulation none.
    for module, model in ((pcs_v0, "pcs"), (aircraft_v0, "aircraft")):
        env = module.parallel_env(seed=5, executor="serial")
        env.reset()
        sim = seer_env.Simulation(model, {})
        sim.reset(5)
        assert env.sim.spec == sim.spec, model
        shape = env.action_space(env.possible_agents[0]).shape
        dtype = np.int64 if model == "pcs" else np.float32  # Discrete vs Box actions
        actions = np.zeros((len(env.possible_agents), *shape), dtype)
        for _ in range(3):
            env.step_arrays(actions)
            sim.step(actions)
            assert env.sim.digest() == sim.digest(), model
