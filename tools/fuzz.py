"""Time-bounded fuzzing of the extension's input boundaries (``make fuzz``).

Hypothesis drives eleven targets until FUZZ_SECONDS (default 60) have passed:

- ``Simulation.load`` blobs: valid saves of every model, mutated by bit
  flips, truncation, random bytes, and field rewrites that keep the checksum
  valid (a crafted blob) in the runtime's fields (clock, RNG counters,
  pending count, event headers);
- configs: every declared parameter with in-range, edge and garbage values;
- action arrays: random dtypes, shapes and values for ``Simulation.step``;
- vector env calls: random interleavings of ``step_async``/``step_wait``/
  ``reset``/``close``/``step`` on the sync and async vector envs, every
  output and refusal checked against a serial model
  (``tests/support/vector_calls.py``);
- action dicts (``fuzz_dict_actions``) on small ``pcs_v1`` and
  ``aircraft_v1`` ParallelEnvs: keys in any order (``str`` or ``np.str_``),
  live agents left out, keys of agents that are done or of no agent, values
  of every Python and NumPy number type and of none (bools, None, strings,
  NaN, wrong shapes);
- TensorDict actions (``fuzz_tensordict_actions``) on TorchRL's batched env
  over the same envs: every integer, real and bool dtype (bfloat16, complex
  too), the spec's shape and wrong ones, with grad, not contiguous; skipped,
  and said so, where torch, tensordict or torchrl is not importable;
- snapshots (``fuzz_snapshots``): ``bytes(env.snapshot())`` bit-flipped,
  truncated, random, or with a header field or the runtime part rewritten
  behind valid checksums, into ``env.restore``: a refusal changes nothing
  (digest and agents against a shadow env);
- ``SEER_MEMORY_LIMIT`` values (any text, counts with and without units):
  an env builds and steps, or a ValueError names the variable;
- ``SEER_STPA_CACHE`` paths (a FIFO, a directory, garbage, links, the null
  device, a nested path): ``num_threads="auto"`` resets without blocking and
  leaves what is not a regular file alone;
- vector env reset masks (``fuzz_reset_masks``, sync and async): garbage is
  a ValueError naming ``reset_mask`` that changes nothing, a valid mask
  resets exactly its instances;
- Ctrl-C at random points of an episode (``fuzz_interrupt_points``, a SIGINT
  after a random delay): the env is consistent or refuses until ``reset()``,
  and after it equals a fresh env.

Every call must return or raise an ordinary exception (ValueError,
TypeError, RuntimeError, the seer errors), and the vector env calls must
match their model. The two action targets step a reference env, built alike,
with the same actions as canonical values (ints or int64, float32 clipped to
the Box): a valid action must give byte-identical outputs, an invalid one must
raise ValueError naming the action (TorchRL's RuntimeError for a TensorDict
of another batch size) and change nothing (the next valid step still matches).
A crash, a mismatch or a sanitizer report ends the run with a nonzero exit.
Run under ASan by ``make fuzz`` (the extension from build/asan, as ``make
asan-python`` does).

Usage: python tools/fuzz.py [PACKAGE_DIR]: with PACKAGE_DIR (a copy of
seer_env/ holding the ASan-built _core, as .ci/pytest_sanitized.py takes), that
package is imported instead of the editable install.

Limit (documented): a crafted blob's model state bytes and event payloads
are the model's own data and are not validated by the runtime; the checksum
refuses accidental corruption of them.
"""

import functools
import importlib
import json
import os
import signal
import stat
import struct
import sys
import threading
import time
import zlib

if len(sys.argv) > 1:  # the ASan build: bypass the editable install's import hook
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, os.path.abspath(sys.argv[1]))

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from seer_env import _core, vector  # noqa: E402

_core._register_comparison_executors()  # "locked" is among the fuzzed executors
from seer_env.envs import pcs_v0  # noqa: E402
from seer_env.snapshot import MAGIC  # noqa: E402
from seer_env.testing.save_format import HEADER, rechecksum  # noqa: E402

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support")
)
from envcases import digest  # noqa: E402
from vector_calls import CALLS, EXECUTORS, run_calls  # noqa: E402

try:  # the TensorDict target needs the torch extra; without it, main() says it is skipped
    import torch
    from tensordict import TensorDict

    from seer_env.integrations.torchrl import make_batched_env
except ImportError as exc:
    torch = None
    TORCH_MISSING = f"torch/tensordict/torchrl not importable ({exc})"
else:
    TORCH_MISSING = None

_core._register_test_models()  # faulty: fuzzed like the shipped models

EVENT_SIZE = 96
ORDINARY = (ValueError, TypeError, RuntimeError, OverflowError, KeyboardInterrupt)
SMALL = {
    "phold": {"num_entities": 8, "population": 2},
    "pcs": {"width": 3, "height": 2, "phones_per_cell": 3},
    "aircraft": {"num_uavs": 4},
    "faulty": {"num_entities": 6, "num_agents": 3},
}


