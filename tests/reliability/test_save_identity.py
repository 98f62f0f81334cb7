"""A save loads only into an env of the same model and configuration.

A save ends with the identity of the env that wrote it: the model's name, every parameter as
the model read it (defaults included) and the spec's sizes and timing. Another model, size or
parameter is a ValueError naming what differs, and the env is left as it was. The executor and
thread count are not part of it: a serial save continues on the parallel executor.
"""

import pytest

import seer_env
from seer_env import _core


def saved(model, config, steps=2):
    sim = seer_env.Simulation(model, config)
    sim.reset(7)
    for _ in range(steps):
        sim.step(_zero_actions(sim))
    return sim.save()


def _zero_actions(sim):
    import numpy as np

    spec = sim.spec
    shape = (
        (spec["num_agents"],)
        if spec["action"]["discrete"]
        else (spec["num_agents"], spec["action"]["dim"])
    )
    return np.zeros(shape, np.int64 if spec["action"]["discrete"] else np.float32)


@pytest.mark.parametrize(
    "model,saved_config,other_config,match",
    [
        # Same entity count and record sizes: only the identity tells them apart.
        (
            "pcs",
            dict(width=4, height=2),
            dict(width=2, height=4),
            r"pcs with height=2 \(this env: 4\), width=4 \(this env: 2\)",
        ),
        (
            "pcs",
            dict(width=2, height=2, channels=10),
            dict(width=2, height=2, channels=12),
            r"pcs with channels=10 \(this env: 12\)",
        ),
        (
            "pcs",
            dict(width=2, height=2),
            dict(width=2, height=2, call_interval=100.0),
            r"pcs with call_interval=360 \(this env: 100\)",
        ),
        (
            "aircraft",
            dict(num_uavs=4, substeps=20),
            dict(num_uavs=4, substeps=5),
            r"aircraft with substeps=20 \(this env: 5\)",
        ),
        (
            "pcs",
            dict(width=2, height=2),
            dict(width=4, height=4),
            r"pcs with height=2 \(this env: 4\).*spec\.entities=4 \(this env: 16\)",
        ),
    ],
)
def test_a_save_of_another_configuration_is_refused_by_name(
    model, saved_config, other_config, match
):
    blob = saved(model, saved_config)
    other = seer_env.Simulation(model, other_config)
    other.reset(1)
    before = other.digest()
    with pytest.raises(
        ValueError, match="saved state is for a different model or configuration: " + match
    ):
        other.load(blob)
    assert other.digest() == before  # refused before anything changed
    other.step(_zero_actions(other))  # and still steps


def test_a_save_of_another_model_is_refused_by_name():
    blob = saved("pcs", dict(width=2, height=2))
    other = seer_env.Simulation("phold", dict(num_entities=4))
    with pytest.raises(ValueError, match="the save is of model 'pcs', this env runs 'phold'"):
        other.load(blob)


def test_defaults_spelled_out_are_the_same_configuration():
    blob = saved("pcs", dict(width=2, height=2))
    same = seer_env.Simulation("pcs", dict(width=2, height=2, channels=10, call_interval=360.0))
    same.load(blob)
    reference = seer_env.Simulation("pcs", dict(width=2, height=2))
    reference.load(blob)
    for sim in (same, reference):
        sim.step(_zero_actions(sim))
    assert same.digest() == reference.digest()


def test_the_executor_is_not_part_of_the_identity():
    blob = saved("pcs", dict(width=4, height=4))
    serial = seer_env.Simulation("pcs", dict(width=4, height=4))
    parallel = seer_env.Simulation(
        "pcs", dict(width=4, height=4), executor="parallel", num_threads=2
    )
    for sim in (serial, parallel):
        sim.load(blob)
        for _ in range(3):
            sim.step(_zero_actions(sim))
    assert serial.digest() == parallel.digest()


def test_the_vector_env_refuses_a_save_of_another_configuration():
    blob = saved("pcs", dict(width=4, height=2))
    vec = _core.VectorSimulation("pcs", dict(width=2, height=4), 2)
    with pytest.raises(ValueError, match=r"width=4 \(this env: 2\)"):
        vec.load(0, blob)
    vec_same = _core.VectorSimulation("pcs", dict(width=4, height=2), 2)
    vec_same.load(1, blob)
    alone = seer_env.Simulation("pcs", dict(width=4, height=2))
    alone.load(blob)
    assert vec_same.digest(1) == alone.digest()
