import subprocess
import sys

import numpy as np
import pytest

import seer_env
from seer_env.testing.reference.phold import PholdReference

BENCH = dict(num_entities=1024, population=1, remote=0.25, work=0)


def run(config, seed, until, **options):
    sim = seer_env.Simulation("phold", config, **options)
    sim.reset(seed)
    sim.run_until(until)
    return sim


def test_same_seed_same_digest_across_runs():
    a = run(BENCH, 7, 50.0)
    b = run(BENCH, 7, 50.0)
    assert a.digest() == b.digest()
    assert a.events_processed == b.events_processed > 0


def test_same_digest_across_processes():
    code = (
        "import seer_env; s = seer_env.Simulation('phold', dict(num_entities=1024, remote=0.25));"
        "s.reset(7); s.run_until(50.0); print(s.digest())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) == run(dict(num_entities=1024, remote=0.25), 7, 50.0).digest()


def test_different_seeds_differ():
    assert run(BENCH, 1, 20.0).digest() != run(BENCH, 2, 20.0).digest()


@pytest.mark.parametrize(
    "config",
    [
        dict(num_entities=64, population=2, remote=0.25, mean=1.0, lookahead=0.1, dt=1.0),
        dict(num_entities=17, population=3, remote=0.9, mean=0.5, lookahead=0.05, dt=0.3),
        dict(num_entities=1, population=4, remote=0.5, mean=2.0, lookahead=1.0, dt=5.0),
    ],
)
def test_event_counts_match_independent_python_reference(config):
    ref = PholdReference(**config)
    ref.reset(11)
    ref.run_until(30.0)
    sim = run(config, 11, 30.0)
    assert sim.events_processed == ref.events_processed
    processed = sim.entity_states()[:, :8].copy().view(np.uint64).ravel()
    assert processed.tolist() == ref.processed.tolist()
    pending = sim.pending_events()
    ref_queue = sorted(ref.queue)
    assert pending["time"].tolist() == [q[0] for q in ref_queue]
    assert pending["target"].tolist() == [q[3] for q in ref_queue]


def test_remote_zero_counts_follow_renewal_process():
    # With remote=0 every token is an independent renewal process with mean
    # inter-event time L + mean; the count over T is ~ N * pop * T / (L + mean).
    sim = run(dict(num_entities=512, population=2, remote=0.0, mean=0.9, lookahead=0.1), 3, 200.0)
    expected = 512 * 2 * 200.0 / 1.0
    assert abs(sim.events_processed - expected) / expected < 0.02


def test_population_is_conserved_every_step():
    sim = seer_env.Simulation("phold", dict(num_entities=100, population=3, remote=0.5))
    sim.reset(0)
    for t in range(1, 40):
        sim.run_until(float(t))
        assert sim.pending_count == 300
        assert sim.now == float(t)


def test_save_load_continues_identically():
    a = run(BENCH, 5, 10.0)
    b = seer_env.Simulation("phold", BENCH)
    b.load(a.save())
    assert b.digest() == a.digest()
    a.run_until(20.0)
    b.run_until(20.0)
    assert a.digest() == b.digest()


def test_work_burns_compute_but_keeps_event_counts():
    light = run(dict(num_entities=64, work=0), 9, 20.0)
    heavy = run(dict(num_entities=64, work=100), 9, 20.0)
    assert light.events_processed == heavy.events_processed
    assert light.digest() != heavy.digest()  # the work accumulator is state


@pytest.mark.parametrize(
    "key,value",
    [
        ("num_entities", 0),
        ("population", 0),
        ("remote", 1.5),
        ("lookahead", 0.0),
        ("lookahead", -1.0),
        ("dt", 0.0),
        ("mean", float("nan")),
        ("num_entities", 2.5),
    ],
)
def test_invalid_config_names_key_and_value(key, value):
    with pytest.raises(ValueError, match=key):
        seer_env.Simulation("phold", {key: value})


def test_unknown_config_key_and_model_rejected():
    with pytest.raises(ValueError, match="lookahed"):
        seer_env.Simulation("phold", {"lookahed": 1.0})
    with pytest.raises(ValueError, match="model"):
        seer_env.Simulation("no_such_model", {})
    with pytest.raises(ValueError, match="executor"):
        seer_env.Simulation("phold", {}, executor="warp")
    with pytest.raises(ValueError, match="num_entities"):
        seer_env.Simulation("phold", {"num_entities": "many"})


def test_call_order_and_seed_validation():
    sim = seer_env.Simulation("phold", dict(num_entities=8))
    with pytest.raises(RuntimeError, match="before reset"):
        sim.run_until(1.0)
    for bad in (-1, 2**64, 1.5, "3", None):
        with pytest.raises(ValueError, match="seed"):
            sim.reset(bad)
    sim.reset(np.uint64(2**64 - 1))
    sim.reset(np.int32(4))
    sim.run_until(3.0)
    assert sim.events_processed > 0


def test_hot_spot_burns_more_only_at_the_hot_entities():
    # Same tokens, same routes (hot_work changes no random draw); only the
    # burned compute of entities below ceil(hot_fraction * n) differs.
    base = dict(num_entities=40, remote=0.5, work=3)
    plain = seer_env.Simulation("phold", base)
    hot = seer_env.Simulation("phold", dict(base, hot_fraction=0.2, hot_work=50))
    for sim in (plain, hot):
        sim.reset(9)
        sim.run_until(6.0)
    # Raw state bytes per entity: PholdState{u64 processed, u64 work_acc}.
    a = plain.entity_states().view(np.uint64)
    b = hot.entity_states().view(np.uint64)
    assert (a[:, 0] == b[:, 0]).all()
    differs = a[:, 1] != b[:, 1]
    busy = a[:, 0] > 0
    assert not differs[8:].any()
    assert (differs[:8] == busy[:8]).all() and busy[:8].any()
    assert plain.pending_events()["time"].tobytes() == hot.pending_events()["time"].tobytes()
