"""TorchRL's multi-agent PPO tutorial loop on the batched env, on pcs_v1 and aircraft_v1.

The loop is ``training.torchrl_mappo_tutorial.run_tutorial``: the code of
TorchRL's "Multi-Agent Reinforcement Learning (PPO)" tutorial
(``multiagent_ppo.py``, a ``VmasEnv`` there) statement by statement, with
small sizes. It runs as written (``seer_diff=False``) and with the diff
docs/integrations.md gives (leave out the two root-flag expansions, set
``loss_module.loss_mask_key = ("agents", "mask")``); pcs_v1 (Discrete) takes
the Categorical head of that diff.

The checks recompute what the tutorial logs from the raw rewards: each
agent-episode's return, summed from its instance's first observation
(``is_init``) to the step the agent ends (``mask`` then ``~next mask``).
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from training.torchrl_mappo_tutorial import make_env, run_tutorial  # noqa: E402

# TorchRL 0.14's collectors module warns about itself on import.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Creating .* WeightUpdaterBase is deprecated:DeprecationWarning"
)

# UAVs crash in these short random episodes: agents end before their instance.
AIRCRAFT = dict(num_uavs=4, substeps=2, max_cycles=30)
PCS = dict(width=4, height=4, max_cycles=16)


class Recorder:
    """Per batch: the logged mean, and the same mean recomputed from raw rewards."""

    def __init__(self, num_envs: int, n_agents: int) -> None:
        self.running = torch.zeros(num_envs, n_agents)  # each agent's return so far
        self.batches: list[dict] = []

    def __call__(self, data, logged: float, loss_module) -> None:
        reward = data["next", "agents", "reward"][..., 0]
        is_init = data["is_init"][..., 0]
        ended = data["agents", "mask"] & ~data["next", "agents", "mask"]  # the agent's last step
        instance_end = data["next", "done"][..., 0]
        at_agent_end, at_instance_end = [], []
        for t in range(reward.shape[1]):
            self.running = torch.where(is_init[:, t, None], 0.0, self.running) + reward[:, t]
            at_agent_end.append(self.running[ended[:, t]])
            at_instance_end.append(self.running[instance_end[:, t]].reshape(-1))
        self.batches.append(
            dict(
                logged=logged,
                done_rows=int(data["next", "agents", "done"].sum()),
                agent_ends=int(ended.sum()),
                early_ends=int((ended & ~instance_end[..., None]).sum()),
                instance_ends=int(instance_end.sum()),
                by_agent_end=torch.cat(at_agent_end),
                by_instance_end=torch.cat(at_instance_end),
            )
        )


def tutorial(name, config, num_envs, steps, *, seer_diff, iterations=3, on_batch=None):
    torch.manual_seed(0)
    env = make_env(name, num_envs, 0, **config)
    recorder = Recorder(num_envs, env.n_agents)
    means = run_tutorial(
        env,
        n_iters=iterations,
        frames_per_batch=num_envs * steps,
        num_epochs=2,
        minibatch_size=steps,
        num_cells=32,
        seer_diff=seer_diff,
        on_batch=on_batch or recorder,
    )
    env.close()
    return means, recorder


def test_the_tutorial_with_the_diff_logs_each_agent_episode_once_on_aircraft_v1():
    means, rec = tutorial("aircraft_v1", AIRCRAFT, 4, 60, seer_diff=True)
    assert len(means) == 3 == len(rec.batches)
    assert sum(b["early_ends"] for b in rec.batches) > 0  # UAVs did crash
    for b in rec.batches:
        # One done row per agent-episode: the crash step, or the instance's last step.
        assert b["done_rows"] == b["agent_ends"] > 0
        assert b["logged"] == pytest.approx(b["by_agent_end"].mean().item(), rel=1e-5, abs=1e-5)


def test_the_tutorial_as_written_runs_and_logs_the_returns_at_its_instance_ends():
    """The tutorial's root-flag lines: every agent done with its instance, its return then."""
    means, rec = tutorial("aircraft_v1", AIRCRAFT, 4, 60, seer_diff=False)
    assert len(means) == 3
    for b in rec.batches:
        assert b["done_rows"] == 4 * b["instance_ends"] > 0
        assert b["logged"] == pytest.approx(b["by_instance_end"].mean().item(), rel=1e-5, abs=1e-5)


