"""Python-layer groups: what the Python shell around the runtime costs.

* ``dict_group``: pcs_v0 through the PettingZoo dict API (``env.step(dict)``)
  and the array fast path (``step_arrays``), serial and parallel-2: the
  per-agent cost of the dicts is ``dict - arrays``, and parallel-2 must keep
  its gain through the dicts.
* ``torchrl_group``: ``num_envs`` pcs_v0 instances one batch step at a time:
  the raw ``SeerVectorEnv``, the batched TorchRL env (``SeerBatchedEnv``,
  ``step_and_maybe_reset`` as a collector does), and TorchRL's
  ``PettingZooWrapper`` over one env per instance.
* ``async_group``: aircraft_v0 sampled with the MLP policy: the sync vector
  env (policy on every instance, then the step; serial and parallel-2)
  against the async one with two half-batches in flight (the policy of one
  half runs while the other steps, each half on its own background thread).
  One case step is one step of every instance. Async is judged against the
  best sync case, and the notes say how much policy time it hid; a small
  policy (64, 64) has little to hide; a (896, 896) one costs about what the
  env's step costs on one thread (policy and env of the same order).
"""

from __future__ import annotations

import functools
import time

import numpy as np

from bench.adapters import NEVER
from bench.env_cases import timed_env
from bench.groups import Group, Target
from bench.policy import MlpPolicy
from bench.timing import Case, paired_difference_ms
from seer_env import vector
from seer_env.envs import pcs_v0

DICT_TARGETS = (
    Target("dict parallel-2", "dict serial", 1.8, "dict step: parallel(2) >= 1.8x serial"),
)
TORCHRL_TARGETS = (
    Target("torchrl batched", "raw vector", 0.7, "TorchRL batched >= 0.7x raw SeerVectorEnv"),
)
# The MLP whose cost is about aircraft_v0's one-thread step (8 x 128 UAVs):
# the row the async target is judged on.
POLICY_LIKE_ENV = (896, 896)
ASYNC_TARGETS = (
    Target(
        "async 2 halves",
        "sync parallel-2",
        1.3,
        "policy ~ env: async >= 1.3x sync parallel-2 sampling",
    ),
)


# -- dict vs arrays -------------------------------------------------------------------------------
def _discard(step):
    """A case step: ``step()`` with its result dropped (a case returns None or its parts)."""

    def run() -> None:
        step()

    return run


def _dict_cases(config: dict) -> tuple[list[Case], list[str]]:
    cells = config["width"] * config["height"]
    actions = np.random.default_rng(0).integers(0, 3, cells, dtype=np.int64)
    cases = []
    for executor, threads in (("serial", 1), ("parallel", 2)):
        label = "serial" if threads == 1 else f"parallel-{threads}"
        for api in ("dict", "arrays"):
            env = timed_env(pcs_v0.parallel_env, config, executor, threads)
            if api == "dict":
                as_dict = dict(zip(env.possible_agents, actions.tolist()))
                step = functools.partial(env.step, as_dict)
            else:
                step = functools.partial(env.step_arrays, actions)
            case = Case(f"{api} {label}", _discard(step), meta={"agents": cells}, wake=threads > 1)
            cases.append(case)
    return cases, []


def dict_overhead_lines(rows: list[dict]) -> list[str]:
    """What the dicts cost per agent (``dict - arrays``), and the ceiling on the dict speed-up.

    The dict step is the array step plus the per-agent work D; with serial S
    and parallel-2 P array steps, dict parallel-2 vs dict serial is
    (S + D) / (P + D): never above the arrays' own S / P.
    """
    by = {r["name"]: r for r in rows}
    lines = []
    for label in ("serial", "parallel-2"):
        d, a = by.get(f"dict {label}"), by.get(f"arrays {label}")
        if d and a and d.get("agents"):
            # Paired by round (the two cases' turns of one round are
            # milliseconds apart): a difference of the two medians swung from
            # -0.3 to 1.4 ms between runs on a 2-vCPU VM.
            extra, how = paired_difference_ms(d, a), "paired by round"
            if extra is None:
                extra, how = d["median_ms"] - a["median_ms"], "difference of medians"
            lines.append(
                f"dict - arrays, {label} ({how}): {extra:.3f} ms, "
                f"{extra * 1e3 / d['agents']:.3f} us per agent (target <= 0.25)"
            )
    s, p = by.get("arrays serial"), by.get("arrays parallel-2")
    if s and p and p["median_ms"] > 0:
        lines.append(
            f"arrays parallel-2 vs arrays serial: {s['median_ms'] / p['median_ms']:.2f}x "
            "(the ceiling on the dict speed-up)"
        )
    return lines


