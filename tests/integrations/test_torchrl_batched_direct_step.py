"""SeerBatchedEnv's direct ``step_and_maybe_reset``: TorchRL's result without its key walking.

The batched env builds a collector step's two TensorDicts itself instead of
through ``step_mdp``; these tests hold it to TorchRL's generic route
(``EnvBase._step_and_maybe_reset``) on twin envs, entry by entry, and check
that what a collector stores is never written again.
"""

import numpy as np
import pytest
from envcases import AGENTS_DIE, ENV_NAMES, SMALL, cycles

pytest.importorskip("torchrl")
import torch  # noqa: E402
from tensordict import TensorDict  # noqa: E402
from torchrl.envs import EnvBase  # noqa: E402
from torchrl.envs.utils import _StepMDP  # noqa: E402

from seer_env.integrations.torchrl import SeerBatchedEnv, make_batched_env  # noqa: E402

NUM_ENVS = 3


def batched(name, **overrides):
    config = {**SMALL.get(name, {}), "max_cycles": cycles(name, 12), "seed": 5, **overrides}
    return make_batched_env(name, NUM_ENVS, **config)


def leaves(td):
    return {key: td.get(key) for key in td.keys(include_nested=True, leaves_only=True)}


def assert_same(got, want, where):
    got_leaves, want_leaves = leaves(got), leaves(want)
    assert sorted(map(str, got_leaves)) == sorted(map(str, want_leaves)), where
    for key, value in want_leaves.items():
        assert got_leaves[key].dtype == value.dtype, (where, key)
        assert torch.equal(got_leaves[key], value), (where, key)
    assert got.batch_size == want.batch_size, where


def with_extras(td, g, step):
    """What a policy and a collector add to a step's input: root, group and nested entries."""
    td.set("extra", torch.full((NUM_ENVS,), float(step)))
    td.set(("collector", "traj_ids"), torch.arange(NUM_ENVS) + step)
    td.set((g, "logits"), torch.full(td.get((g, "mask")).shape, float(step)))
    return td


def actions_for(env, rng):
    spec = env.full_action_spec[env.group, "action"]
    if env._vec._discrete:
        return torch.from_numpy(rng.integers(0, spec.space.n, tuple(spec.shape)))
    low, high = spec.space.low.numpy(), spec.space.high.numpy()
    return torch.from_numpy(rng.uniform(low, high).astype(np.float32))


@pytest.mark.parametrize("name", ENV_NAMES)
def test_direct_route_equals_torchrls_generic_route(name):
    """Same seeds, actions and extra keys: both TensorDicts equal entry by entry, over resets."""
    env, twin = batched(name), batched(name)
    g = env.group
    td, td_twin = env.reset(), twin.reset()
    rng = np.random.default_rng(0)
    resets = 0
    for step in range(2 * cycles(name, 12) + 3):
        action = actions_for(env, rng)
        td = with_extras(td, g, step)
        td_twin = with_extras(td_twin, g, step)
        td.set((g, "action"), action)
        td_twin.set((g, "action"), action.clone())
        out, td = env.step_and_maybe_reset(td)
        out_twin, td_twin = EnvBase._step_and_maybe_reset(twin, td_twin)
        assert_same(out, out_twin, f"step {step}: the step's tensordict")
        assert_same(td, td_twin, f"step {step}: the next root")
        resets += int(out["next", "done"].any())
        # step_mdp's structure: nested TensorDicts are new objects, tensors shared.
        assert td.get(g) is not out.get(("next", g))
        if env._info_keys:
            assert td.get((g, "info")) is not out.get(("next", g, "info"))
        assert td.get("collector") is not out.get("collector")
        assert td.get("extra") is out.get("extra")
    assert resets > 0  # the maybe_reset branch ran
    if name in AGENTS_DIE:
        assert not td_twin[g, "mask"].all() or resets > 0
    env.close()
    twin.close()


@pytest.mark.parametrize("name", ENV_NAMES)
def test_stored_step_tensordicts_are_never_written_again(name):
    """A collector keeps every step's tensordicts: later steps and resets leave them as is."""
    env = batched(name)
    g = env.group
    td = env.reset()
    rng = np.random.default_rng(1)
    kept = []
    for _ in range(2 * cycles(name, 12) + 3):
        td.set((g, "action"), actions_for(env, rng))
        out, td = env.step_and_maybe_reset(td)
        kept.append((out, out.clone(), td, td.clone()))
    assert any(out["next", "done"].any() for out, *_ in kept)
    for i, (out, out_copy, nxt, nxt_copy) in enumerate(kept):
        assert_same(out, out_copy, f"step {i}")
        # The root is the next step's input: that step set its action and "next" on it.
        mine = ("next", (g, "action"))
        assert_same(nxt.exclude(*mine), nxt_copy.exclude(*mine), f"root after step {i}")
    env.close()


