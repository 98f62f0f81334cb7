"""TorchRL PPO on pcs_admission_v0: cells decide at each call arrival; the mask says who acted.

    python examples/torchrl_admission.py --iterations 30

``make_batched_env("pcs_admission_v0", ...)`` is a batched TorchRL env whose
group ``"agents"`` holds every cell of each instance, and ``mask`` the cells
that must decide now (an arrival asks them). One small MLP shared by every
cell gives the logits of admit/reject (a Categorical policy) and one the value
of a cell's observation. The policy acts in every row; the env uses the
actions of the masked rows only, and only those rows enter the advantages and
the loss.

How rewards are credited. A cell's reward arrives with its *next* return: the
reward in ``("next", "agents", "reward")`` for a cell is what accrued at the
step boundaries since its previous return, so it belongs to the cell's
previous decision. Each cell's decisions therefore form their own chain (a
semi-MDP): a decision's reward is what the env pays the cell at its next
return, its successor is the cell's next decision, discounted by
``gamma ** (minutes between the two decisions)`` (``decision_time``), and the
episode's last return (every cell, truncated) ends the chain. A decision whose
next return is not in the batch yet is left out of the loss, unless the batch
ends with that cell asked (then its value bootstraps the chain).
"""

from __future__ import annotations

import argparse
import time


def build(args: argparse.Namespace):
    """The batched env, the shared Categorical policy and the value network."""
    import torch
    from tensordict.nn import InteractionType, TensorDictModule
    from torch import nn
    from torchrl.modules import ProbabilisticActor

    from seer_env.integrations.torchrl import make_batched_env

    env = make_batched_env(
        "pcs_admission_v0",
        args.num_envs,
        width=args.width,
        height=args.height,
        max_cycles=args.max_cycles,
        seed=args.seed,
        executor=args.executor,
        num_threads=args.threads,
    )
    obs_dim = env.observation_spec["agents", "observation"].shape[-1]
    n_actions = env.full_action_spec["agents", "action"].space.n

    def mlp(out: int) -> nn.Module:
        return nn.Sequential(
            nn.Linear(obs_dim, args.hidden), nn.Tanh(), nn.Linear(args.hidden, out)
        )

    policy_net, value_net = mlp(n_actions), mlp(1)
    module = TensorDictModule(
        policy_net, in_keys=[("agents", "observation")], out_keys=[("agents", "logits")]
    )
    actor = ProbabilisticActor(
        module,
        in_keys={"logits": ("agents", "logits")},
        out_keys=[("agents", "action")],
        distribution_class=torch.distributions.Categorical,
        return_log_prob=True,
        log_prob_key=("agents", "log_prob"),
        default_interaction_type=InteractionType.RANDOM,  # sample (rollouts default to the mode)
    )
    return env, actor, policy_net, value_net


