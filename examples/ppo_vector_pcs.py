"""CleanRL-style PPO in plain torch on the seer_env vector env (pcs_v0).

    python examples/ppo_vector_pcs.py --num-envs 8 --width 8 --height 8 --updates 20

One policy is shared by every cell of every instance: the vector env flattens
agents into the batch (row ``i * num_agents + j`` is agent ``j`` of instance
``i``), so each row is one "environment" to PPO, exactly as with SuperSuit's
``concat_vec_envs_v1``. All ``num_envs`` instances step together in one C++
call on one thread pool.

NEXT_STEP autoreset (Gymnasium 1.x): when an instance ends, the observation
returned with its last reward is its final observation (so a truncated
episode bootstraps from it), and the next ``step()`` only resets that
instance (reward 0, actions ignored). Such reset steps, and rows of agents
that terminated early (aircraft_v0's black-death rows), are masked out of the
loss (``valid``), and advantages never flow across an episode end.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="pcs_v0")
    p.add_argument("--num-envs", type=int, default=8, help="instances stepped together")
    p.add_argument("--width", type=int, default=8)
    p.add_argument("--height", type=int, default=8)
    p.add_argument("--max-cycles", type=int, default=100)
    p.add_argument("--executor", default=None, help="default: chosen with --threads")
    p.add_argument("--threads", default="auto", help='pool size, or "auto" (STPA)')
    p.add_argument("--num-steps", type=int, default=64, help="rollout length per update")
    p.add_argument("--updates", type=int, default=10)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--torch-threads", type=int, default=1, help="leave the cores to the env")
    return p.parse_args(argv)


def make_agent(obs_dim: int, n_actions: int, hidden: int):
    import torch
    from torch import nn

    def layer(i, o, std=2**0.5):
        lin = nn.Linear(i, o)
        nn.init.orthogonal_(lin.weight, std)
        nn.init.constant_(lin.bias, 0.0)
        return lin

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.critic = nn.Sequential(
                layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                layer(hidden, 1, std=1.0),
            )  # fmt: skip
            self.actor = nn.Sequential(
                layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                layer(hidden, n_actions, std=0.01),
            )  # fmt: skip

        def value(self, x):
            return self.critic(x).squeeze(-1)

        def act(self, x, action=None):
            dist = torch.distributions.Categorical(logits=self.actor(x))
            if action is None:
                action = dist.sample()
            return action, dist.log_prob(action), dist.entropy(), self.value(x)

    return Agent()


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    import torch

    import seer_env.vector

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    rng = np.random.default_rng(args.seed)
    config = {"max_cycles": args.max_cycles, "num_threads": args.threads}
    if args.executor:
        config["executor"] = args.executor
    if args.env.startswith("pcs"):
        config.update(width=args.width, height=args.height)
    envs = seer_env.vector.make(args.env, num_envs=args.num_envs, **config)
    n_rows = envs.num_envs  # instances x agents
    agents_per = envs.agents_per_instance
    obs_dim = envs.single_observation_space.shape[0]
    n_actions = int(envs.single_action_space.n)
    agent = make_agent(obs_dim, n_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)

    T = args.num_steps
    obs_buf = torch.zeros((T, n_rows, obs_dim))
    act_buf = torch.zeros((T, n_rows), dtype=torch.long)
    logp_buf = torch.zeros((T, n_rows))
    rew_buf = torch.zeros((T, n_rows))
    val_buf = torch.zeros((T, n_rows))
    valid_buf = torch.zeros((T, n_rows), dtype=torch.bool)  # a real transition of a live agent
    term_buf = torch.zeros((T, n_rows))  # episode over after this step: terminated
    done_buf = torch.zeros((T, n_rows))  # ... terminated or truncated
    next_val_buf = torch.zeros((T, n_rows))  # V(obs after this step)

    obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(obs)
    acting = np.ones(n_rows, dtype=bool)  # rows that act in the next step
    history: list[dict] = []
    env_seconds = 0.0
    start = time.perf_counter()
    for update in range(1, args.updates + 1):
        # -- rollout --------------------------------------------------------------------------
        for t in range(T):
            resetting = np.repeat(~acting.reshape(-1, agents_per).any(axis=1), agents_per)
            obs_buf[t] = next_obs
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs)
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            valid_buf[t] = torch.as_tensor(acting & ~resetting)
            t0 = time.perf_counter()
            obs, reward, term, trunc, _ = envs.step(action.numpy())
            env_seconds += time.perf_counter() - t0
            next_obs = torch.as_tensor(obs)
            rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32)
            term_buf[t] = torch.as_tensor(term, dtype=torch.float32)
            done_buf[t] = torch.as_tensor(term | trunc, dtype=torch.float32)
            with torch.no_grad():
                next_val_buf[t] = agent.value(next_obs)
            acting = np.where(resetting, True, acting & ~(term | trunc))

        # -- GAE: bootstrap from V(next obs) unless terminated; never across an episode end -----
        with torch.no_grad():
            adv = torch.zeros_like(rew_buf)
            last = torch.zeros(n_rows)
            for t in reversed(range(T)):
                delta = rew_buf[t] + args.gamma * next_val_buf[t] * (1 - term_buf[t]) - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * (1 - done_buf[t]) * last
                last = torch.where(valid_buf[t], last, torch.zeros_like(last))
                adv[t] = last
            returns = adv + val_buf

        # -- PPO update over valid transitions --------------------------------------------------
        mask = valid_buf.reshape(-1)
        b_obs = obs_buf.reshape(-1, obs_dim)[mask]
        b_act, b_logp = act_buf.reshape(-1)[mask], logp_buf.reshape(-1)[mask]
        b_adv, b_ret = adv.reshape(-1)[mask], returns.reshape(-1)[mask]
        n = b_obs.shape[0]
        mb = max(1, n // args.minibatches)
        clipfracs = []
        for _ in range(args.epochs):
            order = torch.as_tensor(rng.permutation(n))
            for s in range(0, n, mb):
                idx = order[s : s + mb]
                _, new_logp, entropy, new_val = agent.act(b_obs[idx], b_act[idx])
                ratio = (new_logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8) if len(idx) > 1 else a
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip))
                pg_loss = pg_loss.mean()
                v_loss = 0.5 * ((new_val - b_ret[idx]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
                clipfracs.append(((ratio - 1).abs() > args.clip).float().mean().item())

        steps = update * T * args.num_envs  # env steps (every agent of an instance acts)
        stats = {
            "update": update,
            "env_steps": steps,
            "mean_reward": float(rew_buf[valid_buf].mean()),
            "pg_loss": pg_loss.item(),
            "v_loss": v_loss.item(),
            "entropy": entropy.mean().item(),
            "clipfrac": float(np.mean(clipfracs)),
            "env_sps": steps / env_seconds,
            "sps": steps / (time.perf_counter() - start),
        }
        history.append(stats)
        print(
            f"update {update:3d}  env steps {steps:7d}"
            f"  reward/agent-step {stats['mean_reward']:8.4f}"
            f"  v_loss {stats['v_loss']:7.4f}  entropy {stats['entropy']:.3f}"
            f"  env {stats['env_sps']:7.0f} steps/s  total {stats['sps']:6.0f} steps/s",
            flush=True,
        )
    envs.close()
    return {"history": history, "rows": n_rows, "agent": agent}


if __name__ == "__main__":
    main()