def dict_group(size: int, *, rounds: int = 5, steps: int = 3) -> Group:
    """pcs_v0 ``size x size``: dict step vs ``step_arrays``, serial and parallel-2."""
    config = {"width": size, "height": size, "move_interval": 450.0}
    return Group(
        "python_layer",
        f"Dict API vs arrays: PCS {size}x{size} ({size * size} agents)",
        config,
        functools.partial(_dict_cases, config),
        steps_per_turn=steps,
        rounds=rounds,
        targets=DICT_TARGETS if size == 64 else (),
        derive=dict_overhead_lines,
    )


# -- TorchRL --------------------------------------------------------------------------------------
def _torchrl_cases(config: dict, num_envs: int) -> tuple[list[Case], list[str]]:
    try:
        import torch
        from torchrl.envs.utils import step_mdp  # noqa: F401 - the extra is installed

        from seer_env.integrations.torchrl import make_batched_env, make_env
    except ImportError as exc:
        return [], [f"TorchRL cases left out: {exc}"]
    kw = dict(config, max_cycles=NEVER, num_threads=1, check_steps=0)  # time unchecked steps
    raw = vector.make("pcs_v0", num_envs, seed=0, **kw)
    raw.reset()
    actions = np.random.default_rng(0).integers(0, 3, raw.num_envs, dtype=np.int64)
    cases = [Case("raw vector", _discard(functools.partial(raw.step, actions)))]

    batched = make_batched_env("pcs_v0", num_envs, seed=0, **kw)
    td = [batched.reset()]
    group_actions = torch.from_numpy(actions).view(num_envs, -1)

    def batched_step() -> None:
        td[0].set((batched.group, "action"), group_actions)
        _, td[0] = batched.step_and_maybe_reset(td[0])

    cases.append(Case("torchrl batched", batched_step, close=batched.close))

    wrapped = [make_env("pcs_v0", seed=i, **kw) for i in range(num_envs)]
    tds = [w.reset() for w in wrapped]
    group = next(iter(wrapped[0].group_map))  # PettingZooWrapper's group: the agent prefix
    rows = group_actions.unbind(0)

    def wrapper_step() -> None:
        for i, w in enumerate(wrapped):
            tds[i].set((group, "action"), rows[i])
            _, tds[i] = w.step_and_maybe_reset(tds[i])

    cases.append(Case("torchrl wrapper", wrapper_step))
    return cases, []


def torchrl_group(size: int = 8, num_envs: int = 8, *, rounds: int = 5, steps: int = 3) -> Group:
    """``num_envs`` pcs_v0 ``size x size``: raw vector env vs TorchRL batched vs wrapper."""
    config = {"width": size, "height": size}
    return Group(
        "python_layer",
        f"TorchRL: {num_envs} x PCS {size}x{size}, one batch step",
        {**config, "num_envs": num_envs},
        functools.partial(_torchrl_cases, config, num_envs),
        steps_per_turn=steps,
        rounds=rounds,
        targets=TORCHRL_TARGETS,
    )


# -- async vs sync sampling -----------------------------------------------------------------------
def _async_cases(
    config: dict, num_envs: int, hidden: tuple[int, ...]
) -> tuple[list[Case], list[str]]:
    kw = dict(config, max_cycles=NEVER, seed=0, check_steps=0)
    serial = dict(kw, executor="serial", num_threads=1)
    obs_dim = act_dim = 0
    cases = []
    for label, options in (
        ("sync", serial),
        ("sync parallel-2", dict(kw, executor="parallel", num_threads=2)),
    ):
        sync = vector.make("aircraft_v0", num_envs, **options)
        obs_dim = sync.single_observation_space.shape[0]
        act_dim = sync.single_action_space.shape[0]
        policy = MlpPolicy(obs_dim, act_dim, hidden=hidden, action_scale=0.1)
        cases.append(Case(label, _sync_step(sync, policy), wake=label != "sync"))
    policy = MlpPolicy(obs_dim, act_dim, hidden=hidden, action_scale=0.1)

    # Each half steps serially on its own background thread: two halves in
    # flight use both cores, like "sync parallel-2" does for the whole batch.
    env = vector.make_async("aircraft_v0", num_envs, num_batches=2, **serial)
    first = env.reset()[0]
    halves = [first[env.rows(0)], first[env.rows(1)]]
    env.step_async(policy(halves[0]), batch=0)  # in flight from here on

    def async_step() -> dict:
        # Batch 0 is in flight: the policy of batch 1 runs meanwhile.
        t0 = time.perf_counter()
        env.step_async(policy(halves[1]), batch=1)
        t1 = time.perf_counter()
        halves[0] = env.step_wait(batch=0)[0]
        t2 = time.perf_counter()
        env.step_async(policy(halves[0]), batch=0)
        t3 = time.perf_counter()
        halves[1] = env.step_wait(batch=1)[0]
        # "env": time the caller waited for the env (the part the policy did not hide).
        return {"policy": (t1 - t0) + (t3 - t2), "env": (t2 - t1) + (time.perf_counter() - t3)}

    def close() -> None:
        env.close()  # waits for batch 0's step in flight

    meta = {"instances": num_envs, "agents": num_envs * config["num_uavs"]}
    cases.append(Case("async 2 halves", async_step, close=close))
    for case in cases:
        case.meta = meta
    return cases, []