# TorchRL 0.14's collectors module warns about itself on import.
@pytest.mark.filterwarnings("ignore:Creating .* WeightUpdaterBase is deprecated:DeprecationWarning")
def test_collector_steps_take_the_direct_route(monkeypatch):
    """Pins the private override: the public step_and_maybe_reset reaches it, step_mdp is not run.

    SeerBatchedEnv overrides TorchRL's private ``EnvBase._step_and_maybe_reset``;
    if a TorchRL release stops calling it, steps are still right (the generic
    route) but slower, and this test says so.
    """
    from torchrl.collectors import Collector  # SyncDataCollector before TorchRL 0.14

    env = batched("pcs_v0")
    direct, walks = [], []
    original = SeerBatchedEnv._step_and_maybe_reset
    monkeypatch.setattr(
        SeerBatchedEnv,
        "_step_and_maybe_reset",
        lambda self, td: direct.append(1) or original(self, td),
    )
    step_mdp = _StepMDP.__call__
    monkeypatch.setattr(
        _StepMDP, "__call__", lambda self, td: walks.append(1) or step_mdp(self, td)
    )
    collector = Collector(
        env,
        None,  # random actions from the spec
        frames_per_batch=NUM_ENVS * 15,
        total_frames=NUM_ENVS * 30,
        auto_register_policy_transforms=False,
    )
    batches = list(collector)
    collector.shutdown()
    assert [b.batch_size for b in batches] == [torch.Size([NUM_ENVS, 15])] * 2
    assert batches[0]["next", "done"].any()  # max_cycles 12: the reset branch ran too
    assert len(direct) == 30
    assert walks == []
    env.close()


@pytest.mark.parametrize(
    "case",
    [
        "run_type_checks",
        "cpu device on the input",
        "cpu device on the env",
        "partial step",
        "preset next",
    ],
)
def test_unusual_inputs_take_torchrls_route_with_the_same_result(case):
    device = {"device": "cpu"} if case == "cpu device on the env" else {}
    env, twin = batched("pcs_v0", **device), batched("pcs_v0", **device)
    g = env.group
    td, td_twin = env.reset(), twin.reset()
    action = actions_for(env, np.random.default_rng(2))
    for t in (td, td_twin):
        t.set((g, "action"), action.clone())
    if case == "run_type_checks":
        env.run_type_checks = True
    elif case == "cpu device on the input":
        td, td_twin = td.to("cpu"), td_twin.to("cpu")
        assert td.device == torch.device("cpu")
    elif case == "cpu device on the env":
        assert env.device == torch.device("cpu")
    elif case == "partial step":
        for t in (td, td_twin):
            t.set("_step", torch.ones(NUM_ENVS, dtype=torch.bool))
    else:
        preset = TensorDict({"preset": torch.ones(NUM_ENVS)}, batch_size=[NUM_ENVS])
        for t in (td, td_twin):
            t.set("next", preset.clone())
    walks = []
    step_mdp = _StepMDP.__call__
    _StepMDP.__call__ = lambda self, t: walks.append(1) or step_mdp(self, t)
    try:
        out, nxt = env.step_and_maybe_reset(td)
    finally:
        _StepMDP.__call__ = step_mdp
    assert walks == [1]  # TorchRL's own route
    out_twin, nxt_twin = EnvBase._step_and_maybe_reset(twin, td_twin)
    assert_same(out, out_twin, case)
    assert_same(nxt, nxt_twin, case)
    assert (out.device, nxt.device) == (out_twin.device, nxt_twin.device)
    env.close()
    twin.close()


def test_an_action_that_requires_grad_is_read_as_its_values():
    """A Box action straight from a policy (grad attached) steps like its detached values."""
    env, twin = batched("aircraft_v0"), batched("aircraft_v0")
    g = env.group
    td, td_twin = env.reset(), twin.reset()
    action = actions_for(env, np.random.default_rng(3))
    td.set((g, "action"), action.clone().requires_grad_(True))
    td_twin.set((g, "action"), action)
    _, nxt = env.step_and_maybe_reset(td)
    _, nxt_twin = twin.step_and_maybe_reset(td_twin)
    assert_same(nxt.exclude((g, "action")), nxt_twin.exclude((g, "action")), "grad action")
    env.close()
    twin.close()
