"""A small batched MLP policy and the timed decision loop ("inference latency").

The figure the paper reports for aircraft_v0 is the wall time of one full
decision step: a batched policy forward pass on every agent's observation,
then ``env.step``. ``run_decision_loop`` runs that loop and splits each step
into its policy and env parts.

``MlpPolicy`` needs only NumPy; with ``backend="torch"`` (or ``"auto"`` when
torch is installed) the same weights run through torch instead. The weights
are drawn from a seed, so a policy is reproducible without any checkpoint.

```python
from seer_env.envs import aircraft_v0
from bench.policy import MlpPolicy, run_decision_loop

env = aircraft_v0.parallel_env(num_uavs=1024, max_cycles=10_000, seed=0)
policy = MlpPolicy.for_env(env, hidden=(64, 64))
print(run_decision_loop(env, policy, steps=100))
```
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

__all__ = ["LatencyReport", "MlpPolicy", "run_decision_loop", "torch_available"]


def torch_available() -> bool:
    """Whether torch can be imported."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


class MlpPolicy:
    """A deterministic tanh MLP mapping observations to Box actions in [-1, 1].

    Args:
        obs_dim: observation size.
        act_dim: action size.
        hidden: widths of the hidden layers.
        seed: seed of the weight initialization (scaled normal, like PyTorch's
            default fan-in scaling).
        backend: ``"numpy"``, ``"torch"`` or ``"auto"`` (torch if installed).
        device: torch device (``"cpu"``, ``"cuda"``), torch backend only.
        action_scale: multiplies the output, in (0, 1] (an untrained policy with
            a small scale flies gently instead of tumbling).
    """

    def __init__(
        self,
        obs_dim: int,
        act_dim: int,
        hidden: Sequence[int] = (64, 64),
        *,
        seed: int = 0,
        backend: str = "numpy",
        device: str = "cpu",
        action_scale: float = 1.0,
    ) -> None:
        for name, value in (("obs_dim", obs_dim), ("act_dim", act_dim)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        hidden = tuple(hidden)
        if any(
            isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1 for h in hidden
        ):
            raise ValueError(f"hidden must be a sequence of integers >= 1, got {hidden!r}")
        if not isinstance(action_scale, (int, float)) or not 0.0 < action_scale <= 1.0:
            raise ValueError(f"action_scale must be in (0, 1], got {action_scale!r}")
        if backend not in ("numpy", "torch", "auto"):
            raise ValueError(f"backend must be 'numpy', 'torch' or 'auto', got {backend!r}")
        if backend == "auto":
            backend = "torch" if torch_available() else "numpy"
        if backend == "torch" and not torch_available():
            raise ValueError("backend='torch' needs torch installed; use backend='numpy'")
        self.obs_dim, self.act_dim, self.hidden = int(obs_dim), int(act_dim), hidden
        self.backend = backend
        self.action_scale = float(action_scale)
        rng = np.random.default_rng(seed)
        sizes = (self.obs_dim, *hidden, self.act_dim)
        self.weights: list[np.ndarray] = []
        self.biases: list[np.ndarray] = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            scale = 1.0 / np.sqrt(fan_in)
            self.weights.append((rng.standard_normal((fan_in, fan_out)) * scale).astype(np.float32))
            self.biases.append(np.zeros(fan_out, dtype=np.float32))
        self._torch_params: list[tuple[Any, Any]] | None = None
        if backend == "torch":
            import torch

            self._device = torch.device(device)
            self._torch_params = [
                (torch.from_numpy(w).to(self._device), torch.from_numpy(b).to(self._device))
                for w, b in zip(self.weights, self.biases)
            ]

    @classmethod
    def for_env(cls, env, **kwargs: Any) -> MlpPolicy:
        """A policy sized for ``env``'s (shared) observation and Box action spaces."""
        agent = env.possible_agents[0]
        obs_shape = env.observation_space(agent).shape
        act_shape = env.action_space(agent).shape
        if len(obs_shape) != 1 or len(act_shape) != 1:
            raise ValueError(
                f"env must have flat Box observation and action spaces, got {obs_shape} "
                f"and {act_shape}"
            )
        return cls(obs_shape[0], act_shape[0], **kwargs)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """Actions ``float32[B, act_dim]`` for observations ``[B, obs_dim]``."""
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim:
            raise ValueError(f"obs must have shape (batch, {self.obs_dim}), got {obs.shape}")
        if self._torch_params is not None:
            return self._forward_torch(obs)
        x = obs
        for w, b in zip(self.weights, self.biases):
            x = x @ w
            x += b
            np.tanh(x, out=x)  # hidden activations; on the last layer, squashes into [-1, 1]
        if self.action_scale != 1.0:
            x *= np.float32(self.action_scale)
        return x

    def _forward_torch(self, obs: np.ndarray) -> np.ndarray:
        import torch

        with torch.inference_mode():
            x = torch.from_numpy(obs).to(self._device)
            for w, b in self._torch_params:
                x = torch.tanh(x @ w + b)
            return (x * self.action_scale).cpu().numpy()


@dataclasses.dataclass
class LatencyReport:
    """Per-step wall times of a decision loop, in seconds.

    ``policy[i]`` is the forward pass of step i, ``env[i]`` its ``env.step``,
    ``runtime[i]`` the part of ``env[i]`` spent inside the C++ step (None when
    the env does not report it).
    """

    num_agents: int
    backend: str
    api: str
    policy: np.ndarray
    env: np.ndarray
    runtime: np.ndarray | None = None
    resets: int = 0

    @property
    def total(self) -> np.ndarray:
        """Policy plus env time per step."""
        return self.policy + self.env

    def summary(self) -> dict[str, float]:
        """Mean, median and 95th percentile of each part, in milliseconds."""
        out: dict[str, float] = {"steps": float(len(self.policy)), "agents": self.num_agents}
        parts = {"policy": self.policy, "env": self.env, "total": self.total}
        if self.runtime is not None:
            parts["runtime"] = self.runtime
        for name, values in parts.items():
            ms = 1e3 * np.asarray(values)
            out[f"{name}_mean_ms"] = float(ms.mean())
            out[f"{name}_p50_ms"] = float(np.median(ms))
            out[f"{name}_p95_ms"] = float(np.percentile(ms, 95))
        return out

    def __str__(self) -> str:
        s = self.summary()
        lines = [
            f"decision loop: {int(s['steps'])} steps, {self.num_agents} agents, "
            f"policy={self.backend}, env api={self.api}, resets={self.resets}"
        ]
        names = ["policy", "env", "total"] + (["runtime"] if self.runtime is not None else [])
        for name in names:
            lines.append(
                f"  {name:8s} mean {s[f'{name}_mean_ms']:8.3f} ms   "
                f"p50 {s[f'{name}_p50_ms']:8.3f} ms   p95 {s[f'{name}_p95_ms']:8.3f} ms"
            )
        return "\n".join(lines)


def run_decision_loop(
    env: ParallelEnv,
    policy: Callable[[np.ndarray], np.ndarray],
    steps: int,
    *,
    warmup: int = 3,
    api: str = "arrays",
    seed: int | None = 0,
) -> LatencyReport:
    """Run ``steps`` timed decision steps: ``policy(observations)`` then ``env.step``.

    The policy runs batched on the observations of every possible agent (a
    fixed batch, as on an accelerator; rows of terminated agents are ignored
    by the env). When every agent is done the env is reset, untimed.

    Args:
        env: a seer_env ParallelEnv (``api="arrays"`` uses its ``step_arrays``
            fast path) or any PettingZoo ParallelEnv with flat Box spaces
            (``api="dicts"``: the per-agent dict API, as trainers call it).
        policy: callable ``obs[B, obs_dim] -> actions[B, act_dim]``.
        steps: timed steps, >= 1.
        warmup: untimed steps first, >= 0.
        api: ``"arrays"`` or ``"dicts"``.
        seed: seed of the first reset.

    Returns:
        A ``LatencyReport``.
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, (int, np.integer)) or warmup < 0:
        raise ValueError(f"warmup must be an integer >= 0, got {warmup!r}")
    if api not in ("arrays", "dicts"):
        raise ValueError(f"api must be 'arrays' or 'dicts', got {api!r}")
    if api == "arrays" and not hasattr(env, "step_arrays"):
        raise ValueError("api='arrays' needs an env with step_arrays(); use api='dicts'")
    agents = list(env.possible_agents)
    index = {a: i for i, a in enumerate(agents)}
    obs_dim = env.observation_space(agents[0]).shape[0]
    all_obs = np.zeros((len(agents), obs_dim), dtype=np.float32)
    has_runtime = hasattr(env, "sim")
    policy_s, env_s, runtime_s = [], [], []
    resets = 0

    def reset(seed_value):
        observations, _ = env.reset(seed=seed_value)
        if api == "arrays":
            return env.sim.observations() if has_runtime else _stack(observations)
        return _stack(observations)

    def _stack(observations: dict) -> np.ndarray:
        all_obs[:] = 0.0
        for agent, o in observations.items():
            all_obs[index[agent]] = o
        return all_obs

    obs = reset(seed)
    for i in range(warmup + steps):
        if not env.agents:
            obs = reset(None)
            resets += 1
        t0 = time.perf_counter()
        actions = policy(obs)
        t1 = time.perf_counter()
        if api == "arrays":
            obs = env.step_arrays(actions)[0]
        else:
            live = env.agents
            out = env.step({a: actions[index[a]] for a in live})
            obs = _stack(out[0])
        t2 = time.perf_counter()
        if i >= warmup:
            policy_s.append(t1 - t0)
            env_s.append(t2 - t1)
            if has_runtime:
                runtime_s.append(env.sim.last_step["seconds"])
    return LatencyReport(
        num_agents=len(agents),
        backend=getattr(policy, "backend", type(policy).__name__),
        api=api,
        policy=np.asarray(policy_s),
        env=np.asarray(env_s),
        runtime=np.asarray(runtime_s) if has_runtime else None,
        resets=resets,
    )