def runtime_fields(blob):
    """(offset, size) of the fields the runtime validates (not model bytes)."""
    n, state, public = struct.unpack_from("<QQQ", blob, HEADER)
    fields = [(HEADER + 24 + 8 * i, 8) for i in range(4)]  # now, steps, events, seed
    per = state + public + 20
    at = HEADER + 56
    for e in range(n):
        rng = at + e * per + state + public
        fields += [(rng, 8), (rng + 8, 4), (rng + 12, 8)]
    pending = at + n * per
    fields.append((pending, 8))
    (count,) = struct.unpack_from("<Q", blob, pending)
    for i in range(min(count, 64)):
        ev = pending + 8 + i * EVENT_SIZE
        fields += [(ev, 8), (ev + 8, 4), (ev + 12, 4), (ev + 16, 8), (ev + 24, 4), (ev + 28, 4)]
    return fields


def saved(model):
    sim = _core.Simulation(model, SMALL[model], event_budget=100_000)
    sim.reset(7)
    sim.run_until(3.0 * sim.spec["dt"])
    return sim, sim.save()


BLOBS = {m: saved(m) for m in ("phold", "pcs", "aircraft")}


def exercise(sim):
    """A loaded sim must step (or refuse) without crashing."""
    try:
        sim.run_until(sim.now + 2.0 * sim.spec["dt"])
        sim.digest()
    except ORDINARY:
        pass


@st.composite
def mutated_blobs(draw):
    model = draw(st.sampled_from(sorted(BLOBS)))
    blob = bytearray(BLOBS[model][1])
    how = draw(st.sampled_from(["flip", "truncate", "random", "craft", "splice"]))
    if how == "flip":
        for bit in draw(st.lists(st.integers(0, len(blob) * 8 - 1), min_size=1, max_size=8)):
            blob[bit // 8] ^= 1 << (bit % 8)
    elif how == "truncate":
        blob = blob[: draw(st.integers(0, len(blob) - 1))]
    elif how == "random":
        blob = bytearray(draw(st.binary(max_size=4096)))
        if draw(st.booleans()):
            blob[:8] = b"SEERSAV3"[: len(blob)]
    elif how == "splice":
        cut = draw(st.integers(HEADER, len(blob)))
        blob = rechecksum(blob[:cut] + draw(st.binary(max_size=256)))
    else:
        fields = runtime_fields(bytes(blob))
        for _ in range(draw(st.integers(1, 4))):
            offset, size = draw(st.sampled_from(fields))
            value = draw(
                st.one_of(
                    st.integers(0, (1 << (8 * size)) - 1),
                    st.sampled_from([0, 1, 4, 5, (1 << (8 * size)) - 1, 1 << (8 * size - 1)]),
                )
            )
            if size == 8 and draw(st.booleans()):
                value = struct.unpack("<Q", struct.pack("<d", draw(st.floats())))[0]
            blob[offset : offset + size] = value.to_bytes(size, "little")
        blob = rechecksum(blob)
    return model, bytes(blob)


@given(mutated_blobs())
def fuzz_load(case):
    model, blob = case
    sim = _core.Simulation(model, SMALL[model], event_budget=100_000)
    try:
        sim.load(blob)
    except ValueError:
        return
    exercise(sim)


GARBAGE = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=5),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.sampled_from([float("nan"), float("inf"), -0.0, 1e-300, 1e300, 10**400]),
)


@st.composite
def configs(draw):
    model = draw(st.sampled_from(sorted(SMALL)))
    config = dict(SMALL[model])
    for p in _core.workload_spec(model)["params"]:
        if not draw(st.booleans()):
            continue
        lo, hi = p["low"], p["high"]
        if p["type"] == "int":
            value = draw(st.one_of(st.integers(lo - 2, min(hi, lo + 8) + 2), GARBAGE))
        else:
            top = min(hi, 1e6) if hi == hi else 1e6
            value = draw(st.one_of(st.floats(lo, top), st.floats(-1e3, 1e3), GARBAGE))
        config[p["name"]] = value
    return model, config


@given(configs(), st.sampled_from([("serial", 1), ("parallel", 2), ("locked", 2)]))
def fuzz_config(case, executor):
    model, config = case
    try:
        sim = _core.Simulation(
            model, config, executor=executor[0], num_threads=executor[1], event_budget=20_000
        )
        if sim.spec["num_entities"] > 4096:
            return  # valid but too large for a fuzz iteration
        sim.reset(1)
    except ORDINARY:
        return
    exercise(sim)


ACTIONS = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**70),
    st.text(max_size=4),
    st.lists(st.one_of(st.integers(-(2**65), 2**65), st.floats(), st.text(max_size=2)), max_size=9),
)


