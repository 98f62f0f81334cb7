"""Event-driven decisions: the windows equal the one-at-a-time reference, byte for byte.

``assert_decisions_equivalent(env_fn)`` runs a model whose agents ask for
actions (``decisions``) once answering each request before the next event
runs (``decisions="one_at_a_time"``, serial: the reference) and then with the
requests of each lookahead window answered together (``"windows"``) on every
executor and thread count, all driven by one deterministic policy of agent and
observation. Every decision (its time, agent, observation and the reward
returned with it), the episode's last return and the runtime digest must be
the same bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from seer_env import _core
from seer_env.testing.arguments import seed_list, thread_counts
from seer_env.testing.equivalence import require_runtime, serial_only_reason

__all__ = ["assert_decisions_equivalent", "hash_policy"]

DecisionPolicy = Callable[[str, np.ndarray, Any], Any]


def _observation_bytes(observation: Any) -> bytes:
    """An observation's bytes; a masked one's (``{"observation", "action_mask"}``) both parts."""
    if isinstance(observation, dict):
        return observation["observation"].tobytes() + observation["action_mask"].tobytes()
    return observation.tobytes()


def hash_policy(agent: str, observation: Any, space) -> Any:
    """A deterministic policy of agent and observation: a hash of both, into ``space``.

    A masked observation (``{"observation", "action_mask"}``) gets one of its valid actions.
    """
    h = zlib.crc32(_observation_bytes(observation), zlib.crc32(agent.encode()))
    if isinstance(observation, dict):
        valid = np.flatnonzero(observation["action_mask"])
        return int(space.start + valid[h % len(valid)])
    if hasattr(space, "n"):
        return int(space.start + h % space.n)
    rng = np.random.default_rng(h)
    return rng.uniform(space.low, space.high).astype(np.float32)


def _episode(env, seed: int, policy: DecisionPolicy) -> tuple[list, tuple, int]:
    """Every return of one episode: (time, agent, observation, reward) per decision."""
    obs, infos = env.reset(seed=seed)
    rewards = dict.fromkeys(obs, 0.0)
    decisions = []
    while env.agents:
        for a in env.agents:
            decisions.append(
                (
                    infos[a]["decision_time"],
                    a,
                    _observation_bytes(obs[a]),
                    np.float64(rewards[a]).tobytes(),
                )
            )
        actions = {a: policy(a, obs[a], env.action_space(a)) for a in env.agents}
        obs, rewards, _, truncations, infos = env.step(actions)
    # Python's sort is stable: an agent's requests at one time keep their order.
    decisions.sort(key=lambda d: (d[0], d[1]))
    last = tuple(
        (a, _observation_bytes(obs[a]), np.float64(rewards[a]).tobytes(), truncations[a])
        for a in sorted(obs)
    )
    return decisions, last, env.sim.digest()


def _difference(reference: tuple, run: tuple) -> str | None:
    ref_decisions, ref_last, ref_digest = reference
    decisions, last, digest = run
    for k, (a, b) in enumerate(zip(ref_decisions, decisions)):
        if a != b:
            return (
                f"decision {k}: reference (t={a[0]}, {a[1]}), got (t={b[0]}, {b[1]}){_what(a, b)}"
            )
    if len(ref_decisions) != len(decisions):
        return f"{len(decisions)} decisions, the reference made {len(ref_decisions)}"
    if ref_last != last:
        return "the episode's last return (observations, rewards or truncations)"
    if ref_digest != digest:
        return f"the runtime digest at the episode's end ({digest} vs {ref_digest})"
    return None


def _what(a: tuple, b: tuple) -> str:
    if a[:2] != b[:2]:
        return ""
    return ": the observation differs" if a[2] != b[2] else ": the reward differs"


def assert_decisions_equivalent(
    env_fn: Callable[..., Any],
    *,
    seeds: Iterable[int] = (0, 1),
    threads: Sequence[int] = (1, 2, 4),
    executors: Sequence[str] | None = None,
    policy: DecisionPolicy = hash_policy,
) -> None:
    """Assert every executor and thread count answering by windows matches the reference.

    Args:
        env_fn: builds a fresh ``SeerDecisionEnv`` from keyword arguments
            (``executor``, ``num_threads``, ``decisions``); its episode length
            (``max_cycles``) is the comparison's.
        seeds: episode seeds.
        threads: thread counts of every executor.
        executors: executors the windows run on (default: every registered one,
            serial included: the windows are not the reference's path).
        policy: ``policy(agent, observation, action_space)``, a function of
            its arguments only (``hash_policy``).

    Raises:
        AssertionError: naming the executor, thread count, seed and the first
            decision (time, agent) or output that differs.
        ValueError: arguments that leave nothing to compare.
    """
    seeds, threads = seed_list(seeds), thread_counts(threads)
    names = list(_core.executor_names() if executors is None else executors)
    if isinstance(executors, (str, bytes)) or not names:
        raise ValueError(
            f"executors must be None or a non-empty sequence of names, got {executors!r}"
        )
    # The serial executor has one thread, whatever `threads` says.
    runs = [(e, n) for e in names for n in threads if e != "serial" or n == threads[0]]
    runs = [("serial", 1) if e == "serial" else (e, n) for e, n in runs]
    for seed in seeds:
        env = env_fn(decisions="one_at_a_time")
        reference = _episode(env, seed, policy)
        require_runtime(env, "serial", 1)
        if serial_only_reason(env):  # Python handlers: the windows run serially too
            runs = [("serial", 1)]
        env.close()
        for executor, n in runs:
            env = env_fn(decisions="windows", executor=executor, num_threads=n)
            run = _episode(env, seed, policy)
            require_runtime(env, executor, n)
            env.close()
            found = _difference(reference, run)
            if found:
                raise AssertionError(
                    f"decisions by windows on executor {executor!r} with {n} threads differ "
                    f"from one at a time (seed {seed}) at {found}"
                )
