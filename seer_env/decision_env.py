"""Agents that act when their events ask: the ParallelEnv of event-driven decisions.

A model whose declaration says ``decisions`` (``pcs_admission``, or your own)
has its handlers call ``ctx.request_decision()``: that agent then waits, its
later events held, until its action arrives (docs/decisions.md). The env runs
the step's events in windows of at most one lookahead and hands over, at each
return, the agents that wait; ``step(actions)`` gives them their actions and
runs on to the next agents that must act. This is RLlib's ``MultiAgentEnv``
contract, in PettingZoo's ParallelEnv form:

- ``env.agents`` lists the agents that must act now, in ``(time, agent)``
  order (``infos[agent]["decision_time"]``: when each asked); ``reset()`` and
  ``step()`` return observations for exactly those agents;
- ``step(actions)`` takes an action for exactly those agents: a missing
  one, or one for an agent that was not asked, is a ValueError naming it;
- rewards accrue at every step boundary (the model's per-step reward); an
  agent's reward in a return is what accrued since its previous return, so
  the episode's sum is every boundary's, whatever the timing of decisions;
- the episode ends at ``max_cycles`` steps: the last return holds every
  agent (its observation at that boundary, the rewards still owed, truncated)
  and ``env.agents`` is empty.

``decisions="windows"`` (the default for such a model) answers all requests
of one window in one batch, on any executor; ``"one_at_a_time"`` answers each
before the next event runs (serial executor). For a policy that is a function
of agent and observation, both return the same bytes: the window's requests
are independent (docs/decisions.md says why, and the tests hold them to it).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from seer_env.env import SeerParallelEnv
from seer_env.snapshot import Snapshot

__all__ = ["EventDrivenDecisions", "SeerDecisionEnv"]


class EventDrivenDecisions:
    """The decisions-mode ``reset``/``step``/``step_arrays`` over a ``SeerParallelEnv`` class.

    Mixed in before the env class (``class PcsAdmissionEnv(EventDrivenDecisions,
    PcsEnv)``): every other part of the env (spaces, snapshots, rendering,
    pickling) is the env class's.
    """

    _event_driven: ClassVar[bool] = True
    # Who waits for an action, and since when (by (time, agent)): nobody before reset().
    _asked: np.ndarray = np.zeros(0, dtype=np.int64)
    _times: np.ndarray = np.zeros(0)

    def _new_simulation(self):
        if self._decisions == "one_at_a_time":
            # Its windows stop at each request: the serial queue's work.
            self._options.update(executor="serial", num_threads=1)
            self._stpa_request = None
        return super()._new_simulation()

    # -- episode --------------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        """Start an episode; ``(observations, infos)`` of the agents that must act first."""
        super().reset(seed, options)
        self._accrued = np.zeros(len(self.possible_agents))
        self._torn = ("reset()", self._episode_seed)  # until the first agents are known
        result = self._run_to_next_decisions()
        self._torn = None
        return result[0], result[4]

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Actions for the agents in ``env.agents``; the dicts of the next agents to act."""
        self._require_running()
        asked = self._asked
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict keyed by agent, got {type(actions).__name__}")
        actions = dict(actions)
        # The env's own record of who asked (``env.agents`` is the caller's list).
        names = [self.possible_agents[i] for i in asked.tolist()]
        missing = [a for a in names if a not in actions]
        if missing:
            raise ValueError(
                f"actions: no action for {missing[:5]}, which wait for one (env.agents)"
            )
        if len(actions) != len(names):
            waiting = set(names)
            extra = [a for a in actions if a not in waiting]
            raise ValueError(
                f"actions: {extra[:5]} did not ask for an action now; give actions only to "
                "env.agents, the agents that wait for one"
            )
        rows, _ = self._actions.check_dict(actions, names, self._agent_index)
        return self._answer(rows[asked])

    def step_arrays(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The array fast path: one row per possible agent; the rows of ``needs_action`` act.

        Returns ``(obs, rewards, terminations, truncations)``, one row per possible
        agent: the rows of the agents that must act next (``needs_action``, or
        every row at the episode's end) are fresh; ``rewards`` holds what accrued
        for them since their previous return (0 in the other rows).
        """
        self._require_running()
        n = len(self.possible_agents)
        rows = self._actions.check_array(
            actions, n, live=self.needs_action, names=self.possible_agents
        )
        self._answer(rows[self._asked], dicts=False)
        return self._arrays

    @property
    def needs_action(self) -> np.ndarray:
        """Bool per possible agent: it waits for an action now (``env.agents``)."""
        mask = np.zeros(len(self.possible_agents), dtype=bool)
        mask[self._asked] = True
        return mask

    @property
    def action_masks(self) -> np.ndarray | None:
        """Bool ``[num_agents, n]`` for a model that declares ``action_mask`` (else None).

        The rows of ``needs_action`` hold each asking agent's mask when it
        asked (``step`` refuses an action it forbids); the other rows hold the
        agent's last mask (its last request's, or the last boundary's).
        """
        return self.sim.action_masks() if self._masked else None

    @property
    def decision_times(self) -> np.ndarray:
        """When each agent of ``env.agents`` asked (float64, its order)."""
        return self._times.copy()

    # -- the runtime's side ---------------------------------------------------------------------
    def _answer(self, rows: np.ndarray, *, dicts: bool = True):
        self._torn = ("step()", self._episode_seed)  # until the bookkeeping below is done
        with self._refusal_keeps_env():
            self.sim.answer(rows)
        result = self._run_to_next_decisions(dicts=dicts)
        self._torn = None
        return result

    def _run_to_next_decisions(self, *, dicts: bool = True):
        """Answers pending asks first, else advances to the next ones or the episode's end."""
        sim = self.sim
        agents, times = sim.requests()
        while not len(agents):
            if sim.advance() == "decisions":
                agents, times = sim.requests()
                break
            self._cycles += 1
            self._accrued += sim.rewards()
            if self._cycles >= self.max_cycles:
                return self._episode_end(dicts)
        self._asked, self._times = agents, times
        self.agents = [self.possible_agents[i] for i in agents.tolist()]
        rewards = self._accrued[agents]
        self._accrued[agents] = 0.0
        obs = sim.observations()
        if not dicts:
            out = np.zeros(len(self.possible_agents))
            out[agents] = rewards
            flags = np.zeros(len(self.possible_agents), dtype=bool)
            self._arrays = (obs, out, flags, flags.copy())
            return self._arrays
        names = self.agents
        # With masks: each asking agent's mask when it asked.
        observations = self._with_masks({a: obs[i].copy() for a, i in zip(names, agents.tolist())})
        return (
            observations,
            dict(zip(names, rewards.tolist())),
            dict.fromkeys(names, False),
            dict.fromkeys(names, False),
            {a: {"decision_time": t} for a, t in zip(names, times.tolist())},
        )

    def _episode_end(self, dicts: bool):
        """The last return: every agent, its boundary observation and the rewards owed."""
        names = list(self.possible_agents)
        rewards = self._accrued.copy()
        self._accrued[:] = 0.0
        self._asked = np.zeros(0, dtype=np.int64)
        self._times = np.zeros(0)
        self.agents = []
        self._live = np.zeros(len(names), dtype=bool)
        self._all_live = False
        obs = self.sim.observations()
        if not dicts:
            done = np.ones(len(names), dtype=bool)
            self._arrays = (obs, rewards, np.zeros(len(names), dtype=bool), done)
            return self._arrays
        observations = self._with_masks({a: obs[i].copy() for i, a in enumerate(names)})
        return (
            observations,
            dict(zip(names, rewards.tolist())),
            dict.fromkeys(names, False),
            dict.fromkeys(names, True),
            {a: {} for a in names},
        )

    # -- snapshots ------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The env's state between two returns (docs/branching.md).

        It holds the runtime's waiting agents and held events, and the rewards
        each agent is owed.
        """
        snap = super().snapshot()
        snap.episode["accrued_rewards"] = self._accrued.tolist()
        return snap

    def restore(self, snapshot: Snapshot | bytes) -> tuple[dict, dict]:
        """Put the env into ``snapshot``'s state.

        Returns ``(observations, infos)`` of the agents that must act there, as
        ``reset()`` returns them.
        """
        super().restore(snapshot)
        snap = snapshot if isinstance(snapshot, Snapshot) else Snapshot.from_bytes(snapshot)
        accrued = np.asarray(snap.episode.get("accrued_rewards", []), dtype=np.float64)
        if accrued.shape != (len(self.possible_agents),):
            raise ValueError("snapshot's accrued_rewards must hold one float per possible agent")
        self._accrued = accrued
        if self._cycles >= self.max_cycles:
            return self._episode_end(dicts=True)[0], {}
        result = self._run_to_next_decisions()
        return result[0], result[4]


class SeerDecisionEnv(EventDrivenDecisions, SeerParallelEnv):
    """``SeerParallelEnv`` for a model whose agents act when their events ask.

    Same arguments as ``SeerParallelEnv`` (``decisions``: ``None``/``"windows"``
    or ``"one_at_a_time"``); the module docstring says what ``agents``,
    ``reset`` and ``step`` mean here.
    """