@given(
    st.sampled_from(sorted(BLOBS)),
    st.one_of(
        ACTIONS,
        st.tuples(
            st.sampled_from(["i8", "u1", "f4", "f8", "i4", "O", "b"]),
            st.lists(st.integers(0, 12), max_size=3),
            st.integers(0, 2**32),
        ),
    ),
)
def fuzz_actions(model, actions):
    sim = _core.Simulation(model, SMALL[model], event_budget=100_000)
    sim.reset(2)
    if isinstance(actions, tuple):
        dtype, shape, seed = actions
        rng = np.random.default_rng(seed)
        raw = rng.normal(0, 1e6, size=tuple(shape)) if shape else rng.normal()
        try:
            actions = np.asarray(raw).astype(dtype)
        except (ValueError, OverflowError):
            return
    try:
        sim.step(actions)
    except ORDINARY:
        return
    exercise(sim)


@given(st.sampled_from(["sync", "async"]), st.sampled_from(EXECUTORS), CALLS)
def fuzz_vector_calls(kind, executor, calls):
    run_calls(kind, executor, calls)


# -- actions as the PettingZoo dict path and TorchRL's batched env take them ---------------------
ACTION_ENVS = {
    "pcs_v1": {"width": 3, "height": 2, "phones_per_cell": 3},
    # Strong wind in a small box: UAVs crash within a few steps, so the dicts
    # also carry keys of agents that are done and the batches rows that are gone.
    "aircraft_v1": {
        "num_uavs": 4,
        "substeps": 2,
        "arena_size": 3.0,
        "ceiling": 3.0,
        "wind_speed": 40.0,
    },
}
ACTION_CYCLES = 5
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
NOT_ACTIONS = st.one_of(  # refused for any action space
    st.none(),
    st.booleans(),
    st.sampled_from([np.True_, np.False_, np.array(True), np.zeros(4, bool), 1j, {}, (), []]),
    st.text(max_size=4),
    st.binary(max_size=4),
    st.lists(st.one_of(st.none(), st.text(max_size=2)), min_size=1, max_size=4),
)


def action_env(name, seed):
    """A small serial env of ``name``, reset with ``seed``."""
    module = importlib.import_module(f"seer_env.envs.{name}")
    env = module.parallel_env(
        **ACTION_ENVS[name], max_cycles=ACTION_CYCLES, seed=seed, num_threads=1
    )
    return env, env.reset(seed=seed)


def box_canonical(raw, low, high):
    """What the env must act on for the numbers ``raw``: float32, clipped to the Box."""
    with np.errstate(over="ignore"):
        return np.clip(np.asarray(raw, dtype=np.float64).astype(np.float32), low, high)


@st.composite
def discrete_action(draw, n, faults):
    """``(canonical, value)``: an int in ``[0, n)`` and one way to write it, or ``(None, bad)``.

    ``faults``: whether the value may be bad (else always valid).
    """
    # Refused: not a number, not integral, outside the space.
    if faults and draw(st.integers(0, 3)) == 0:
        bad = st.one_of(
            NOT_ACTIONS,
            st.integers(-(2**70), -1),
            st.integers(n, 2**70),
            st.floats().filter(lambda x: not (x.is_integer() and 0 <= x < n)),
            st.tuples(st.sampled_from(FLOAT_DTYPES), st.sampled_from([-1.0, 0.5, n, np.nan])).map(
                lambda t: np.dtype(t[0]).type(t[1])
            ),
            st.sampled_from([np.int64(-1), np.uint64(2**64 - 1), np.int8(-128), np.uint8(n)]),
            st.lists(st.integers(0, n - 1), max_size=3),  # a list is no scalar: [k] too
            st.integers(0, n - 1).map(lambda k: np.array([k])),
        )
        return None, draw(bad)
    k = draw(st.integers(0, n - 1))
    dtype = st.sampled_from(INT_DTYPES + FLOAT_DTYPES)
    value = draw(
        st.one_of(
            st.just(k),
            st.just(float(k)),
            dtype.map(lambda d: np.dtype(d).type(k)),  # a NumPy scalar
            dtype.map(lambda d: np.array(k, dtype=d)),  # a 0-d array
        )
    )
    return k, value


