"""Ctrl-C at exact points, and models that say what an env must look like afterwards.

Python raises a KeyboardInterrupt only where the interpreter checks for
signals: at a Python function's entry, after a call returns (a C function's
too) and at a loop's back edge; never inside a C call. A profile hook
(``sys.setprofile``) sees the first two as ``call``, ``return`` and
``c_return`` events, and raising from it raises right there. ``walk_points``
runs a call interrupted at point 1, 2, ... of the code under test until the
call completes uninterrupted, and checks the env after every interruption,
the KeyboardInterrupt (and so its frames) still alive.

The rule checked (docs/reliability.md, *Ctrl-C during a step*): after a
KeyboardInterrupt an env is either consistent (it continues exactly like a
shadow env that made the same completed calls) or refuses ``step()`` with a
RuntimeError saying to call ``reset()``. ``SingleModel`` checks it for the
ParallelEnv and the AEC env, ``VectorModel`` for the vector envs (one
single-instance reference env per instance).
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
from collections.abc import Callable, Sequence

import numpy as np
import pettingzoo
from envcases import digest

import seer_env
from seer_env import vector
from seer_env.aec import SeerAECWrapper

SEER = (os.path.dirname(seer_env.__file__) + os.sep,)
SEER_AND_PETTINGZOO = (*SEER, os.path.dirname(pettingzoo.__file__) + os.sep)


class InterruptAt:
    """A profile hook raising KeyboardInterrupt at the ``n``-th point in code under ``prefixes``.

    A point is a ``call``, ``return`` or ``c_return`` event in a frame of that
    code, or a ``call``/``return`` of a function that code called.
    """

    def __init__(self, n: int, prefixes: Sequence[str]) -> None:
        self.n = n
        self.prefixes = tuple(prefixes)
        self.seen = 0
        self.fired = False

    def _ours(self, frame) -> bool:
        return frame is not None and frame.f_code.co_filename.startswith(self.prefixes)

    def __call__(self, frame, event, arg):
        if self.fired or event not in ("call", "return", "c_return"):
            return
        if not (self._ours(frame) or (event != "c_return" and self._ours(frame.f_back))):
            return
        self.seen += 1
        if self.seen == self.n:
            self.fired = True
            sys.setprofile(None)
            raise KeyboardInterrupt(f"test interrupt at point {self.n}")


class InterruptOn:
    """A profile hook raising KeyboardInterrupt at one named point, its ``nth`` occurrence.

    ``event`` ``"call"``/``"return"``: the entry/return of the Python function
    ``name``; ``"c_return"``: the return of the C function (or method) ``name``
    called from code under ``prefixes``.
    """

    def __init__(self, event: str, name: str, nth: int = 1, prefixes: Sequence[str] = SEER):
        self.event, self.name, self.left = event, name, nth
        self.prefixes = tuple(prefixes)
        self.fired = False

    def __call__(self, frame, event, arg):
        if self.fired or event != self.event:
            return
        if event == "c_return":
            hit = getattr(arg, "__name__", None) == self.name
            hit = hit and frame.f_code.co_filename.startswith(self.prefixes)
        else:
            hit = frame.f_code.co_name == self.name
        if hit:
            self.left -= 1
            if self.left == 0:
                self.fired = True
                sys.setprofile(None)
                raise KeyboardInterrupt(f"test interrupt at the {event} of {self.name}")


def interrupted_at(hook, call: Callable[[], object]) -> bool:
    """``call()`` under the profile ``hook``; whether the hook's KeyboardInterrupt came."""
    sys.setprofile(hook)
    try:
        call()
    except KeyboardInterrupt:
        return True
    finally:
        sys.setprofile(None)
    return False


