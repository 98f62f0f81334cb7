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

The trainer is :func:`training.ppo.train` (the one ``python -m
training`` uses; read it for the loop); this script is its command
line with CleanRL's usual defaults.
"""

from __future__ import annotations

import argparse


def _threads(text: str) -> int | str:
    """``--threads``: an int, or "auto" (the env refuses a number written as text)."""
    return text if text == "auto" else int(text)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="pcs_v0")
    p.add_argument("--num-envs", type=int, default=8, help="instances stepped together")
    p.add_argument("--width", type=int, default=8)
    p.add_argument("--height", type=int, default=8)
    p.add_argument("--max-cycles", type=int, default=100)
    p.add_argument("--executor", default=None, help="default: chosen with --threads")
    p.add_argument("--threads", type=_threads, default="auto", help='pool size, or "auto" (STPA)')
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


def main(argv: list[str] | None = None) -> dict:
    """Train with the command line's settings; returns ``train()``'s dict (history, rows, agent)."""
    args = parse_args(argv)
    from training.ppo import PPOConfig, train

    config = {"max_cycles": args.max_cycles, "num_threads": args.threads}
    if args.executor:
        config["executor"] = args.executor
    if args.env.startswith("pcs"):
        config.update(width=args.width, height=args.height)
    cfg = PPOConfig(
        num_envs=args.num_envs,
        num_steps=args.num_steps,
        updates=args.updates,
        epochs=args.epochs,
        minibatches=args.minibatches,
        lr=args.lr,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip=args.clip,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        hidden=args.hidden,
        torch_threads=args.torch_threads,
        env_config=config,
    )
    return train(args.env, cfg, args.seed, log=lambda line: print(line, flush=True))


if __name__ == "__main__":
    main()