@st.composite
def box_action(draw, dim, low, high, faults):
    """``(canonical, value)``: a float32 vector and one way to write it, or ``(None, bad)``."""
    if faults and draw(st.integers(0, 3)) == 0:  # refused: NaN, wrong shape, not numbers
        wrong = st.sampled_from([(), (dim - 1,), (dim + 1,), (1, dim), (dim, 1), (0,)])
        bad = st.one_of(
            NOT_ACTIONS,
            st.tuples(st.sampled_from(FLOAT_DTYPES), st.integers(0, dim - 1)).map(
                lambda t: np.array([0.0] * t[1] + [np.nan] * (dim - t[1]), dtype=t[0])
            ),
            st.tuples(st.sampled_from(INT_DTYPES + FLOAT_DTYPES), wrong).map(
                lambda t: np.zeros(t[1], dtype=t[0])
            ),
            st.integers(0, dim - 1).map(lambda i: [0.0] * i + [True] + [0.0] * (dim - 1 - i)),
            st.just(np.zeros(dim, complex)),
            st.just(np.array([0.0, None] + [0.0] * (dim - 2), dtype=object)),
        )
        return None, draw(bad)
    how = draw(st.sampled_from(["float32", "float64", "float16", "list", "tuple", "ints", "big"]))
    if how in ("ints", "big"):
        dtype = draw(st.sampled_from(INT_DTYPES))
        lo = 0 if dtype.startswith("u") else -3
        if how == "big":  # Python ints beyond int64: clipped like any out-of-range number
            raw = draw(st.lists(st.integers(-(2**70), 2**70), min_size=dim, max_size=dim))
            return box_canonical(raw, low, high), raw
        raw = draw(st.lists(st.integers(lo, 3), min_size=dim, max_size=dim))
        return box_canonical(raw, low, high), np.array(raw, dtype=dtype)
    inside = st.floats(float(low), float(high), width=32)
    anything = st.floats(allow_nan=False)  # infinities and huge values: clipped
    raw = draw(st.lists(st.one_of(inside, anything), min_size=dim, max_size=dim))
    if how == "float16":
        with np.errstate(over="ignore"):
            raw = np.array(raw).astype(np.float16).tolist()
    with np.errstate(over="ignore"):  # beyond float32: inf, clipped
        value = raw if how == "list" else tuple(raw) if how == "tuple" else np.array(raw, how)
    if isinstance(value, np.ndarray) and draw(st.booleans()):
        value = np.stack([value, value], axis=1)[:, 0]  # a strided view
    return box_canonical(raw, low, high), value


def canonical_dict(draw, env):
    """A valid dict of canonical values for every live agent, in ``env.agents`` order."""
    space = env.action_space(env.possible_agents[0])
    if not space.shape:  # Discrete
        return {a: draw(st.integers(0, space.n - 1)) for a in env.agents}
    dim = space.shape[0]
    values = st.lists(st.floats(-1.0, 1.0, width=32), min_size=dim, max_size=dim)
    return {a: np.array(draw(values), np.float32) for a in env.agents}


@given(st.sampled_from(sorted(ACTION_ENVS)), st.integers(0, 2**64 - 1), st.data())
def fuzz_dict_actions(name, seed, data):
    """Action dicts in any key order, subset, key and value type, against a reference env.

    The env under test gets the drawn dict; the reference, built alike, gets
    the same actions as canonical values (Python ints, float32 vectors) in
    ``env.agents`` order. A valid dict must give byte-identical outputs; an
    invalid one (a value outside the space or of no number type, a bool, a
    live Discrete agent left out, a key that is no agent's) must raise
    ValueError naming the actions and change nothing: the next valid step
    still matches the reference.
    """
    env, got = action_env(name, seed)
    ref, want = action_env(name, seed)
    assert digest(got) == digest(want)
    draw = data.draw
    space = env.action_space(env.possible_agents[0])
    discrete = not space.shape
    known = set(env.possible_agents)
    prefix = env.possible_agents[0].rsplit("_", 1)[0]
    unknown = st.one_of(
        st.integers(len(known), len(known) + 3).map(lambda k: f"{prefix}_{k}"),
        st.sampled_from([f"{prefix.upper()}_0", f"{prefix}_-1", f"{prefix}_00", "", b"x"]),
        st.text(max_size=6).filter(lambda key: key not in known),
        st.integers(-2, len(known)),
        st.none(),
        st.tuples(st.just(prefix), st.integers(0, 1)),
    )
    for _ in range(draw(st.integers(1, 8))):
        if not ref.agents:
            assert digest(env.reset()) == digest(ref.reset())
        live = list(ref.agents)
        assert env.agents == live
        faults = draw(st.booleans())  # else a valid dict (in any order, of any value types)
        entries, canonical, valid = [], {}, True
        for agent in live:
            if (faults or not discrete) and draw(st.integers(0, 7)) == 0:  # left out
                valid &= not discrete  # Box: the model's default action
                continue
            if discrete:
                value, given = draw(discrete_action(space.n, faults))
            else:
                value, given = draw(box_action(space.shape[0], space.low[0], space.high[0], faults))
            valid &= value is not None
            canonical[agent] = value
            key = np.str_(agent) if draw(st.booleans()) else agent  # an equal key of another type
            entries.append((key, given))
        done = sorted(known - set(live))
        for agent in draw(st.lists(st.sampled_from(done), unique=True)) if done else []:
            entries.append((agent, draw(st.one_of(NOT_ACTIONS, st.integers()))))  # ignored
        for key in draw(st.lists(unknown, max_size=2)) if faults else []:
            entries.append((key, 0))
        actions = dict(draw(st.permutations(entries)))
        valid &= all(key in known for key in actions)
        keys = list(actions)
        try:
            out = env.step(actions)
        except ValueError as exc:
            assert not valid, f"refused a valid dict: {exc}"
            assert str(exc).startswith("actions"), f"the message names no action: {exc}"
        else:
            assert valid, f"accepted an invalid dict {actions!r}"
            expected = ref.step({a: canonical[a] for a in live if a in canonical})
            assert digest(out) == digest(expected), "a valid dict stepped unlike the reference"
        assert list(actions) == keys, "step changed the caller's dict"
        assert env.agents == ref.agents
        if not valid and ref.agents:  # the refusal changed nothing: a valid step still matches
            actions = canonical_dict(draw, ref)
            assert digest(env.step(dict(actions))) == digest(ref.step(actions))
        if ref.agents:
            assert digest(env.state()) == digest(ref.state())