def advantages(td, value_net, gamma: float, lam: float):
    """GAE along each cell's own decisions; ``(advantages, values, valid)``, each ``[M, T, n]``.

    ``valid``: the rows that enter the loss: the cell acted there (``mask``) and
    its decision's reward is known (its next return is in the batch).
    """
    import torch

    mask = td["agents", "mask"]
    when = td["agents", "decision_time"][..., 0]
    reward = td["next", "agents", "reward"][..., 0].double()
    ended = td["next", "done"][..., 0]  # [M, T]: the return after step t was the last
    last = td["next"][:, -1]
    with torch.no_grad():
        values = value_net(td["agents", "observation"])[..., 0].double()
        tail = value_net(last["agents", "observation"])[..., 0].double()
    # Walking back in time, per cell: its next decision's value, time and
    # advantage, the reward owed to its latest decision, and whether that is known.
    known = last["agents", "mask"] & ~last["done"]
    v_next = torch.where(known, tail, 0.0)
    t_next = last["agents", "decision_time"][..., 0].clone()
    a_next = torch.zeros_like(v_next)
    owed = torch.zeros_like(v_next)
    adv = torch.zeros_like(values)
    valid = torch.zeros_like(mask)
    for t in reversed(range(mask.shape[1])):
        end = ended[:, t, None].expand_as(owed)
        # The episode ended at the return after t: nothing later is this episode's.
        v_next, a_next, owed = (torch.where(end, 0.0, x) for x in (v_next, a_next, owed))
        known = known | end
        owed = owed + reward[:, t]  # paid at the return after t: the cell's latest decision's
        acted = mask[:, t]
        discount = torch.nan_to_num(gamma ** (t_next - when[:, t]), nan=0.0)
        delta = owed + discount * v_next - values[:, t]
        a = delta + discount * lam * a_next
        adv[:, t] = torch.where(acted, a, 0.0)
        valid[:, t] = acted & known
        # This decision is the successor of the cell's earlier ones.
        v_next = torch.where(acted, values[:, t], v_next)
        a_next = torch.where(acted, a, a_next)
        t_next = torch.where(acted, when[:, t], t_next)
        owed = torch.where(acted, 0.0, owed)
        known = known | acted
    return adv.float(), values.float(), valid


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--height", type=int, default=8)
    parser.add_argument("--max-cycles", type=int, default=24)
    parser.add_argument("--steps", type=int, default=128, help="env steps per iteration")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--minibatches", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--gamma", type=float, default=0.995, help="discount per minute")
    parser.add_argument("--lam", type=float, default=0.95)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--executor", default="serial")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import torch

    torch.manual_seed(args.seed)
    env, actor, policy_net, value_net = build(args)
    params = [*policy_net.parameters(), *value_net.parameters()]
    optimizer = torch.optim.Adam(params, lr=args.lr)
    root = env.reset()
    history = []
    for iteration in range(1, args.iterations + 1):
        start = time.perf_counter()
        with torch.no_grad():
            # Continues where the last batch stopped; done instances reset as they end.
            td = env.rollout(
                args.steps, actor, auto_reset=False, tensordict=root, break_when_any_done=False
            )
        root = env.step_mdp(td[:, -1])  # an instance done there restarts at the next step
        adv, values, valid = advantages(td, value_net, args.gamma, args.lam)
        # Only the rows of cells that acted (mask), with a known reward, enter the loss.
        obs = td["agents", "observation"][valid]
        action = td["agents", "action"][valid]
        old_logp = td["agents", "log_prob"][valid]
        adv, returns = adv[valid], (adv + values)[valid]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(args.epochs):
            for idx in torch.randperm(len(adv)).tensor_split(args.minibatches):
                dist = torch.distributions.Categorical(logits=policy_net(obs[idx]))
                ratio = (dist.log_prob(action[idx]) - old_logp[idx]).exp()
                clipped = ratio.clamp(1 - args.clip, 1 + args.clip)
                pg_loss = -torch.min(ratio * adv[idx], clipped * adv[idx]).mean()
                v_loss = 0.5 * (value_net(obs[idx])[:, 0] - returns[idx]).pow(2).mean()
                loss = pg_loss + 0.5 * v_loss - 0.003 * dist.entropy().mean()
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 0.5)
                optimizer.step()
        mask = td["agents", "mask"]
        row = {
            "iteration": iteration,
            "decisions": int(mask.sum()),
            "in_loss": int(valid.sum()),
            "admit_rate": float(td["agents", "action"][mask].float().mean()),
            "reward_per_decision": float(td["next", "agents", "reward"].sum() / mask.sum()),
            "pg_loss": pg_loss.item(),
            "v_loss": v_loss.item(),
            "seconds": time.perf_counter() - start,
        }
        history.append(row)
        print(
            f"iteration {iteration:3d}  decisions {row['decisions']:6d}  "
            f"admit {row['admit_rate']:.3f}  reward/decision {row['reward_per_decision']:7.3f}  "
            f"{row['seconds']:5.1f} s"
        )
    env.close()
    return {"history": history, "rollout": td}


if __name__ == "__main__":
    main()