def walk_points(
    prepare: Callable[[], None],
    call: Callable[[], object],
    check: Callable[[KeyboardInterrupt], None],
    finish: Callable[[object], None],
    *,
    prefixes: Sequence[str] = SEER,
    limit: int = 20000,
) -> int:
    """Interrupt ``call`` at every point in turn; returns how many points it has.

    For n = 1, 2, ...: ``prepare()``, then ``call()`` with a KeyboardInterrupt
    at its n-th point, then ``check(exc)`` while the exception is alive. The
    first call that completes goes to ``finish(result)`` and ends the walk.
    """
    for n in range(1, limit):
        prepare()
        hook = InterruptAt(n, prefixes)
        # No cyclic garbage collection inside the call: an env left over by an
        # earlier test or point, collected there, would run its __del__ in
        # seer_env's code and take the interrupt meant for the call.
        gc.disable()
        sys.setprofile(hook)
        try:
            result = call()
        except KeyboardInterrupt as exc:
            sys.setprofile(None)
            gc.enable()
            assert hook.fired, f"a KeyboardInterrupt the test did not raise: {exc!r}"
            check(exc)
            continue
        finally:
            sys.setprofile(None)
            gc.enable()
        assert not hook.fired, f"point {n}: the env swallowed the KeyboardInterrupt"
        finish(result)
        return n - 1
    raise AssertionError(f"the call still had points after {limit}")


def refuses_until_reset(env, probe: Callable[[], object]) -> bool:
    """Whether ``probe()`` (a step) raises the RuntimeError naming ``reset()``; if so, twice."""
    try:
        probe()
    except RuntimeError as exc:
        assert "reset()" in str(exc), exc
        try:
            probe()
        except RuntimeError as again:
            assert "reset()" in str(again), again
            return True
        raise AssertionError("a refused step was not refused again before reset()") from None
    return False


# -- ParallelEnv and AEC env --------------------------------------------------------------------
def pcs_actions(agents: Sequence[str], rng: np.random.Generator) -> dict:
    return {a: int(rng.integers(0, 11)) for a in agents}


class SingleModel:
    """An env (ParallelEnv, its array path or the AEC env) and a shadow that makes its calls.

    After an interrupted call the env must either refuse until ``reset()``, or
    be the shadow before the call, or the shadow after it (``apply``); either
    way it must then continue exactly like that shadow, through the episode's
    end and an unseeded ``reset()`` (an interrupted call does not advance the
    seed sequence).
    """

    def __init__(self, make_env: Callable[[], object], aec: bool = False) -> None:
        self.env, self.shadow = make_env(), make_env()
        self.aec = aec
        self.rng = np.random.default_rng(0)

    # the env's state, as far as a user can tell
    def fingerprint(self, env) -> tuple:
        par = env.unwrapped
        state = (list(env.agents), par.sim.digest(), par.sim.steps, par.sim.needs_reset)
        if not self.aec:
            return state
        aec = env if isinstance(env, SeerAECWrapper) else env.env
        return (
            *state,
            aec.agent_selection,
            dict(aec._cumulative_rewards),
            dict(aec.terminations),
            dict(aec.truncations),
            dict(aec.rewards),
            sorted(aec._actions),
        )

    def both(self, fn: Callable[[object], object]) -> None:
        """``fn`` on the env and the shadow; their results must be identical."""
        assert digest(fn(self.env)) == digest(fn(self.shadow))
        assert self.fingerprint(self.env) == self.fingerprint(self.shadow)

    def prepare(self, steps: int, seed: int = 3) -> None:
        """Both envs reset with ``seed`` and stepped ``steps`` times alike."""
        self.rng = np.random.default_rng(seed)
        self.both(lambda e: e.reset(seed=seed))
        for _ in range(steps):
            self.step_both()

    def step_both(self) -> None:
        if self.aec:
            agent = self.shadow.agent_selection
            assert self.env.agent_selection == agent
            self.both(lambda e: e.last())
            done = self.shadow.terminations[agent] or self.shadow.truncations[agent]
            action = None if done else int(self.rng.integers(0, 11))
            self.both(lambda e: e.step(action))
        else:
            actions = pcs_actions(self.shadow.agents, self.rng)
            self.both(lambda e: e.step(actions))

    def probe(self) -> Callable[[], object]:
        if self.aec:
            return lambda: self.env.step(self.aec_action(self.env))
        return lambda: self.env.step(dict.fromkeys(self.env.possible_agents, 0))

    @staticmethod
    def aec_action(env) -> int | None:
        agent = env.agent_selection
        return None if env.terminations[agent] or env.truncations[agent] else 0

    def check(self, apply: Callable[[object], object]) -> str:
        """After an interrupted call (``apply`` makes it): "refused", "before" or "after"."""
        seen, before = self.fingerprint(self.env), self.shadow
        after = pickle.loads(pickle.dumps(self.shadow))
        try:
            apply(after)
        except RuntimeError:  # the shadow refuses the call too (an episode over)
            after = None
        outcome = None
        if seen == self.fingerprint(before):
            outcome = "before"
        elif after is not None and seen == self.fingerprint(after):
            outcome, self.shadow = "after", after
        if refuses_until_reset(self.env, self.probe()):
            # Refused (or over): the interrupted call counts for nothing (seeds included).
            outcome, self.shadow = "refused", before
        elif outcome is None:
            raise AssertionError(f"neither refused nor consistent: {seen}")
        else:  # the probe stepped: the shadow takes the same step
            self.probe_shadow()
        if outcome != "refused":
            while self.shadow.agents:
                self.step_both()
        # Both continue alike after an unseeded reset: nothing interrupted counted.
        self.both(lambda e: e.reset())
        self.step_both()
        return outcome

    def probe_shadow(self) -> None:
        if self.aec:
            self.shadow.step(self.aec_action(self.shadow))
        else:
            self.shadow.step(dict.fromkeys(self.shadow.possible_agents, 0))
        assert self.fingerprint(self.env) == self.fingerprint(self.shadow)


