"""The batched TorchRL env's input checks: a clear ValueError naming what is wrong.

A step without an action, a meta tensor, a dtype NumPy has not (bfloat16), a
bool action, an action of another shape than the spec's (also one holding as
many numbers: transposed or flattened batches were once reshaped and stepped,
each agent acting on another's action), and seeds that are not seeds
(``set_seed(1.5)``, ``set_seed(-1)``). Each refusal changes nothing: the env
then steps like one that never saw it.
"""

import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
from tensordict import TensorDict  # noqa: E402

from seer_env.integrations.torchrl import make_batched_env  # noqa: E402

ENVS = {"pcs_v0": dict(width=2, height=2), "aircraft_v0": dict(num_uavs=3)}


def build(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_batched_env(name, num_envs=2, seed=0, **ENVS[name])


@pytest.mark.parametrize("name", sorted(ENVS))
@pytest.mark.parametrize(
    "case,match",
    [
        ("no action", r"the tensordict has no action at \('agents', 'action'\)"),
        ("meta", r"the action at \('agents', 'action'\) is a meta tensor"),
        ("bfloat16", r"the action at \('agents', 'action'\) has dtype torch.bfloat16"),
        ("bool", r"got dtype bool \(a bool is not an action\)"),
    ],
)
def test_bad_actions_are_named_and_change_nothing(name, case, match):
    env, shadow = build(name), build(name)
    shape = env.full_action_spec[env.action_key].shape
    td = env.reset()
    shadow.reset()
    dtype = {"meta": torch.float32, "bfloat16": torch.bfloat16, "bool": torch.bool}.get(case)
    if case != "no action":
        device = "meta" if case == "meta" else "cpu"
        td.set(env.action_key, torch.zeros(shape, dtype=dtype, device=device))
    with pytest.raises(ValueError, match=match):
        env.step(td)
    good = env.full_action_spec[env.action_key].zero()
    out = env.step(env.reset().set(env.action_key, good))
    ref = shadow.step(shadow.reset().set(env.action_key, good))
    key = ("next", "agents", "observation")
    assert torch.equal(out.get(key), ref.get(key))


@pytest.mark.parametrize("name", sorted(ENVS))
@pytest.mark.parametrize(
    "wrong", ["transposed", "flat", "trailing 1", "extra batch dim", "one agent more", "halved"]
)
def test_actions_of_another_shape_are_named_and_change_nothing(name, wrong):
    env, shadow = build(name), build(name)
    right = tuple(env.full_action_spec[env.action_key].shape)  # [num_envs, n_agents, (dim)]
    m, a, *row = right
    shape = {
        "transposed": (m, *row, a) if row else (m, 1, a),  # Box: [m, dim, a]
        "flat": (m, a * row[0]) if row else (m, a, 1, 1),
        "trailing 1": (*right, 1),
        "extra batch dim": (m, 1, a, *row),
        "one agent more": (m, a + 1, *row),
        "halved": (m, a // 2, 2, *row),
    }[wrong]
    assert shape != right
    env.reset()
    shadow.reset()
    dtype = torch.float32 if row else torch.int64
    # The group's batch size is [num_envs] only: TensorDict takes any action shape.
    td = TensorDict({"agents": TensorDict({"action": torch.zeros(shape, dtype=dtype)}, [m])}, [m])
    with pytest.raises(ValueError, match=r"the action at \('agents', 'action'\) must have shape"):
        env.step(td)
    good = env.full_action_spec[env.action_key].rand()
    out = env.step(env.reset().set(env.action_key, good))
    ref = shadow.step(shadow.reset().set(env.action_key, good))
    key = ("next", "agents", "observation")
    assert torch.equal(out.get(key), ref.get(key))


@pytest.mark.parametrize("seed", [1.5, -1, 2**64, "3", True])
def test_bad_seeds_are_named(seed):
    env = build("pcs_v0")
    with pytest.raises(ValueError, match=r"seed must be None or an integer in \[0, 2\*\*64\)"):
        env.set_seed(seed)
    env.set_seed(7)  # a good seed still works
    env.reset()
