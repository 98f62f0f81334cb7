"""TorchRL's batched route: an ``EnvBase`` over ``SeerVectorEnv`` (like TorchRL's ``VmasEnv``).

```python
from torchrl.envs.utils import check_env_specs
from seer_env.integrations.torchrl import make_batched_env

env = make_batched_env("pcs_v0", num_envs=8, width=8, height=8, seed=0)
check_env_specs(env)
td = env.rollout(100)  # td["next", "agents", "reward"].shape == [8, 100, 64, 1]
```

``batch_size`` is ``[num_envs]``: one TensorDict entry per env instance, each
holding every agent of that instance. The agents form one group, named
``"agents"`` as in TorchRL's multi-agent tutorials and ``VmasEnv`` (the
``group`` argument renames it, e.g. ``group="cell"``); ``env.group_map`` maps
it to one instance's agent names and ``env.n_agents`` counts them. The group holds

- ``observation``: ``float32[num_envs, n_agents, obs_dim]``;
- ``action``: ``int64[num_envs, n_agents]`` (Discrete, an index) or
  ``float32[num_envs, n_agents, dim]`` (Box); any integer or real dtype is
  taken, any other shape is a ValueError (not reshaped);
- ``reward``: ``float32[num_envs, n_agents, 1]``;
- ``done``, ``terminated``, ``truncated``: ``bool[num_envs, n_agents, 1]``,
  each agent's own end, the shape TorchRL's value estimators (GAE) read per
  agent: True on the step the agent's episode ends (the step it leaves, or
  its instance's last step) and only then, as the root flags are for the
  instance. So ``episode_reward[done]`` (TorchRL's multi-agent PPO
  tutorial's log) holds each agent-episode's return once, and GAE neither
  bootstraps nor accumulates past an agent's end;
- ``mask``: ``bool[num_envs, n_agents]``, ``False`` for agents that are gone
  (aircraft_v0 UAVs that crashed) and, in ``"next"`` of an instance's last
  step, for every agent (the episode ended; those rows hold the real final
  observations): a gone agent's rows carry zero observation, reward and
  infos, and its actions are ignored. ``("next", group, "done")`` is
  ``(group, "mask") & ~("next", group, "mask")``; a row whose root
  ``(group, "mask")`` is False holds no step of the agent (keep it out of a
  loss: ``loss.loss_mask_key = (group, "mask")``);
- ``info``: one ``int64[num_envs, n_agents]`` entry per info key of the env;
- ``neighbours`` (with ``neighbours=True``): ``int64[num_envs, n_agents,
  max_degree]``, the env's neighbour table (``seer_env.neighbours``).

At the root: ``state``, ``float32[num_envs, state_dim]`` (the env's global
state, for centralized critics); ``is_init``, ``bool[num_envs, 1]``, True in
an instance's first observation (what TorchRL's ``InitTracker`` adds: the
collector has nothing to add); ``done``/``terminated``/``truncated``
(``[num_envs, 1]``): an instance is done when none of its agents is left,
terminated when every agent terminated, truncated otherwise (``max_cycles``).
TorchRL resets done instances through the root ``"_reset"`` (collectors and
``rollout`` do); stepping a done instance without that restarts it
(``SeerVectorEnv``'s NEXT_STEP autoreset).

Every step is one C++ call for all instances. Outputs become tensors without
per-agent Python work: ``torch.from_numpy`` over the fresh arrays
``SeerVectorEnv`` returns (one copy out of its C++ buffers, which the next
step overwrites) and one copy of the info table. ``step_and_maybe_reset``
(what collectors and non-stopping rollouts call) builds the step's and the
next root's TensorDicts itself, equal to TorchRL's ``step`` + ``step_mdp`` +
``maybe_reset`` (tested entry by entry) without ``step_mdp``'s key walking.

TorchRL's hooks for an env are ``_reset``, ``_step`` and ``_set_seed``
(``EnvBase``'s abstract methods). Beyond them this relies on private APIs, each
pinned by tests: TorchRL's ``EnvBase._step_and_maybe_reset`` and
``_step_proc_data``, overridden for speed (TorchRL has no public hook for
either: the public ``step_and_maybe_reset`` and ``step`` call them), its
``_post_step_mdp_hooks`` (read: a transform's hook sends steps the generic
route), and TensorDict's ``TensorDict._new_unsafe`` and ``_set_str(...,
validated=True)`` (building TensorDicts from entries that already have the
right shapes).

The specs are built in ``torchrl_specs``, the outputs' tensors and TensorDicts
in ``torchrl_tensordicts``.

Seeding: ``env.set_seed(s)`` (or ``reset(seed=s)``) makes the next full reset
seed instance ``i`` with ``s + i``, exactly as ``SeerVectorEnv.reset(seed=s)``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.envs import EnvBase

from seer_env.integrations.torchrl_specs import FLAGS, unbatched_specs
from seer_env.integrations.torchrl_tensordicts import StepTensors, TensorDictBuilder
from seer_env.registry import make
from seer_env.snapshot import Snapshot
from seer_env.validation import validate_seed
from seer_env.vector import SeerVectorEnv

__all__ = ["SeerBatchedEnv", "make_batched_env"]

# Root entries a step writes or TorchRL reserves: not a group's name.
_ROOT_KEYS = frozenset({"next", "_reset", "state", "is_init", *FLAGS})


@dataclasses.dataclass
class _Ends:
    """Which agents and instances ended, kept between steps.

    A plain object: writing an attribute of the env itself goes through
    nn.Module's ``__setattr__`` (slow); the arrays are edited in place.
    """

    terminated: np.ndarray  # bool [m * a]: agents that terminated (sticky until reset)
    gone: np.ndarray  # bool [m * a]: agents whose end was reported (sticky until reset)
    done: np.ndarray  # bool [m]: instances reported done and not reset since
    any_done: bool  # done.any()


class SeerBatchedEnv(TensorDictBuilder, EnvBase):
    """``num_envs`` instances of a seer_env env as one batched TorchRL env.

    Args:
        name: env name (``seer_env.env_names()``).
        num_envs: number of instances (the TorchRL batch size, as ``VmasEnv``'s).
        group: the name of the agents' group (default ``"agents"``, TorchRL's
            multi-agent convention).
        neighbours: add ``(group, "neighbours")``, the env's neighbour table,
            to every observation (``seer_env.neighbours``; ``env.neighbours()``
            reads it on demand either way).
        device: torch device of the returned tensors (the env runs on CPU).
        **config: the env's own arguments (``seed``, ``num_threads``, ...).
    """

    def __init__(
        self,
        name: str,
        num_envs: int,
        *,
        group: str = "agents",
        neighbours: bool = False,
        device: Any = None,
        **config: Any,
    ) -> None:
        if not isinstance(group, str) or not group or group in _ROOT_KEYS:
            raise ValueError(
                f"group must be a non-empty str other than {sorted(_ROOT_KEYS)}, got {group!r}"
            )
        if not isinstance(neighbours, bool):
            raise ValueError(f"neighbours must be a bool, got {neighbours!r}")
        self._vec = SeerVectorEnv(name, num_envs, **config)
        vec = self._vec
        super().__init__(device=device, batch_size=torch.Size([vec.num_instances]))
        self.env_name = name
        #: Agents per instance (``VmasEnv``'s name; ``num_agents`` is the same number).
        self.n_agents = vec.agents_per_instance
        self.num_agents = self.n_agents
        proto_names = [f"{vec.sim.spec['agent_prefix']}_{i}" for i in range(self.n_agents)]
        #: The name of the only group (``"agents"`` unless ``group`` says otherwise).
        self.group = group
        #: TorchRL's group map: group -> agent names (one instance's agents).
        self.group_map = {self.group: proto_names}
        self._info_keys = list(vec._info_keys)
        self._pending_seed: int | None = None
        m, a = vec.num_instances, self.n_agents
        self._ends = _Ends(
            np.zeros(m * a, dtype=bool), np.zeros(m * a, dtype=bool), np.zeros(m, dtype=bool), False
        )
        rule = vec._neighbour_rule
        if neighbours and rule is None:
            raise ValueError(f"neighbours=True, but {name!r} declares no neighbour structure")
        self._neighbours = neighbours
        # A static table (pcs) is one read-only tensor, broadcast over the batch.
        self._static_neighbours = (
            None
            if rule is None or rule.static is None
            else torch.from_numpy(rule.static.copy()).expand(m, *rule.static.shape)
        )
        # Keys and shapes a step uses, computed once.
        self._action_key = (self.group, "action")
        self._vec_action_shape = vec.action_space.shape
        # What the action spec says: [num_envs, n_agents] (Discrete) or [..., dim] (Box).
        self._action_shape = (m, a, *vec.single_action_space.shape)
        self._group_size = torch.Size([m, a])
        self._flag_shape = (m, 1)
        # What step_mdp drops from the root, or takes from "next" (the group apart).
        self._not_kept = frozenset({*_ROOT_KEYS, self.group})
        # What step_mdp drops from the group (reward), or takes from "next".
        self._group_replaced = frozenset(
            {"reward", "observation", "mask", "info", "neighbours", *FLAGS}
        )
        self._make_specs()
        self._render_env = None  # render()'s single env, built on demand

    def neighbours(self) -> torch.Tensor:
        """Every instance's neighbour table, ``int64[num_envs, n_agents, max_degree]``.

        ``-1`` pads unused slots (``seer_env.neighbours``). Raises
        NotImplementedError when the env declares no neighbour structure.
        """
        if self._static_neighbours is not None:
            return self._static_neighbours
        return torch.from_numpy(self._vec.neighbours())

    @property
    def _to_device(self) -> bool:
        """Whether outputs move to ``self.device`` (built on CPU)."""
        device = self.device
        return device is not None and device.type != "cpu"

    # -- specs ----------------------------------------------------------------------------------
    def _make_specs(self) -> None:
        vec = self._vec
        specs = unbatched_specs(
            vec.agents_per_instance,
            vec.single_observation_space,
            vec.single_action_space,
            vec.single_state_space,
            self.group,
            self._info_keys,
            vec._neighbour_rule.max_degree if self._neighbours else None,
        )
        self.full_observation_spec_unbatched = specs.observation
        self.full_action_spec_unbatched = specs.action
        self.full_reward_spec_unbatched = specs.reward
        self.full_done_spec_unbatched = specs.done

    # -- EnvBase --------------------------------------------------------------------------------
    def _set_seed(self, seed: int | None) -> None:
        self._pending_seed = validate_seed(seed)  # ValueError naming seed (1.5, -1, ...)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        seed = kwargs.pop("seed", None)
        kwargs.pop("set_state", None)
        if kwargs:
            raise ValueError(f"reset() got unexpected arguments {sorted(kwargs)}")
        reset = None if tensordict is None else tensordict.get("_reset", None)
        m, a = self._vec.num_instances, self.n_agents
        if reset is None or bool(reset.all()):
            mask = np.ones(m, dtype=bool)
            if seed is None:
                seed, self._pending_seed = self._pending_seed, None
            obs, infos = self._vec.reset(seed=seed)
        else:
            mask = reset.reshape(m).cpu().numpy()
            obs, infos = self._vec.reset(options={"reset_mask": mask})
        ends = self._ends
        rows = np.repeat(mask, a)
        ends.terminated[rows] = False
        ends.gone[rows] = False
        ends.done[mask] = False
        ends.any_done = bool(ends.done.any())
        return self._first_tensordict(mask, obs)

    def _first_tensordict(self, mask: np.ndarray, obs: np.ndarray) -> TensorDictBase:
        """The root tensordict after instances ``mask`` began (a reset or a restore)."""
        m = self._vec.num_instances
        alive = self._vec._alive.astype(bool)
        all_alive = bool(alive.all())
        if not all_alive:
            obs[~alive] = 0  # rows of gone agents in instances not reset
        flags = np.zeros((4, m, 1), dtype=bool)  # done, terminated, truncated, is_init
        flags[3, :, 0] = mask
        tensors = self._tensors(obs, None, alive, all_alive, flags, False)
        out = self._next_tensordict(tensors)
        if self._to_device:
            out = out.to(self.device)
        return out

    # -- snapshots (docs/branching.md) -----------------------------------------------------------
    def snapshot(self, instance: int | None = None) -> Snapshot | list[Snapshot]:
        """Instance ``instance``'s state (``SeerVectorEnv.snapshot``), or every instance's."""
        if instance is not None:
            return self._vec.snapshot(instance)
        return [self._vec.snapshot(i) for i in range(self._vec.num_instances)]

    def restore(
        self, snapshots: Snapshot | list[Snapshot], instances: list[int] | None = None
    ) -> TensorDictBase:
        """Restore instances from snapshots; returns the root tensordict there, as ``reset()``.

        ``snapshots``: one per instance of ``instances`` (default: every
        instance), or one snapshot for all of them (branches of one state).
        Pass the result to ``rollout(..., tensordict=td, auto_reset=False)``
        to continue from it. Instances not named keep their state; their rows
        of the returned tensordict read ``is_init`` False.
        """
        m, a = self._vec.num_instances, self.n_agents
        chosen = list(range(m)) if instances is None else [int(i) for i in instances]
        if not isinstance(snapshots, list):
            snapshots = [snapshots] * len(chosen)
        if len(snapshots) != len(chosen):
            raise ValueError(
                f"snapshots must hold one snapshot per instance ({len(chosen)}), "
                f"got {len(snapshots)}"
            )
        mask = np.zeros(m, dtype=bool)
        for i, snap in zip(chosen, snapshots):
            self._vec.restore(i, snap)  # ValueError naming what is wrong, instance unchanged
            mask[i] = True
        ends = self._ends
        rows = np.repeat(mask, a)
        ends.terminated[rows] = ~self._vec._alive.astype(bool)[rows]
        ends.gone[rows] = ends.terminated[rows]
        ends.done[mask] = self._vec._autoreset[mask]
        ends.any_done = bool(ends.done.any())
        out = self._first_tensordict(mask, self._vec.sim.observations.copy())
        return out

    # -- rendering ------------------------------------------------------------------------------
    def render(self, mode: str = "rgb_array", env_index: int = 0) -> Any:
        """Instance ``env_index`` drawn as its single env draws it (``VmasEnv``'s arguments).

        The instance's snapshot is restored into a single env of the same
        configuration with ``render_mode=mode`` (built at the first call and
        kept), which renders it: ``uint8[H, W, 3]`` for ``"rgb_array"``, text
        for ``"ansi"``. The instances are left as they are. TorchRL's
        ``PixelRenderTransform(mode="rgb_array")`` records these frames.
        """
        env = self._render_env
        if env is None or env.render_mode != mode:
            if env is not None:
                env.close()
            config = {k: v for k, v in self._vec._config.items() if k != "executor"}
            env = make(self.env_name, **{**config, "render_mode": mode, "num_threads": 1})
            self._render_env = env
        env.restore(self._vec.snapshot(env_index))
        return env.render()

    # -- stepping: TorchRL's hook, and the private methods overridden for speed ----------------
    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        out = self._next_tensordict(self._advance(tensordict))
        if self._to_device:
            out = out.to(self.device)
        return out

    def _step_and_maybe_reset(
        self, tensordict: TensorDictBase
    ) -> tuple[TensorDictBase, TensorDictBase]:
        """``step`` + ``step_mdp`` + ``maybe_reset`` (what collectors call) without key walking.

        TorchRL's generic version (``EnvBase._step_and_maybe_reset``) builds the
        next root with ``step_mdp``, which walks the keys of the input and of
        ``"next"`` against its include/exclude trees and copies each nested
        TensorDict (about a sixth of a batch step here). This env knows its
        layout, so it builds both TensorDicts from the step's tensors at once:
        the result is the one ``step_mdp`` gives (the input's other keys kept,
        nested TensorDicts copied; ``reward``, ``"next"``, ``"_reset"`` and the
        done flags dropped; observations, masks, infos and done flags from
        ``"next"``; tested equal), and ``maybe_reset`` runs only when an
        instance is done. Anything out of the ordinary takes TorchRL's route:
        type checks on, a device on the env or the input (TorchRL casts the
        input to the env's device, a new TensorDict), a partial step
        (``"_step"``), a preset ``"next"``, a lazily stacked or foreign-shaped
        input, post-step hooks.

        It overrides TorchRL's private ``_step_and_maybe_reset`` (not the public
        ``step_and_maybe_reset``) so that the public method keeps TorchRL's own
        dispatch (``env.compile()``, profiling); if a TorchRL release stops
        calling it, steps take the generic route again, slower but the same
        (``test_collector_steps_take_the_direct_route`` would fail).
        """
        if (
            type(tensordict) is not TensorDict
            or self.run_type_checks
            or self._post_step_mdp_hooks is not None
            or tensordict.device is not None
            or self.device is not None  # TorchRL casts the input then (a new TensorDict)
            or tensordict.batch_size != self.batch_size
            or "_step" in (keys := tensordict.keys())
            or "next" in keys
        ):
            return super()._step_and_maybe_reset(tensordict)
        tensors = self._advance(tensordict)
        # What step() does, less its validation: a TensorDict of the env's batch size.
        tensordict._set_str("next", self._next_tensordict(tensors), validated=True, inplace=False)
        root = self._next_root(tensordict, tensors)
        if tensors.any_done:  # the done flags are all False otherwise: nothing to reset
            root = self.maybe_reset(root)
        return tensordict, root

    def _step_proc_data(self, next_tensordict_out: TensorDictBase) -> TensorDictBase:
        """TorchRL's pass over a step's output, skipped unless ``run_type_checks``.

        ``EnvBase._step_proc_data`` reshapes rewards and done flags to the
        specs' shapes and adds missing done keys: ``_next_tensordict`` already
        builds every key at its spec's shape and dtype (``check_env_specs``
        checks it), so the pass has nothing to do (~10% of a batch step).
        """
        if self.run_type_checks:
            return super()._step_proc_data(next_tensordict_out)
        return next_tensordict_out

    # -- one step -------------------------------------------------------------------------------
    def _advance(self, tensordict: TensorDictBase) -> StepTensors:
        """Step every instance once with the input's actions: the step's tensors.

        Written for the common step (every agent still acting, nothing done):
        each tensor or NumPy call here costs several microseconds in situ (the
        C++ step has evicted their code and data from the caches), so that
        step makes no call whose answer is known.
        """
        vec, ends = self._vec, self._ends
        action = tensordict.get(self._action_key, None)
        if action is None:
            raise ValueError(
                f"step(): the tensordict has no action at {self._action_key!r} "
                "(step a tensordict that holds the policy's action)"
            )
        try:  # a CPU tensor without grad, as a policy's sampled action is
            actions = action.numpy()
        except (RuntimeError, TypeError, NotImplementedError):  # grad, device, view, dtype
            actions = _action_numpy(action, self._action_key)
        if actions.shape != self._action_shape:
            # Checked, not reshaped: a transposed or flattened batch holds as
            # many numbers, and would hand each agent another agent's action.
            raise ValueError(
                f"the action at {self._action_key!r} must have shape {self._action_shape} "
                f"([num_envs, n_agents{', dim' if len(self._action_shape) > 2 else ''}]), "
                f"got {tuple(actions.shape)}"
            )
        actions = actions.reshape(self._vec_action_shape)
        # done, terminated, truncated and is_init of each instance: one fresh [4, m, 1] array.
        flags = np.zeros((4, *self._flag_shape), dtype=bool)
        if ends.any_done:
            # Instances reported done and not reset through "_reset" restart
            # now (NEXT_STEP autoreset): their agents start over.
            ends.terminated.reshape(ends.done.shape[0], -1)[ends.done] = False
            ends.gone.reshape(ends.done.shape[0], -1)[ends.done] = False
            flags[3, :, 0] = ends.done
        obs, rewards, terms, _ = vec.step_rows(actions)
        alive = vec._alive.astype(bool)
        all_alive = bool(alive.all())
        ended = None  # agents whose episode ended at this step
        if all_alive:  # no agent ended this step: no instance is done
            if ends.any_done:
                ends.done[:] = False
                ends.any_done = False
        else:
            m = ends.done.shape[0]
            gone = ~alive
            ended = gone > ends.gone  # gone now, not before
            ends.gone[:] = gone
            np.logical_or(ends.terminated, terms, out=ends.terminated)
            done = flags[0, :, 0]
            np.logical_not(alive.reshape(m, -1).any(axis=1), out=done)
            np.logical_and(done, ends.terminated.reshape(m, -1).all(axis=1), out=flags[1, :, 0])
            np.greater(done, flags[1, :, 0], out=flags[2, :, 0])  # done and not terminated
            ends.done[:] = done  # a copy: _reset edits it; the returned flags stay as they are
            ends.any_done = bool(done.any())
        return self._tensors(obs, rewards, alive, all_alive, flags, ends.any_done, ended)

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Release the vector env (and ``render()``'s env)."""
        self._vec.close()
        if self._render_env is not None:
            self._render_env.close()
        super().close(raise_if_closed=raise_if_closed)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(env={self.env_name!r}, num_envs={self.batch_size[0]}, "
            f"group={self.group!r}, n_agents={self.n_agents}, device={self.device})"
        )


def _action_numpy(action: Any, key: Any) -> np.ndarray:
    """``action`` (not a plain CPU tensor) as NumPy, or a ValueError naming ``key``."""
    if not isinstance(action, torch.Tensor):
        raise ValueError(f"the action at {key!r} must be a tensor, got {type(action).__name__}")
    if action.is_meta:
        raise ValueError(f"the action at {key!r} is a meta tensor (it has no values)")
    try:
        return action.numpy(force=True)  # grad, another device, a conjugate view
    except TypeError:  # a dtype NumPy has not: bfloat16, ...
        raise ValueError(
            f"the action at {key!r} has dtype {action.dtype}, which NumPy cannot hold: "
            "give int64 (Discrete) or float32 (Box) actions"
        ) from None


def make_batched_env(name: str, num_envs: int, **config: Any) -> SeerBatchedEnv:
    """``num_envs`` instances of env ``name`` as one batched TorchRL env (see module doc)."""
    return SeerBatchedEnv(name, num_envs, **config)