# -- vector envs --------------------------------------------------------------------------------
VECTOR = dict(width=2, height=2, max_cycles=3, check_steps=0, executor="serial")


def _concat(parts: list) -> tuple:
    arrays = tuple(np.concatenate([p[k] for p in parts]) for k in range(4))
    infos = {key: np.concatenate([p[4][key] for p in parts]) for key in parts[0][4]}
    return (*arrays, infos)


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


class VectorModel:
    """A vector env (``"sync"``, or ``"async"`` of 2 batches) and one reference env per instance.

    After an interrupted step or reset, each instance is settled as the
    documented rule says, read from the runtime: one that completed the call
    keeps it (its reference makes the call), one the call never reached is
    unchanged, one that failed autoresets; an instance whose reset cannot be
    told from its state before (already at step 0) may go either way, as the
    env says. An instance whose reset an interrupted ``reset()`` left undone
    resets on the next step with the seed ``reset()`` chose. Then the env must
    return, byte for byte, what the references return.
    """

    def __init__(self, kind: str, num_instances: int, seed: int = 11) -> None:
        self.kind, self.seed = kind, seed
        self.num_instances = num_instances
        if kind == "sync":
            self.env = vector.make("pcs_v0", num_instances, seed=seed, **VECTOR)
        else:
            self.env = vector.make_async("pcs_v0", num_instances, 2, seed=seed, **VECTOR)
        self.refs = [
            vector.make("pcs_v0", 1, seed=seed + i, **VECTOR) for i in range(num_instances)
        ]
        self.rows = self.refs[0].num_envs
        # What the env's next step returns for an instance whose reset it still owes.
        self.owed: list[tuple | None] = [None] * num_instances
        self.rng = np.random.default_rng(seed)

    def batches(self) -> list:
        return self.env.batches if self.kind == "async" else [self.env]

    def sims(self) -> list:
        return [b.sim for b in self.batches()]

    def progress(self) -> tuple[np.ndarray, np.ndarray]:
        """Each instance's ``(needs_reset, steps)`` in the runtime."""
        needs, steps = [], []
        for sim in self.sims():
            needs += [sim.needs_reset(i) for i in range(sim.num_envs)]
            steps += [sim.steps(i) for i in range(sim.num_envs)]
        return np.array(needs), np.array(steps)

    def autoreset(self) -> np.ndarray:
        return np.concatenate([b._autoreset for b in self.batches()])

    def actions(self) -> np.ndarray:
        return self.rng.integers(0, 11, size=self.env.num_envs)

    def instance_rows(self, actions: np.ndarray, i: int) -> np.ndarray:
        return actions[i * self.rows : (i + 1) * self.rows]

    def expected_step(self, actions: np.ndarray) -> tuple:
        parts = []
        for i, ref in enumerate(self.refs):
            owed, self.owed[i] = self.owed[i], None
            if owed is None:
                parts.append(ref.step(self.instance_rows(actions, i)))
                continue
            obs, infos = owed
            zeros = np.zeros(self.rows, dtype=bool)
            parts.append((obs, np.zeros(self.rows), zeros, zeros.copy(), infos))
        return _concat(parts)

    def state_before(self) -> tuple:
        return (*self.progress(), self.autoreset())

    def assert_idle(self) -> None:
        """Nothing in flight, and the env takes calls (no flag left taken)."""
        for batch, sim in zip(self.batches(), self.sims()):
            assert not sim.in_flight and not sim.busy
            assert batch._pending is None
            assert not batch._call.locked()

    def prepare(self, steps: int) -> None:
        """The env and the references reset with the model's seed, then stepped ``steps`` times."""
        self.owed = [None] * self.num_instances
        self.rng = np.random.default_rng(self.seed)
        got = self.env.reset(seed=self.seed)
        want = [ref.reset(seed=self.seed + i) for i, ref in enumerate(self.refs)]
        assert _same(got[0], np.concatenate([w[0] for w in want]))
        for _ in range(steps):
            self.step_both()

    def step_both(self, actions: np.ndarray | None = None) -> None:
        actions = self.actions() if actions is None else actions
        got = self.env.step(actions)
        assert _same(got, self.expected_step(actions)), "the env differs from its references"

    def settle_step(self, actions: np.ndarray, before: tuple, outputs: tuple | None = None):
        """Settle the references after a step call (``outputs``: it completed and returned them)."""
        needs0, steps0, resetting0 = before
        needs, steps = self.progress()
        decided = self.autoreset()
        if outputs is not None:
            assert _same(outputs, self.expected_step(actions)), "the step's outputs differ"
            return
        for i, ref in enumerate(self.refs):
            if not resetting0[i]:
                if not needs[i] and steps[i] == steps0[i] + 1:  # completed: counted
                    ref.step(self.instance_rows(actions, i))
                elif not (not needs[i] and steps[i] == steps0[i]):  # failed: autoresets
                    ref._autoreset[:] = True
                continue
            fresh = steps0[i] == 0 and not needs0[i]
            reset_now = not needs[i] and steps[i] == 0
            if reset_now and (not fresh or not decided[i]):  # its reset counted
                if self.owed[i] is not None:  # the reference has reset already
                    self.owed[i] = None
                else:
                    ref.step(self.instance_rows(actions, i))

    def next_seed(self, i: int) -> int:
        """The seed the env's next autoreset of instance ``i`` uses (the env says)."""
        size = self.num_instances // len(self.batches())
        return self.batches()[i // size]._next_seed(i % size)

    def episode_seed(self, i: int) -> int | None:
        """The seed of instance ``i``'s episode (the env says)."""
        size = self.num_instances // len(self.batches())
        return self.batches()[i // size]._episode_seeds[i % size]

    def settle_reset(self, seed: int, before: tuple, outputs: tuple | None = None) -> None:
        """Settle the references after ``reset(seed=seed)`` (``outputs``: it completed)."""
        needs0, steps0, resetting0 = before
        needs, steps = self.progress()
        decided = self.autoreset()
        if outputs is not None:
            want = [ref.reset(seed=seed + i) for i, ref in enumerate(self.refs)]
            assert _same(outputs[0], np.concatenate([w[0] for w in want])), "reset differs"
            return
        for i, ref in enumerate(self.refs):
            fresh = steps0[i] == 0 and not needs0[i]
            reset_now = not needs[i] and steps[i] == 0
            # At step 0 before and after, not waiting for a reset: the env reset it
            # (it says so by the episode's seed) or never reached it.
            counted = not fresh or self.episode_seed(i) == seed + i
            if reset_now and not fresh:  # demonstrably reset: it keeps its reset
                assert not decided[i], f"instance {i} was reset, yet autoresets"
            if reset_now and not decided[i] and counted:  # the reset counted
                ref.reset(seed=seed + i)
            elif needs[i]:  # failed: autoresets with its next seed, as after any failure
                ref._autoreset[:] = True
            elif decided[i]:  # left to do: the next step resets it
                if not resetting0[i]:  # only this reset can have left it: with its seed
                    assert self.next_seed(i) == seed + i
                self.owed[i] = ref.reset(seed=self.next_seed(i))
            else:  # not reached: its episode goes on
                assert steps[i] == steps0[i] and not resetting0[i]

    def check(self, steps: int) -> None:
        """The env and its references agree for ``steps`` steps (through truncation, autoreset).

        An env a first ``reset()`` has not reached everywhere refuses to step until reset.
        """
        self.assert_idle()
        if not all(b._started for b in self.batches()):
            refuses_until_reset(self.env, lambda: self.env.step(self.actions()))
            return
        for _ in range(steps):
            self.step_both()
