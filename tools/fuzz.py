"""Time-bounded fuzzing of the extension's input boundaries (``make fuzz``).

Hypothesis drives four targets until FUZZ_SECONDS (default 60) have passed:

- ``Simulation.load`` blobs: valid saves of every model, mutated by bit
  flips, truncation, random bytes, and field rewrites that keep the checksum
  valid (a crafted blob) in the runtime's fields (clock, RNG counters,
  pending count, event headers);
- configs: every declared parameter with in-range, edge and garbage values;
- action arrays: random dtypes, shapes and values for ``Simulation.step``;
- vector env calls: random interleavings of ``step_async``/``step_wait``/
  ``reset``/``close``/``step`` on the sync and async vector envs, every
  output and refusal checked against a serial model
  (``tests/support/vector_calls.py``).

Every call must return or raise an ordinary exception (ValueError,
TypeError, RuntimeError, the seer errors), and the vector env calls must
match their model; a crash, a mismatch or a sanitizer report ends the run
with a nonzero exit. Run under ASan by ``make fuzz`` (the
extension from build/asan, as ``make asan-python`` does).

Usage: python tools/fuzz.py [PACKAGE_DIR]: with PACKAGE_DIR (a copy of
seer_env/ holding the ASan-built _core, as .ci/pytest_sanitized.py takes), that
package is imported instead of the editable install.

Limit (documented): a crafted blob's model state bytes and event payloads
are the model's own data and are not validated by the runtime; the checksum
refuses accidental corruption of them.
"""

import os
import struct
import sys
import time

if len(sys.argv) > 1:  # the ASan build: bypass the editable install's import hook
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, os.path.abspath(sys.argv[1]))

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from seer_env import _core  # noqa: E402
from seer_env.testing.save_format import HEADER, rechecksum  # noqa: E402

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support")
)
from vector_calls import CALLS, EXECUTORS, run_calls  # noqa: E402

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
            blob[:8] = b"SEERSAV2"[: len(blob)]
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


TARGETS = [fuzz_load, fuzz_config, fuzz_actions, fuzz_vector_calls]
# Examples per target per round: a vector call sequence costs ~50x a load.
EXAMPLES = {"fuzz_vector_calls": 20}


def main():
    budget = float(os.environ.get("FUZZ_SECONDS", "60"))
    deadline = time.monotonic() + budget
    runs = {t.__name__: 0 for t in TARGETS}
    runners = []
    for target in TARGETS:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