TORCH_DTYPES = [*INT_DTYPES, *FLOAT_DTYPES, "bool", "bfloat16", "complex64"]
NO_ACTION_DTYPES = {"bool", "bfloat16", "complex64"}  # refused whatever the values


def batched_env(name, num_envs, seed):
    """A small serial ``SeerBatchedEnv`` of ``name`` and its first root TensorDict."""
    env = make_batched_env(
        name, num_envs, **ACTION_ENVS[name], max_cycles=ACTION_CYCLES, seed=seed, num_threads=1
    )
    return env, env.reset()


def leaves(td, skip=()):
    """Every entry of ``td`` but ``skip``: key -> (dtype, shape, bytes)."""
    out = {}
    for key in td.keys(True, True):
        if key not in skip:
            value = td.get(key).detach()
            out[key] = (value.dtype, tuple(value.shape), value.contiguous().numpy().tobytes())
    return out


@st.composite
def tensor_actions(draw, right, discrete, n, faults):
    """``(dtype, tensor)`` for an action spec of shape ``right``: any shape and values.

    ``faults``: whether dtype, shape and values may be wrong (else always valid).
    """
    m, a, *row = right
    # Without faults: a valid action of any number dtype (Box: ints too) and layout.
    dtype = draw(st.sampled_from(TORCH_DTYPES if faults else INT_DTYPES + FLOAT_DTYPES))
    shape = right
    if faults:
        shape = draw(
            st.sampled_from(
                [
                    right,
                    right,
                    (1, *right),  # an extra batch dim
                    (*right, 1),
                    (a, *row),  # no batch dim
                    (m * a, *row),  # flat
                    (m, a + 1, *row),  # wrong agent count
                    (m, a - 1, *row),
                    (a, m, *row),  # transposed
                    (m, a // 2, 2, *row),  # as many numbers, another shape
                    *([(m, a, row[0] + 1), (m, a, row[0] - 1)] if row else []),
                ]
            )
        )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mode = draw(st.sampled_from(["inside", "edge"])) if faults else "inside"
    if discrete:
        values = rng.integers(0, n, size=shape).astype(np.float64)
        if mode == "edge":  # out of the space, not integral, NaN
            wild = rng.choice([-1.0, float(n), n + 100.0, 0.5, np.nan, 2**40], size=shape)
            values = np.where(rng.random(shape) < 0.3, wild, values)
    else:
        values = rng.uniform(-1.0, 1.0, size=shape)
        if mode == "edge":  # clipped (beyond the Box, infinities), refused (NaN)
            wild = rng.choice([-3.0, 2.5, np.inf, -np.inf, 1e40, np.nan], size=shape)
            values = np.where(rng.random(shape) < 0.3, wild, values)
    if dtype in INT_DTYPES:  # no NaN cast to an integer: the numbers an int tensor can hold
        info = np.iinfo(dtype)
        values = np.clip(np.nan_to_num(np.round(values)), info.min, min(info.max, 2**40))
        tensor = torch.from_numpy(values.astype(dtype))
    elif dtype == "bool":
        tensor = torch.from_numpy(values != 0)
    else:
        tensor = torch.from_numpy(values).to(getattr(torch, dtype))
        if draw(st.booleans()):
            tensor.requires_grad_(True)  # a policy's output before detach()
    if tensor.ndim >= 2 and draw(st.booleans()):  # not contiguous
        tensor = tensor.detach().transpose(0, 1).contiguous().transpose(0, 1)
    return dtype, tensor


def with_action(root, env, action, how):
    """The TensorDict to step: ``root`` with ``action`` set, or a fresh one around it."""
    if how == "none":
        return root.exclude(env.action_key)
    m = env.batch_size[0]
    if how == "root" and tuple(action.shape[:2]) == tuple(root.get(env.group).batch_size):
        td = root.clone(False)
        td.set(env.action_key, action)
        return td
    size = [m] if action.ndim and action.shape[0] == m else []
    group = TensorDict({"action": action}, batch_size=size)
    return TensorDict({env.group: group}, batch_size=size)


def batched_step(env, td, call):
    """``(next, root)`` of ``env.step`` or ``env.step_and_maybe_reset`` on ``td``."""
    if call == "step":
        out = env.step(td)
        return out.get("next"), out.get("next").clone(False)
    out, root = env.step_and_maybe_reset(td)
    return out.get("next"), root


@given(
    st.sampled_from(sorted(ACTION_ENVS)),
    st.integers(1, 3),
    st.integers(0, 2**63),
    st.data(),
)
def fuzz_tensordict_actions(name, num_envs, seed, data):
    """TensorDict actions of any dtype and shape on TorchRL's batched env, against a reference.

    The env under test gets the drawn action tensor; the reference, built
    alike, gets the same actions as int64 (Discrete) or float32 (Box, clipped)
    with the rows of agents that are gone zeroed (they are not read). A valid
    action must give byte-identical TensorDicts (``step`` and
    ``step_and_maybe_reset``); an invalid one must raise ValueError naming the
    action (dtype, shape, values: checked before anything runs) or TorchRL's
    RuntimeError (the input's batch size), and change nothing: the next valid
    step still matches the reference.
    """
    env, got = batched_env(name, num_envs, seed)
    ref, root = batched_env(name, num_envs, seed)
    assert leaves(got) == leaves(root)
    draw = data.draw
    spec = ref.full_action_spec[ref.action_key]
    right = tuple(spec.shape)
    discrete = spec.dtype == torch.int64
    n = int(spec.space.n) if discrete else 0
    bounds = None if discrete else (spec.space.low.min().item(), spec.space.high.max().item())
    for _ in range(draw(st.integers(1, 8))):
        faults = draw(st.booleans())  # else a valid action (of any number dtype and layout)
        dtype, action = draw(tensor_actions(right, discrete, n, faults))
        how = draw(st.sampled_from(["root", "fresh", "none"] if faults else ["root", "fresh"]))
        call = draw(st.sampled_from(["step", "step_and_maybe_reset"]))
        td = with_action(root, env, action, how)
        live = root.get((ref.group, "mask")).numpy()
        if not discrete:
            live = live[..., None]
        error = None
        if td.batch_size != ref.batch_size:
            error = RuntimeError  # TorchRL's own check of the input
        elif how == "none" or dtype in NO_ACTION_DTYPES or tuple(action.shape) != right:
            error = ValueError
        else:
            values = action.detach().to(torch.float64).numpy()
            if discrete:
                with np.errstate(invalid="ignore"):
                    bad = ~((values >= 0) & (values < n) & (values == np.floor(values)))
                canonical = np.where(live & ~bad, values, 0).astype(np.int64)
            else:
                bad = np.isnan(values)
                canonical = np.where(live, box_canonical(values, *bounds), 0).astype(np.float32)
            if (bad & live).any():
                error = ValueError
        try:
            out = batched_step(env, td, call)
        except (ValueError, RuntimeError) as exc:
            assert error is type(exc), f"{type(exc).__name__}: {exc} (expected {error})"
            assert error is RuntimeError or "action" in str(exc), f"unclear refusal: {exc}"
        else:
            assert error is None, f"accepted {dtype} {tuple(action.shape)} ({how}): {action}"
            expected = batched_step(
                ref, with_action(root, ref, torch.from_numpy(canonical), how), call
            )
            skip = {ref.action_key}  # the root keeps the input's action
            assert leaves(out[0]) == leaves(expected[0]), (
                "a valid action stepped unlike the reference"
            )
            assert leaves(out[1], skip) == leaves(expected[1], skip)
            root = expected[1]
            continue
        # The refusal changed nothing: a valid step still matches the reference.
        good = spec.rand()
        out = batched_step(env, with_action(root, env, good, "root"), "step")
        expected = batched_step(ref, with_action(root, ref, good.clone(), "root"), "step")
        assert leaves(out[0]) == leaves(expected[0]), "a refusal changed the env"
        root = expected[1]


# -- snapshots: corrupt or crafted bytes into restore() ----------------------------------------
def snapshot_env(seed=0):
    env = pcs_v0.parallel_env(width=3, height=2, max_cycles=20, seed=seed)
    env.reset(seed=seed)
    for _ in range(2):
        env.step({a: 1 for a in env.agents})
    return env


SNAPSHOT = bytes(snapshot_env().snapshot())


@st.composite
def mutated_snapshots(draw):
    data = bytearray(SNAPSHOT)
    how = draw(st.sampled_from(["flip", "truncate", "random", "header", "runtime"]))
    fixed = len(MAGIC) + 20
    (header_len,) = struct.unpack_from("<Q", data, len(MAGIC))
    if how == "flip":
        for bit in draw(st.lists(st.integers(0, len(data) * 8 - 1), min_size=1, max_size=8)):
            data[bit // 8] ^= 1 << (bit % 8)
    elif how == "truncate":
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif how == "random":
        data = bytearray(draw(st.binary(max_size=2048)))
        if draw(st.booleans()):
            data[:8] = MAGIC[: len(data)]
    else:  # a header or runtime part that passes its checksum
        header = json.loads(bytes(data[fixed : fixed + header_len]))
        runtime = bytes(data[fixed + header_len :])
        if how == "header":
            part = draw(st.sampled_from(["env", "episode"]))
            key = draw(st.sampled_from(sorted(header[part])))
            header[part][key] = draw(
                st.one_of(
                    st.integers(-(2**65), 2**65),
                    st.text(max_size=8),
                    st.lists(st.text(max_size=6), max_size=4),
                    st.none(),
                    st.floats(),
                    st.just(["cell_0"] * 3),
                )
            )
        else:
            cut = draw(st.integers(HEADER, len(runtime)))
            runtime = rechecksum(runtime[:cut] + draw(st.binary(max_size=128)))
        raw = json.dumps(header).encode()
        data = bytearray(MAGIC + struct.pack("<QIQ", len(raw), zlib.crc32(raw), len(runtime)))
        data += raw + runtime
    return bytes(data)


@given(mutated_snapshots())
def fuzz_snapshots(data):
    env, shadow = snapshot_env(1), snapshot_env(1)
    try:
        env.restore(data)
    except ValueError:  # refused: nothing changed
        assert env.sim.digest() == shadow.sim.digest() and env.agents == shadow.agents
        return
    try:  # restored (a mutation the checks let through must still step or refuse cleanly)
        if env.agents:
            env.step({a: 0 for a in env.agents})
        env.snapshot()
    except ORDINARY:
        pass


# -- SEER_MEMORY_LIMIT and SEER_STPA_CACHE: values and paths ---------------------------------
MEMORY_LIMITS = st.one_of(
    st.text(max_size=12),
    st.builds(
        lambda n, unit: f"{n}{unit}",
        st.integers(-5, 2**66),
        st.sampled_from(["", "K", "M", "G", "T", "P", "E", "KiB", "gb", "B", " G", "x"]),
    ),
)


@given(MEMORY_LIMITS)
def fuzz_memory_limit(value):
    if "\0" in value:
        return  # no environment variable holds a NUL
    before = os.environ.get("SEER_MEMORY_LIMIT")
    os.environ["SEER_MEMORY_LIMIT"] = value
    try:
        sim = _core.Simulation("pcs", SMALL["pcs"])
        sim.reset(0)
        sim.run_until(sim.spec["dt"])
        assert sim.pending_limit > 0
    except ValueError as exc:
        assert "SEER_MEMORY_LIMIT" in str(exc) or "needs about" in str(exc), exc
    finally:
        if before is None:
            del os.environ["SEER_MEMORY_LIMIT"]
        else:
            os.environ["SEER_MEMORY_LIMIT"] = before


def cache_path(kind, root):
    """A path of ``kind`` under ``root`` for SEER_STPA_CACHE (made here, never a system file)."""
    path = os.path.join(root, "cache.json")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "garbage":
        with open(path, "wb") as f:
            f.write(os.urandom(64))
    elif kind == "link to directory":
        os.mkdir(path + ".d")
        os.symlink(path + ".d", path)
    elif kind == "dangling link":
        os.symlink(os.path.join(root, "nowhere", "x"), path)
    elif kind == "null device":
        return os.devnull  # only stat()ed: the cache reads it as "off"
    elif kind == "nested":
        return os.path.join(root, "a", "b", "cache.json")
    return path


@given(
    st.sampled_from(
        [
            "fifo",
            "directory",
            "garbage",
            "link to directory",
            "dangling link",
            "null device",
            "nested",
            "fresh",
        ]
    )
)
def fuzz_cache_paths(kind):
    import tempfile  # noqa: PLC0415

    before = os.environ.get("SEER_STPA_CACHE")
    with tempfile.TemporaryDirectory() as root:
        os.environ["SEER_STPA_CACHE"] = cache_path(kind, root)
        try:
            env = pcs_v0.parallel_env(width=2, height=2, num_threads="auto")
            env.reset(seed=0)  # never blocks on a FIFO, never replaces what is not a file
            env.step({a: 0 for a in env.agents})
        finally:
            if before is None:
                del os.environ["SEER_STPA_CACHE"]
            else:
                os.environ["SEER_STPA_CACHE"] = before
        if kind == "fifo":
            assert stat.S_ISFIFO(os.lstat(os.path.join(root, "cache.json")).st_mode)
        if kind == "directory":
            assert os.path.isdir(os.path.join(root, "cache.json"))


# -- reset masks of the vector envs ------------------------------------------------------------
MASK_VALUES = st.one_of(
    st.booleans(), st.integers(-2, 2), st.floats(), st.text(max_size=2), st.none()
)


@given(
    st.sampled_from(["sync", "async"]),
    st.one_of(
        st.lists(MASK_VALUES, min_size=0, max_size=9),
        st.lists(st.booleans(), min_size=4, max_size=4),
        st.lists(st.booleans(), min_size=16, max_size=16),
        MASK_VALUES,
    ),
)
def fuzz_reset_masks(kind, mask):
    make = vector.make if kind == "sync" else functools.partial(vector.make_async, num_batches=2)
    env, shadow = (
        make("pcs_v0", 4, width=2, height=2, seed=0),
        make("pcs_v0", 4, width=2, height=2, seed=0),
    )
    try:
        for vec in (env, shadow):
            vec.reset(seed=3)
            vec.step(np.ones(vec.num_envs, dtype=np.int64))
        try:
            env.reset(options={"reset_mask": mask})
        except ValueError as exc:
            assert "reset_mask" in str(exc), exc
            action = np.zeros(env.num_envs, dtype=np.int64)
            assert digest(env.step(action)) == digest(shadow.step(action)), "a refusal changed it"
            return
        rows = np.asarray(mask, dtype=bool).reshape(-1)
        per_instance = rows if rows.size == 4 else rows.reshape(4, 4).any(axis=1)
        for i in range(4):  # a masked instance is at step 0, the others at step 1
            steps = env.sim.steps(i) if kind == "sync" else None
            if steps is not None:
                assert steps == (0 if per_instance[i] else 1)
    finally:
        env.close()
        shadow.close()


# -- Ctrl-C at random points of a step ---------------------------------------------------------
class _Armed:
    """SIGINT raises KeyboardInterrupt only while armed (a late one is dropped, counted)."""

    armed = False
    late = 0

    @classmethod
    def handler(cls, signum, frame):
        if cls.armed:
            raise KeyboardInterrupt
        cls.late += 1


@given(st.integers(0, 999), st.floats(0.0, 0.004), st.sampled_from(["dict", "arrays"]))
def fuzz_interrupt_points(seed, delay, path):
    env = pcs_v0.parallel_env(width=4, height=4, max_cycles=6, executor="parallel", num_threads=2)
    env.reset(seed=seed)
    main = threading.main_thread().ident
    timer = threading.Timer(delay, signal.pthread_kill, (main, signal.SIGINT))
    previous = signal.signal(signal.SIGINT, _Armed.handler)
    try:
        _Armed.armed = True
        try:
            timer.start()  # a delay of 0 may interrupt start() itself
            while env.agents:
                if path == "dict":
                    env.step({a: 1 for a in env.agents})
                else:
                    env.step_arrays(np.ones(16, dtype=np.int64))
        except KeyboardInterrupt:
            pass
        finally:
            _Armed.armed = False
            timer.cancel()
            timer.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    # Consistent (the cycle count is the runtime's) or refusing until reset().
    try:
        if env.agents:
            env.step({a: 1 for a in env.agents})
        assert env.sim.steps == env._cycles
    except RuntimeError as exc:
        assert "reset" in str(exc), exc
    env.reset(seed=seed + 1)
    fresh = pcs_v0.parallel_env(width=4, height=4, max_cycles=6)
    fresh.reset(seed=seed + 1)
    assert env.sim.digest() == fresh.sim.digest()


TARGETS = [
    fuzz_load,
    fuzz_config,
    fuzz_actions,
    fuzz_vector_calls,
    fuzz_dict_actions,
    fuzz_tensordict_actions,
    fuzz_snapshots,
    fuzz_memory_limit,
    fuzz_cache_paths,
    fuzz_reset_masks,
    fuzz_interrupt_points,
]
# Examples per target per round: a vector call sequence costs ~50x a load, an
# action dict or TensorDict sequence (two envs built, up to 8 steps each) ~100x;
# a cache path runs STPA's preflight.
EXAMPLES = {
    "fuzz_vector_calls": 20,
    "fuzz_dict_actions": 20,
    "fuzz_tensordict_actions": 20,
    "fuzz_snapshots": 50,
    "fuzz_cache_paths": 8,
    "fuzz_reset_masks": 20,
    "fuzz_interrupt_points": 10,
}
# Targets that cannot run here, with why: said at the start and in the summary.
SKIPPED = {"fuzz_tensordict_actions": TORCH_MISSING} if TORCH_MISSING else {}


def process_figures():
    """RSS (MB), threads and open file descriptors of this process (Linux /proc; else None)."""
    try:
        with open("/proc/self/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
        return rss, len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))
    except (OSError, StopIteration):
        return None


def main():
    budget = float(os.environ.get("FUZZ_SECONDS", "60"))
    start = process_figures()
    deadline = time.monotonic() + budget
    for name, why in SKIPPED.items():
        print(f"fuzz: {name} SKIPPED: {why}", flush=True)
    targets = [t for t in TARGETS if t.__name__ not in SKIPPED]
    runs = {t.__name__: 0 for t in targets}
    runners = []
    for target in targets:
        examples = EXAMPLES.get(target.__name__, 100)
        quick = settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        runners.append((target.__name__, quick(target), examples))
    while time.monotonic() < deadline:
        for name, run, examples in runners:
            run()  # new random examples per call (no database: fresh each time)
            runs[name] += examples
    print(f"fuzz: _core from {_core.__file__}", flush=True)
    print(f"fuzz: {budget:.0f} s, examples per target: {runs}, no crash", flush=True)
    end = process_figures()
    if start and end:  # a leak of threads or fds across thousands of cases would show here
        print(
            f"fuzz: RSS {start[0]:.0f} -> {end[0]:.0f} MB, threads {start[1]} -> {end[1]}, "
            f"open fds {start[2]} -> {end[2]} (from before the first case to after the last)",
            flush=True,
        )
    if SKIPPED:
        print(f"fuzz: not run: {sorted(SKIPPED)} (see above)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
