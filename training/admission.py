"""The event-driven task: call admission on ``pcs_admission``, PPO against the rules.

A cell decides at each call and handoff arrival (with a channel free) whether
to admit it (``SeerDecisionEnv``: agents act when their events ask). Scored as
return per cell and episode (96 hourly steps), on the evaluation seeds
10000-10004, for:

- **always admit**: every arrival while a channel is free (no guard channel);
- **guard threshold**: the classic guard-channel rule, a new call admitted
  only while more than ``g`` channels are free, a handoff whenever one is
  (the best ``g`` in 1..6, picked on the evaluation episodes: favours it);
- **PPO**: one policy shared by every cell, trained on the decisions
  themselves: each decision is a step of its cell's own trajectory, its
  reward what accrued until the cell's next decision (the env returns it
  so), GAE along each cell's decisions.

    python -m training.admission                   # 3 seeds, the table, JSON and PNG
    python -m training.admission --quick           # a smoke run
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass

import numpy as np

import seer_env

EVAL_SEEDS = (10000, 10001, 10002, 10003, 10004)
TASK = "pcs_admission"
# Observation entries (cpp/models/pcs/pcs.cpp, observe): own busy fraction,
# whether the arrival asked about is a handoff.
BUSY, IS_HANDOFF = 0, 1


@dataclass
class AdmissionConfig:
    """Hyperparameters and the env's size."""

    width: int = 8
    height: int = 8
    max_cycles: int = 96
    updates: int = 160
    epochs: int = 4
    minibatches: int = 8
    lr: float = 3e-3
    # Discount per simulated minute between a cell's decisions (a semi-MDP:
    # decisions come at uneven times): 0.995 halves in about 2.3 hours, the
    # time a call holds its channel.
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.003
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 64
    torch_threads: int = 1


def make_env(cfg: AdmissionConfig, **options) -> seer_env.SeerDecisionEnv:
    """The task's env at ``cfg``'s size and episode length."""
    return seer_env.SeerDecisionEnv(
        TASK, {"width": cfg.width, "height": cfg.height}, max_cycles=cfg.max_cycles, **options
    )


def guard_rule(channels: int, guard: int):
    """Admit a handoff whenever a channel is free, a new call while > ``guard`` are free."""

    def policy(obs: np.ndarray) -> np.ndarray:
        free = np.rint((1.0 - obs[:, BUSY]) * channels)
        return ((obs[:, IS_HANDOFF] > 0.5) | (free > guard)).astype(np.int64)

    return policy


def play(env, policy, seed: int) -> float:
    """One episode with ``policy(obs[k, d]) -> actions[k]``; return per cell."""
    env.reset(seed=seed)
    n = len(env.possible_agents)
    total = np.zeros(n)
    actions = np.zeros(n, dtype=np.int64)
    while env.agents:
        asked = np.flatnonzero(env.needs_action)
        actions[asked] = policy(env.sim.observations()[asked])
        _, rewards, _, _ = env.step_arrays(actions)
        total += rewards
    return float(total.mean())


def evaluate(cfg: AdmissionConfig, policy, seeds=EVAL_SEEDS) -> list[float]:
    """Return per cell of ``policy`` on each evaluation episode."""
    env = make_env(cfg, executor="serial", num_threads=1)
    return [play(env, policy, s) for s in seeds]