def _sync_step(env, policy):
    """A sync sampling step: the policy on every instance, then one step of all of them."""
    obs = [env.reset()[0]]

    def step() -> dict:
        t0 = time.perf_counter()
        actions = policy(obs[0])
        t1 = time.perf_counter()
        obs[0] = env.step(actions)[0]
        return {"policy": t1 - t0, "env": time.perf_counter() - t1}

    return step


def policy_hidden_lines(rows: list[dict]) -> list[str]:
    """Async against the best sync case, and how much policy time the caller did not wait for.

    With P the policy's time alone and E the env's time on 2 threads (the
    parts of ``sync parallel-2``), a caller that hid nothing would wait P + E
    per sampling step; async waited T. Hidden: (P + E - T) / P, clipped to
    [0, 1] (async's own policy part runs beside the env's threads and reads
    longer: it is not the policy's cost). On 2 cores the best async can do
    is max(P, (P + E1) / 2, E1 / 2), with E1 the env's step on one thread
    (the ``sync`` row's env part; 2E without it): the policy runs on one
    thread, each half's env steps serially on its own, and the work of both
    is shared by 2 cores. The bound on async vs sync parallel-2 is P + E over
    that; when E = E1 / 2 it peaks at 1.5x for P = E1.
    """
    by = {r["name"]: r for r in rows}
    syncs = [by[n] for n in ("sync", "sync parallel-2") if n in by]
    if "async 2 halves" not in by or not syncs:
        return []
    best = min(syncs, key=lambda r: r["median_ms"])
    asyn = by["async 2 halves"]
    par2 = by.get("sync parallel-2", best)
    p, e, t = par2.get("policy_median_ms", 0.0), par2.get("env_median_ms", 0.0), asyn["median_ms"]
    lines = [f"async 2 halves vs the best sync case ({best['name']}): {best['median_ms'] / t:.2f}x"]
    if p > 0:
        e1 = by.get("sync", {}).get("env_median_ms", 2 * e)
        hidden = min(max((p + e - t) / p, 0.0), 1.0)
        bound = (p + e) / max(p, (p + e1) / 2, e1 / 2)
        lines.append(
            f"policy {p:.3f} ms, env on 2 threads {e:.3f} ms (on 1 thread {e1:.3f} ms): "
            f"{hidden:.0%} of the policy time hidden; the 2-core bound on async vs sync "
            f"parallel-2 is {bound:.2f}x"
        )
    return lines


def async_group(
    num_uavs: int = 128,
    num_envs: int = 8,
    hidden: tuple[int, ...] = (64, 64),
    *,
    rounds: int = 5,
    steps: int = 3,
) -> Group:
    """aircraft_v0 ``num_envs x num_uavs`` with an MLP policy: sync (1 and 2 threads) vs async.

    The 1.3x target applies where the policy costs about as much as the env's
    step on one thread (``POLICY_LIKE_ENV``: ~30 ms for 1024 agents here, the
    env ~26-31 ms): with a small policy there is little to hide, and async
    can only match ``sync parallel-2``.
    """
    config = {"num_uavs": num_uavs}
    return Group(
        "python_layer",
        f"Sampling with the MLP policy {hidden}: {num_envs} x Aircraft {num_uavs} UAVs, "
        "sync vs async",
        {**config, "num_envs": num_envs, "hidden": list(hidden)},
        functools.partial(_async_cases, config, num_envs, hidden),
        steps_per_turn=steps,
        rounds=rounds,
        metric="sampling step (policy + env.step of every instance)",
        targets=ASYNC_TARGETS if tuple(hidden) == POLICY_LIKE_ENV else (),
        derive=policy_hidden_lines,
    )


def groups(quick: bool) -> list[Group]:
    """The Python-layer rows of a profile."""
    sizes = (32, 64) if quick else (16, 32, 64, 128)
    return [
        # 64x64 carries the targets: more rounds, as dict - arrays is a
        # difference of two noisy medians.
        *(dict_group(s, rounds=20 if s == 64 else 5) for s in sizes),
        torchrl_group(),
        async_group(),
        # Carries the async target: 5 rounds of 3 steps read 1.19-1.56x on
        # one build; 15 rounds halve the median's spread (~15 s).
        async_group(hidden=POLICY_LIKE_ENV, rounds=15),
    ]