def test_the_tutorial_with_the_categorical_head_trains_on_pcs_v1():
    means, rec = tutorial("pcs_v1", PCS, 2, 32, seer_diff=True)
    assert len(means) == 3
    for b in rec.batches:
        # No cell leaves early: every cell ends with its instance, twice per batch.
        assert b["done_rows"] == b["agent_ends"] == 16 * b["instance_ends"] == 16 * 4
        assert b["early_ends"] == 0
        assert b["logged"] == pytest.approx(b["by_agent_end"].mean().item(), rel=1e-5)


def test_the_tutorials_tanh_normal_head_needs_a_box():
    env = make_env("pcs_v1", 2, 0, **PCS)
    with pytest.raises(AttributeError, match="low"):  # a Categorical spec has no bounds
        run_tutorial(env, n_iters=1, frames_per_batch=32, num_cells=8, head="tanh_normal")
    env.close()


def test_rows_of_gone_agents_do_not_reach_the_loss():
    """Changing what a gone agent's rows hold changes no loss term with the mask, all without."""
    seen = {}

    def probe(data, logged, loss_module):
        if seen:
            return
        rows = data.reshape(-1)
        gone = ~rows["agents", "mask"]
        assert gone.any() and (~gone).any()
        changed = rows.clone()
        for key in ("advantage", "value_target", ("agents", "action_log_prob")):
            value = changed[key].clone()  # GAE's entries are [rows, n_agents, 1] at the root
            value[gone] = 1e3
            changed[key] = value
        action = changed["agents", "action"].clone()
        action[gone] = 0.5
        changed["agents", "action"] = action

        def losses(td):
            torch.manual_seed(0)  # TanhNormal's entropy is a sampled estimate
            with torch.no_grad():
                out = loss_module(td)
            return [out[k].item() for k in ("loss_objective", "loss_critic", "loss_entropy")]

        assert loss_module.loss_mask_key == ("agents", "mask")
        seen["masked"] = (losses(rows), losses(changed))
        loss_module.loss_mask_key = None
        seen["unmasked"] = (losses(rows), losses(changed))
        loss_module.loss_mask_key = ("agents", "mask")

    tutorial("aircraft_v1", AIRCRAFT, 4, 60, seer_diff=True, iterations=1, on_batch=probe)
    before, after = seen["masked"]
    assert after == pytest.approx(before, rel=1e-6, abs=1e-6)
    # Without the mask the same change moves the objective and the critic's loss,
    # and the entropy term averages over the gone rows too.
    unmasked_before, unmasked_after = seen["unmasked"]
    assert unmasked_after[0] != pytest.approx(unmasked_before[0], rel=1e-3)
    assert unmasked_after[1] != pytest.approx(unmasked_before[1], rel=1e-3)
    assert unmasked_before[2] != pytest.approx(before[2], rel=1e-3)


def test_an_agent_is_done_on_the_step_it_ends_only():
    env = make_env("aircraft_v1", 3, 1, **AIRCRAFT)
    assert "done" in env.done_keys and ("agents", "done") in env.done_keys
    with pytest.raises(KeyError, match="more than one key"):  # as VmasEnv's (done, terminated)
        _ = env.done_key
    td = env.rollout(100, break_when_any_done=False)
    env.close()
    done = td["next", "agents", "done"][..., 0]
    terminated = td["next", "agents", "terminated"][..., 0]
    truncated = td["next", "agents", "truncated"][..., 0]
    mask, next_mask = td["agents", "mask"], td["next", "agents", "mask"]
    assert (mask & ~next_mask).any() and (~mask).any()  # crashes, and rows of gone UAVs
    assert torch.equal(done, mask & ~next_mask)
    assert torch.equal(done, terminated | truncated) and not (terminated & truncated).any()
    # Once per agent and instance episode: the episode index of each row.
    episode = td["is_init"][..., 0].long().cumsum(1)
    for i in range(3):
        for e in episode[i].unique():
            rows = episode[i] == e
            per_agent = done[i][rows].sum(0)
            if td["next", "done"][i][rows].any():  # the episode ended within the rollout
                assert per_agent.tolist() == [1] * env.n_agents
            else:
                assert per_agent.max() <= 1
    # A crash ends the UAV's episode (terminated); its reward counts on that step.
    early = done & ~td["next", "done"]
    assert terminated[early].all()
