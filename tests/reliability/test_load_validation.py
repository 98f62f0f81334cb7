"""Simulation.load refuses corrupt or crafted saves with ValueError.

A save is: magic "SEERSAV3", a 64-bit checksum (seer::Digest) of the rest,
then the payload. Bit flips and truncation fail the checksum; crafted blobs
(re-checksummed here) fail the field checks. Nothing crashes, and a refused
load leaves the simulation as it was.
"""

import random
import struct

import pytest

import seer_env
from seer_env.testing.save_format import HEADER, rechecksum

EVENT = struct.Struct("<dIIQII64s")  # seer::Event: time, target, source, seq, kind, reserved


class Layout:
    """Offsets of the fields of a format-2 save."""

    def __init__(self, blob):
        self.n, self.state, self.public = struct.unpack_from("<QQQ", blob, HEADER)
        self.now = HEADER + 24
        self.entities = self.now + 32
        self.per_entity = self.state + self.public + 20
        self.pending = self.entities + self.n * self.per_entity
        self.events = self.pending + 8

    def rng_used(self, e):
        return self.entities + e * self.per_entity + self.state + self.public + 8


@pytest.fixture
def saved():
    sim = seer_env.Simulation("phold", {"num_entities": 8, "population": 2})
    sim.reset(3)
    sim.run_until(2.0)
    return sim, sim.save()


def assert_refused(sim, blob, match):
    digest_before = sim.digest()
    with pytest.raises(ValueError, match=match):
        sim.load(blob)
    assert sim.digest() == digest_before  # a refused load changes nothing


def test_the_checksum_matches_the_python_mirror(saved):
    sim, blob = saved
    assert blob[:8] == b"SEERSAV3"
    assert rechecksum(blob) == blob
    other = seer_env.Simulation("phold", {"num_entities": 8, "population": 2})
    other.load(blob)
    assert other.digest() == sim.digest()


def test_random_bit_flips_are_all_refused(saved):
    sim, blob = saved
    rng = random.Random(0)
    for _ in range(300):
        bit = rng.randrange(len(blob) * 8)
        flipped = bytearray(blob)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(ValueError):
            sim.load(bytes(flipped))
    for cut in (0, 7, 15, 16, 100, len(blob) - 1):
        with pytest.raises(ValueError):
            sim.load(blob[:cut])
    sim.load(blob)  # the original still loads


def test_an_older_format_is_refused_clearly(saved):
    sim, blob = saved
    with pytest.raises(ValueError, match="format version '2'; this seer_env reads '3' only"):
        sim.load(b"SEERSAV2" + blob[8:])


def crafted(blob, offset, fmt, value):
    out = bytearray(blob)
    struct.pack_into(fmt, out, offset, value)
    return rechecksum(out)


def test_crafted_fields_are_validated(saved):
    sim, blob = saved
    at = Layout(blob)
    (n_pending,) = struct.unpack_from("<Q", blob, at.pending)
    assert n_pending > 0
    ev0 = at.events
    cases = [
        (at.now, "<d", float("nan"), "clock nan"),
        (at.now, "<d", -1.0, "clock -1"),
        # Not steps x dt: the next step would end before the clock, and
        # run_until(now + 2 dt) walk up to 1e15 one dt at a time (a fuzzer hang).
        (at.now, "<d", 1e15, "is not steps x dt"),
        (at.now, "<d", 2.5, "is not steps x dt"),
        (at.rng_used(3), "<I", 1000, "entity 3 RNG counter"),
        (at.pending, "<Q", 1 << 60, "pending events in"),
        (at.pending, "<Q", n_pending + 1, "pending events in|bytes of outputs"),
        (ev0 + 8, "<I", 10**6, "to entity 1000000"),
        (ev0 + 12, "<I", 10**6, "from entity 1000000"),
        (ev0, "<d", float("nan"), "at t=nan"),
        (ev0, "<d", -5.0, "before the saved clock"),
        (ev0, "<d", float("inf"), "at t=inf"),
        (ev0 + 28, "<I", 7, "reserved"),
    ]
    for offset, fmt, value, match in cases:
        assert_refused(sim, crafted(blob, offset, fmt, value), match)
    if n_pending > 1:  # two events swapped: out of order
        out = bytearray(blob)
        a, b = ev0, ev0 + EVENT.size
        out[a : a + EVENT.size], out[b : b + EVENT.size] = blob[b : b + EVENT.size], blob[a:b]
        assert_refused(sim, rechecksum(out), "out of order")
    # Trailing or missing output bytes, before the identity trailer (its text, then its length).
    (id_size,) = struct.unpack_from("<Q", blob, len(blob) - 8)
    body_end = len(blob) - 8 - id_size
    assert_refused(sim, rechecksum(blob[:body_end] + b"\0" + blob[body_end:]), "bytes of outputs")
    assert_refused(sim, rechecksum(blob[: body_end - 1] + blob[body_end:]), "bytes of outputs")
    # A trailer that does not fit, or names another env.
    assert_refused(sim, rechecksum(blob[:-8] + struct.pack("<Q", len(blob))), "identity of")
    assert_refused(sim, rechecksum(blob + b"\0"), "identity of|different model")
    assert_refused(sim, rechecksum(blob[:-1]), "identity of|different model")
    sim.load(blob)  # and the original still loads


def test_pickled_envs_still_round_trip():
    import pickle

    from seer_env.envs import pcs_v0

    env = pcs_v0.parallel_env(width=3, height=3, seed=0)
    env.reset(seed=1)
    env.step({a: 1 for a in env.agents})
    copy = pickle.loads(pickle.dumps(env))
    assert copy.sim.digest() == env.sim.digest()
