"""``python -m training``: random, best fixed, PPO and TorchRL IPPO on each task and size.

    python -m training                       # everything (see docs/tasks.md)
    python -m training --tasks pcs_v1 --sizes small --seeds 3
    python -m training --trainers torchrl    # only the library's IPPO beside the fixed ones
    python -m training --quick               # a smoke run: tiny budgets

Fixed policies (constant actions; hand-written rules) are scored on the
evaluation seeds and the best of each kind is kept (chosen on the same seeds,
which favours them). PPO (``training.ppo``, hand-written) and TorchRL's IPPO
(``training.torchrl_ippo``, the library's recipe, at the same budget) train
once per seed (seed s trains with s and is scored on the same evaluation
seeds); the table gives mean ± sd over training seeds for them and over
evaluation episodes for the fixed policies.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from training import policies
from training.evaluate import TorchPolicy, episode_returns
from training.ppo import PPOConfig, train
from training.torchrl_ippo import IPPOConfig
from training.torchrl_ippo import train as train_ippo

TRAINERS = ("ppo", "torchrl")

# Sizes and PPO budgets per task. The env config of a size is passed to every
# policy and to the vector env; env steps = updates * num_steps * num_envs.
# gamma 0.9: a guard's benefit (handoffs later in the hour and the next ones)
# comes after its cost (calls blocked now); 0.5 learned too few guards.
_PCS_PPO = dict(updates=200, epochs=8, minibatches=4, gamma=0.9)
_AIRCRAFT_PPO = dict(
    num_steps=128,
    updates=40,
    lr=3e-4,
    gamma=0.99,
    gae_lambda=0.95,
    epochs=4,
    minibatches=8,
    ent_coef=0.0,
)
TASKS: dict[str, dict[str, dict]] = {
    "pcs_v1": {
        # Many small updates: each can move the policy only within the clip, and a
        # rollout of 2 envs x 48 steps x 64 cells (6,144 samples) already averages
        # the per-cell noise; bigger rollouts bought fewer updates for the same time.
        "small": dict(env=dict(width=8, height=8), ppo=dict(_PCS_PPO, num_envs=2, num_steps=48)),
        # 16x16: 1 env x 24 steps x 256 cells, the small size's samples per update.
        "medium": dict(env=dict(width=16, height=16), ppo=dict(_PCS_PPO, num_envs=1, num_steps=24)),
    },
    "aircraft_v1": {
        "small": dict(env=dict(num_uavs=16), ppo=dict(_AIRCRAFT_PPO, num_envs=8)),
        "medium": dict(env=dict(num_uavs=64), ppo=dict(_AIRCRAFT_PPO, num_envs=2)),
    },
}
EVAL_SEEDS = [10_000 + i for i in range(5)]


def fixed_policies(task: str, env) -> dict[str, list]:
    """The fixed policies tried on ``task``: constant actions, and hand-written rules."""
    if task.startswith("pcs"):
        rules = [policies.RushHourGuard(r, b) for r in (3, 4, 5) for b in (0, 1)]
        return {
            "best_constant": [policies.ConstantGuard(g) for g in range(0, 6)],
            "best_rule": rules if task != "pcs_v0" else [],
        }
    return {"best_constant": [policies.Hover()], "best_rule": [policies.GoalSeeker(env.arena_size)]}


def run_task(task: str, size: str, seeds: list[int], quick: bool, log, trainers=TRAINERS) -> dict:
    """Score random, the fixed policies and the ``trainers`` (one training per seed)."""
    import seer_env

    spec = TASKS[task][size]
    env_config = dict(spec["env"], num_threads=1)
    probe = seer_env.make(task, **env_config)
    space = probe.action_space(probe.possible_agents[0])
    result: dict = {"task": task, "size": size, "env": spec["env"]}

    t0 = time.perf_counter()
    result["random"] = episode_returns(
        task, env_config, lambda env, s: policies.RandomPolicy(space, s), EVAL_SEEDS
    )
    for kind, candidates in fixed_policies(task, probe).items():
        best = None
        for pol in candidates:
            scores = episode_returns(task, env_config, lambda env, s, p=pol: p, EVAL_SEEDS)
            log(f"  {task} {size} {pol.name}: {np.mean(scores):.2f}")
            if best is None or np.mean(scores) > np.mean(best[1]):
                best = (pol.name, scores)
        if best is not None:
            result[kind] = {"name": best[0], "returns": best[1]}
    result["fixed_seconds"] = time.perf_counter() - t0

    ppo_kwargs = dict(spec["ppo"])
    if quick:
        ppo_kwargs.update(updates=2, num_steps=16)
    cfg = PPOConfig(**ppo_kwargs, env_config=env_config)
    runs = []
    for seed in seeds if "ppo" in trainers else []:
        out = train(task, cfg, seed, log=log)
        # Scored as trained: actions sampled from the policy (seeded per episode).
        scores = episode_returns(
            task,
            env_config,
            lambda env, s, a=out["agent"]: TorchPolicy(a, space, False, s),
            EVAL_SEEDS,
        )
        greedy = TorchPolicy(out["agent"], space)
        greedy_scores = episode_returns(task, env_config, lambda env, s, g=greedy: g, EVAL_SEEDS)
        runs.append(
            {
                "seed": seed,
                "returns": scores,
                "score": float(np.mean(scores)),
                "greedy_score": float(np.mean(greedy_scores)),
                "train_seconds": out["seconds"],
                "curve": [(h["env_steps"], h["mean_reward"]) for h in out["history"]],
            }
        )
        log(
            f"  {task} {size} PPO seed {seed}: {np.mean(scores):.2f} sampled,"
            f" {np.mean(greedy_scores):.2f} greedy ({out['seconds']:.0f} s)"
        )
    result["ppo"] = {"config": cfg.__dict__ | {"env_config": env_config}, "runs": runs}
    if "torchrl" in trainers:
        result["torchrl_ippo"] = run_ippo(task, size, cfg, seeds, log)
    result["env_steps"] = cfg.updates * cfg.num_steps * cfg.num_envs
    result["agent_steps"] = result["env_steps"] * len(probe.possible_agents)
    return result


def run_ippo(task: str, size: str, ppo: PPOConfig, seeds: list[int], log) -> dict:
    """TorchRL's IPPO with PPO's budget and settings (``ppo``), one training per seed."""
    cfg = IPPOConfig(
        num_envs=ppo.num_envs,
        num_steps=ppo.num_steps,
        updates=ppo.updates,
        epochs=ppo.epochs,
        minibatches=ppo.minibatches,
        lr=ppo.lr,
        gamma=ppo.gamma,
        lmbda=ppo.gae_lambda,
        clip_epsilon=ppo.clip,
        entropy_eps=ppo.ent_coef,
        max_grad_norm=ppo.max_grad_norm,
        hidden=ppo.hidden,
        env_config=ppo.env_config,
    )
    runs = []
    for seed in seeds:
        out = train_ippo(task, cfg, seed, log=log)
        policy = out["policy"]
        scores = episode_returns(task, cfg.env_config, lambda env, s, p=policy: p, EVAL_SEEDS)
        runs.append(
            {
                "seed": seed,
                "returns": scores,
                "greedy_score": float(np.mean(scores)),
                "train_seconds": out["seconds"],
                "curve": [(h["env_steps"], h["mean_reward"]) for h in out["history"]],
            }
        )
        log(f"  {task} {size} TorchRL IPPO seed {seed}: {np.mean(scores):.2f} greedy")
    return {"config": dict(cfg.__dict__), "runs": runs}


def _cell(scores: list[float], name: str | None = None) -> str:
    if not scores:
        return "-"  # a run of the other trainer only
    text = f"{np.mean(scores):.1f} ± {np.std(scores):.1f}"
    return f"{text} ({name})" if name else text


def table(results: list[dict]) -> str:
    """The Markdown results table (return per agent and episode, mean ± sd)."""
    lines = [
        "| task | size | random | best constant | best rule | PPO (sampled) | PPO (greedy)"
        " | PPO seeds | PPO env steps | wall / seed | TorchRL IPPO (greedy) | IPPO wall / seed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ppo = [run["score"] for run in r["ppo"]["runs"]]
        greedy = [run.get("greedy_score", np.nan) for run in r["ppo"]["runs"]]
        walls = [run["train_seconds"] for run in r["ppo"]["runs"]]
        wall = f"{np.mean(walls):.0f} s" if walls else "-"
        fixed = [
            _cell(r[k]["returns"], r[k]["name"]) if k in r else "-"
            for k in ("best_constant", "best_rule")
        ]
        ippo = r.get("torchrl_ippo", {}).get("runs", [])
        ippo_cells = (
            f"{_cell([run['greedy_score'] for run in ippo])} ({len(ippo)} seeds)"
            f" | {np.mean([run['train_seconds'] for run in ippo]):.0f} s"
            if ippo
            else "- | -"
        )
        lines.append(
            f"| {r['task']} | {r['size']} | {_cell(r['random'])} | {fixed[0]} | {fixed[1]}"
            f" | {_cell(ppo)} | {_cell(greedy)} | {len(ppo)} | {r['env_steps']:,} | {wall}"
            f" | {ippo_cells} |"
        )
    return "\n".join(lines)


def day_averages_comparable(result: dict) -> bool:
    """Whether a curve point (one rollout's mean reward) compares with the episode averages.

    The baselines' lines are whole-episode means per step. A rollout covers the
    same hours only when it spans whole episodes (PCS traffic has rush hours: 16
    steps from midnight are quieter than a day).
    """
    steps = result["ppo"]["config"]["num_steps"]
    return steps % result.get("max_cycles", 1) == 0


def plot(result: dict, path: Path) -> None:
    """Learning curves (mean reward per agent-step per update) of every seed, with baselines.

    The baselines are drawn only where they compare (``day_averages_comparable``);
    the title says when they do not.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = result["ppo"]["config"]["num_steps"] if result["ppo"]["runs"] else 1
    fig, ax = plt.subplots(figsize=(6, 3.6))
    curves = [("PPO", run, "-") for run in result["ppo"]["runs"]]
    ippo_runs = result.get("torchrl_ippo", {}).get("runs", [])
    curves += [("TorchRL IPPO", run, "--") for run in ippo_runs]
    for trainer, run, style in curves:
        x, y = (np.array(v) for v in zip(*run["curve"]))
        # A running mean: short rollouts see a few simulated days, each a noisy sample.
        k = max(1, len(y) // 20)
        y = np.convolve(y, np.ones(k) / k, mode="valid")
        label = f"{trainer} seed {run['seed']} (sampled actions"
        label += f", mean of {k} updates)" if k > 1 else ")"
        ax.plot(x[k - 1 :], y, style, label=label)
    cycles = result.get("max_cycles", 1)
    comparable = day_averages_comparable(result)
    for key, style in (("random", ":"), ("best_constant", "--"), ("best_rule", "-.")):
        if key not in result or not comparable:
            continue
        scores = result[key] if key == "random" else result[key]["returns"]
        name = "random" if key == "random" else result[key]["name"]
        ax.axhline(np.mean(scores) / cycles, linestyle=style, color="k", label=name)
    ax.set_xlabel("env steps (every agent acts each step)")
    ax.set_ylabel("reward per agent-step")
    title = f"{result['task']} {result['size']} ({steps} steps per rollout)"
    if not comparable:
        title += f"\nrollouts are not whole {cycles}-step episodes: no episode baselines"
    ax.set_title(title, fontsize=9 if not comparable else None)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def merge(parts: list[dict]) -> dict:
    """One result from runs of the same task and size that trained different seeds."""
    out = dict(parts[0])
    for trainer in ("ppo", "torchrl_ippo"):
        found = [p[trainer] for p in parts if trainer in p]
        if found:
            out[trainer] = dict(found[0])
            runs = (r for f in found for r in f["runs"])
            out[trainer]["runs"] = sorted(runs, key=lambda r: r["seed"])
    out["wall_seconds"] = max(p["wall_seconds"] for p in parts)
    return out


def report(out: Path) -> list[dict]:
    """Merge every ``TASK_SIZE_seed*.json`` in ``out``; write PNGs and ``results.txt``."""
    groups: dict[tuple, list[dict]] = {}
    for path in sorted(out.glob("*_seed*.json")):
        r = json.loads(path.read_text())
        groups.setdefault((r["task"], r["size"]), []).append(r)
    order = [(t, s) for t in TASKS for s in TASKS[t]]
    results = [merge(groups[k]) for k in order if k in groups]
    for r in results:
        plot(r, out / f"{r['task']}_{r['size']}.png")
    (out / "results.txt").write_text(table(results) + "\n")
    return results


def main(argv: list[str] | None = None) -> list[dict]:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    p.add_argument("--sizes", nargs="+", default=["small", "medium"])
    p.add_argument("--seeds", type=int, default=3, help="PPO training seeds")
    p.add_argument("--first-seed", type=int, default=1, help="seeds first .. first + seeds - 1")
    p.add_argument("--out", default="baselines_out", help="folder for PNG, JSON and results.txt")
    p.add_argument("--quick", action="store_true", help="tiny PPO budgets (a smoke test)")
    p.add_argument(
        "--trainers",
        nargs="+",
        default=list(TRAINERS),
        choices=list(TRAINERS),
        help="ppo: the hand-written PPO; torchrl: TorchRL's IPPO (the torchrl extra)",
    )
    p.add_argument(
        "--report-only",
        action="store_true",
        help="only merge the JSON in --out (runs split by seed)",
    )
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        seeds = list(range(args.first_seed, args.first_seed + args.seeds))
        tag = f"seed{seeds[0]}" + (f"-{seeds[-1]}" if len(seeds) > 1 else "")
        tag += "" if set(args.trainers) == set(TRAINERS) else "_" + "_".join(args.trainers)
        for task in args.tasks:
            for size in args.sizes:
                import seer_env

                t0 = time.perf_counter()
                r = run_task(task, size, seeds, args.quick, print, args.trainers)
                r["max_cycles"] = seer_env.make(task, **TASKS[task][size]["env"]).max_cycles
                r["wall_seconds"] = time.perf_counter() - t0
                (out / f"{task}_{size}_{tag}.json").write_text(json.dumps(r, indent=1))
                print(table([r]), flush=True)
    results = report(out)
    print(table(results))
    return results


if __name__ == "__main__":
    main()
