"""Snapshots from elsewhere: another env, corrupt or crafted bytes, wrong calls.

Every refusal is a ValueError (RuntimeError for a call at the wrong time) that names what is
wrong, and the env that refused steps on exactly as before (compared with a shadow env).
"""

import json
import struct
import zlib

import numpy as np
import pytest

import seer_env
from seer_env.env import SeerParallelEnv
from seer_env.envs import aircraft_v0, pcs_v0
from seer_env.snapshot import MAGIC, Snapshot

CONFIG = dict(width=3, height=2, max_cycles=20)


@pytest.fixture
def snap():
    env = pcs_v0.parallel_env(**CONFIG)
    env.reset(seed=1)
    for _ in range(3):
        env.step({a: 1 for a in env.agents})
    return env.snapshot()


def assert_refused_and_unchanged(snapshot, match, *, error=ValueError, **config):
    env = pcs_v0.parallel_env(**{**CONFIG, **config})
    shadow = pcs_v0.parallel_env(**{**CONFIG, **config})
    env.reset(seed=5)
    shadow.reset(seed=5)
    env.step({a: 2 for a in env.agents})
    shadow.step({a: 2 for a in shadow.agents})
    with pytest.raises(error, match=match):
        env.restore(snapshot)
    for _ in range(3):
        assert (
            env.step({a: 0 for a in env.agents})[1] == shadow.step({a: 0 for a in shadow.agents})[1]
        )
    assert env.sim.digest() == shadow.sim.digest() and env.agents == shadow.agents


def test_another_configuration_is_named(snap):
    assert_refused_and_unchanged(
        snap, r"height=2 \(this env: 3\), width=3 \(this env: 2\)", width=2, height=3
    )
    assert_refused_and_unchanged(snap, r"channels=10 \(this env: 12\)", channels=12)


def test_another_max_cycles_or_workload_is_named(snap):
    assert_refused_and_unchanged(snap, r"max_cycles=20 \(this env: 21\)", max_cycles=21)
    uav = aircraft_v0.parallel_env(num_uavs=6)
    with pytest.raises(
        ValueError,
        match=r"snapshot is of another env: model='pcs' \(this env: "
        r"'aircraft'\)",
    ):
        uav.restore(snap)


def test_truncated_flipped_and_padded_bytes_are_refused(snap):
    data = bytes(snap)
    assert Snapshot.from_bytes(data) == snap
    rng = np.random.default_rng(0)
    for cut in (0, 7, 8, 20, len(data) // 2, len(data) - 1):
        assert_refused_and_unchanged(data[:cut], "truncated|lengths do not match")
    for _ in range(40):
        flipped = bytearray(data)
        i = int(rng.integers(len(data)))
        flipped[i] ^= 1 << int(rng.integers(8))
        assert_refused_and_unchanged(
            bytes(flipped),
            "magic|format version|lengths|checksum|saved state|snapshot",
        )
    assert_refused_and_unchanged(data + b"\0", "lengths do not match")


def crafted(header: dict, runtime: bytes) -> bytes:
    raw = json.dumps(header).encode()
    return MAGIC + struct.pack("<QIQ", len(raw), zlib.crc32(raw), len(runtime)) + raw + runtime


@pytest.mark.parametrize(
    "episode,match",
    [
        (dict(agents=["cell_0", "cell_0"]), "distinct agent names"),
        (dict(agents=["ghost"]), "distinct agent names"),
        (dict(agents="cell_0"), "distinct agent names"),
        (dict(cycles=-1), r"cycles must be an integer in \[0, 20\]"),
        (dict(cycles=21), r"cycles must be an integer in \[0, 20\]"),
        (dict(cycles=1.5), "cycles must be an integer"),
        (dict(cycles=True), "cycles must be an integer"),
        (dict(episode_seed=2**64), "episode_seed must be an integer"),
        (dict(checked_steps_left=None), "checked_steps_left must be an integer"),
    ],
)
def test_a_crafted_episode_record_is_refused_by_field(snap, episode, match):
    header = {"env": snap.env, "episode": {**snap.episode, **episode}}
    assert_refused_and_unchanged(crafted(header, snap.runtime), match)


@pytest.mark.parametrize(
    "data,match",
    [
        (b"SEERSNP2" + bytes(20), "format version"),
        (b"NOTSEER1" + bytes(20), "bad magic"),
        (MAGIC + struct.pack("<QIQ", 2**63, 0, 0), "lengths do not match"),
        (MAGIC + struct.pack("<QIQ", 0, 0, 2**63), "lengths do not match"),
        (crafted([1, 2], b""), "lacks its 'env' and 'episode'"),
        (MAGIC + struct.pack("<QIQ", 5, zlib.crc32(b"[[[[["), 0) + b"[[[[[", "not valid JSON"),
        ("a string", "must be a seer_env Snapshot or its bytes"),
        (None, "must be a seer_env Snapshot or its bytes"),
    ],
)
def test_bytes_that_are_no_snapshot_are_refused(data, match):
    assert_refused_and_unchanged(data, match)


def test_deep_json_nesting_is_a_value_error_not_a_crash(snap):
    raw = b"[" * 100_000 + b"]" * 100_000
    data = MAGIC + struct.pack("<QIQ", len(raw), zlib.crc32(raw), 0) + raw
    assert_refused_and_unchanged(data, "not valid JSON|lacks its")


def test_a_snapshot_at_the_wrong_time_is_a_runtime_error():
    env = pcs_v0.parallel_env(**CONFIG)
    with pytest.raises(RuntimeError, match="before reset"):
        env.snapshot()
    # A step that failed (a handler that throws: the test model "faulty", mode 5).
    faulty = SeerParallelEnv(
        "faulty", dict(num_entities=8, num_agents=4, mode=5, culprit=3, fail_after=0.0)
    )
    faulty.reset(seed=0)
    with pytest.raises(seer_env.HandlerError):
        faulty.step({a: 0 for a in faulty.agents})
    with pytest.raises(RuntimeError, match="failed or interrupted"):
        faulty.snapshot()