def train(cfg: AdmissionConfig, seed: int, log=print) -> dict:
    """PPO on the decisions of one env, one episode per update."""
    import torch

    from training.ppo import make_agent

    torch.manual_seed(seed)
    torch.set_num_threads(cfg.torch_threads)
    rng = np.random.default_rng(seed)
    env = make_env(cfg)
    n = len(env.possible_agents)
    obs_dim = env.observation_space(env.possible_agents[0]).shape[0]
    agent = make_agent(obs_dim, env.action_space(env.possible_agents[0]), cfg.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.lr, eps=1e-5)
    history = []
    start = time.perf_counter()
    for update in range(1, cfg.updates + 1):
        # One episode: every decision, in return order, and each cell's chain of them.
        obs_rows, act_rows, logp_rows, val_rows, agent_rows, time_rows = [], [], [], [], [], []
        rewards: list[float] = []
        last = np.full(n, -1)  # each cell's latest decision (index into the rows)
        env.reset(seed=seed * 1000 + update)
        actions = np.zeros(n, dtype=np.int64)
        episode_return = np.zeros(n)
        env_seconds = 0.0
        while env.agents:
            asked = env.sim.requests()[0]
            o = torch.as_tensor(env.sim.observations()[asked])
            time_rows.append(env.decision_times)
            with torch.no_grad():
                a, logp, _, v = agent.act(o)
            base = len(rewards)
            obs_rows.append(o)
            act_rows.append(a)
            logp_rows.append(logp)
            val_rows.append(v)
            agent_rows.append(asked)
            rewards.extend([0.0] * len(asked))
            last[asked] = np.arange(base, base + len(asked))
            actions[asked] = a.numpy()
            t0 = time.perf_counter()
            _, r, _, _ = env.step_arrays(actions)
            env_seconds += time.perf_counter() - t0
            episode_return += r
            # What accrued since a cell's previous return follows its previous decision.
            credited = np.flatnonzero(r != 0.0)
            owners = last[credited]
            for i, k in zip(credited.tolist(), owners.tolist()):
                if k >= 0:
                    rewards[k] += float(r[i])
        b_obs = torch.cat(obs_rows)
        b_act = torch.cat(act_rows)
        b_logp = torch.cat(logp_rows)
        b_val = torch.cat(val_rows)
        b_agent = np.concatenate(agent_rows)
        b_time = np.concatenate(time_rows)
        b_rew = torch.as_tensor(rewards, dtype=torch.float32)
        # GAE along each cell's decisions, discounted by the minutes between
        # them; the episode's end is terminal.
        adv = torch.zeros_like(b_rew)
        for cell in range(n):
            idx = np.flatnonzero(b_agent == cell)
            running, next_value, next_time = 0.0, 0.0, None
            for k in idx[::-1].tolist():
                g = 0.0 if next_time is None else cfg.gamma ** (next_time - b_time[k])
                delta = b_rew[k] + g * next_value - b_val[k]
                running = delta + g * cfg.gae_lambda * running
                adv[k] = running
                next_value, next_time = b_val[k], b_time[k]
        returns = adv + b_val
        count = b_obs.shape[0]
        for _ in range(cfg.epochs):
            order = torch.as_tensor(rng.permutation(count))
            for idx in torch.tensor_split(order, cfg.minibatches):
                _, new_logp, entropy, new_val = agent.act(b_obs[idx], b_act[idx])
                ratio = (new_logp - b_logp[idx]).exp()
                a = adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
                v_loss = 0.5 * ((new_val - returns[idx]) ** 2).mean()
                loss = pg - cfg.ent_coef * entropy.mean() + cfg.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
                optimizer.step()
        row = {
            "update": update,
            "decisions": count,
            "episode_return": float(episode_return.mean()),
            "admit_rate": float(b_act.float().mean()),
            "entropy": entropy.mean().item(),
            "env_seconds": env_seconds,
            "seconds": time.perf_counter() - start,
        }
        history.append(row)
        log(
            f"  seed {seed} update {update:3d}/{cfg.updates}  return/cell "
            f"{row['episode_return']:8.2f}  admit {row['admit_rate']:.3f}  "
            f"decisions {count}  {row['seconds']:5.0f} s"
        )
    return {"agent": agent, "history": history, "seconds": time.perf_counter() - start}


def greedy(agent):
    """The trained agent's argmax as a policy of observation rows."""
    import torch

    def policy(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return agent.greedy(torch.as_tensor(obs)).numpy().astype(np.int64)

    return policy


def plot(result: dict, path: str) -> None:
    """The learning curves (episode return per update, one line per seed) beside the rules."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for run in result["ppo"]:
        returns = [row["episode_return"] for row in run["history"]]
        ax.plot(range(1, len(returns) + 1), returns, label=f"PPO seed {run['seed']} (training)")
    for name, scores in result["rules"].items():
        ax.axhline(statistics.mean(scores), linestyle="--", color="grey")
        ax.annotate(name, (1, statistics.mean(scores)), fontsize=8, va="bottom")
    ax.set_xlabel("update (one 96-step episode of 8x8 cells)")
    ax.set_ylabel("return per cell and episode")
    ax.set_title("pcs_admission_v0: PPO on the decisions")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """The command line (module docstring): the rules, PPO's seeds, the table and JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--updates", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default="docs/img/tasks/pcs_admission.json")
    args = parser.parse_args(argv)
    cfg = AdmissionConfig()
    if args.quick:
        cfg.updates, cfg.max_cycles, args.seeds = 2, 12, 1
    if args.updates:
        cfg.updates = args.updates
    channels = int(seer_env._core.workload_spec(TASK)["params"][2]["default"])
    eval_seeds = EVAL_SEEDS[:2] if args.quick else EVAL_SEEDS
    scores = {"always admit": evaluate(cfg, guard_rule(channels, 0), eval_seeds)}
    guards = {g: evaluate(cfg, guard_rule(channels, g), eval_seeds) for g in range(1, 7)}
    best = max(guards, key=lambda g: statistics.mean(guards[g]))
    scores[f"guard threshold (g={best})"] = guards[best]
    trained = []
    for seed in range(1, args.seeds + 1):
        run = train(cfg, seed)
        trained.append(
            {
                "seed": seed,
                "greedy": evaluate(cfg, greedy(run["agent"]), eval_seeds),
                "history": run["history"],
                "seconds": run["seconds"],
            }
        )
    ppo = [statistics.mean(t["greedy"]) for t in trained]
    lines = ["| policy | return per cell (mean ± sd) |", "|---|---|"]
    for name, s in scores.items():
        sd = statistics.stdev(s) if len(s) > 1 else 0.0
        lines.append(f"| {name} | {statistics.mean(s):.1f} ± {sd:.1f} |")
    sd = statistics.stdev(ppo) if len(ppo) > 1 else 0.0
    lines.append(
        f"| PPO greedy ({len(ppo)} seeds: {', '.join(f'{p:.1f}' for p in ppo)}) | "
        f"{statistics.mean(ppo):.1f} ± {sd:.1f} |"
    )
    print("\n".join(lines))
    result = {
        "config": asdict(cfg),
        "eval_seeds": list(eval_seeds),
        "rules": scores,
        "guards": {str(g): v for g, v in guards.items()},
        "ppo": [{k: v for k, v in t.items()} for t in trained],
    }
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    plot(result, args.json.removesuffix(".json") + ".png")


if __name__ == "__main__":
    main()
