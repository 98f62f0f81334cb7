"""aircraft: a UAV swarm flying to its goals, sharing state by radio beacons (every version).

``num_uavs`` quadrotors start at random points of a square airspace and must
each reach a random goal, without hitting the ground, leaving the airspace,
flying too close to each other or draining their battery. Each UAV is an
agent commanding collective thrust and body rates; it sees its own state and
the nearest UAVs it has *heard* — the radio, not an oracle, tells it who is
around.

The step runs on the seer_env C++ runtime (``cpp/models/aircraft``). The
compute is a rigid-body quadrotor with quadratic drag in a wind field of
``wind_modes`` sinusoidal modes, integrated with RK4 at ``substeps`` substeps
per step (the compute-intensity knobs). The communication is beacons: every
``beacon_every`` substeps a UAV sends its position and velocity to every UAV
within ``comm_radius`` (found through a spatial grid built once per step from
the boundary snapshot), delivered ``comm_latency`` seconds later — the
runtime's lookahead — so ``executor="parallel"`` runs a step on many threads
with outputs bit-identical to ``"serial"``. A NumPy version of the same model
is ``seer_env.testing.reference.aircraft.AircraftReference``.

Each version's module has a runnable example.

| | |
|---|---|
| Actions | Continuous |
| Parallel API | Yes (AEC through ``aircraft_v0.env()``) |
| Agents | ``num_uavs``: ``uav_0 .. uav_{N-1}``; they leave ``agents`` when they crash |
| Action shape | ``Box(-1, 1, (4,), float32)`` |
| Observation shape | ``(17 + 6 * k_neighbors,)`` float32 |
| State shape | ``(8 * num_uavs,)`` float32 (aircraft_v1: ``(11 * num_uavs,)``) |

## Action

``[thrust, roll_rate, pitch_rate, yaw_rate]`` in [-1, 1]. Thrust/weight is
``1 + thrust``: 0 hovers, -1 cuts the motors, +1 is twice the weight. The
rates command ``max_rate * value`` rad/s to the body-rate controller.

What Gaussian policies need, the same in ``step``, ``step_arrays`` and the
vector env: values outside [-1, 1], infinities included, are clipped to the
Box (as Gymnasium's ``ClipAction`` does); NaN raises ``ValueError`` naming
the agent (a NaN action means a policy diverged: acting on it would hide
that). A live UAV missing from ``step``'s actions dict hovers (it acts as
if given zeros); actions for UAVs that are gone are ignored and a key that
is no UAV's is a ``ValueError`` (the policy of every env:
``seer_env.action_checker``); the array paths take a row for every agent.

## Observation (float32, per UAV)

| index | value |
|---|---|
| 0-2 | position / ``arena_size`` (x, y, z; z up) |
| 3-5 | velocity / 10 m/s |
| 6-9 | attitude quaternion (w, x, y, z), body to world, in [-1, 1] |
| 10-12 | body rates / ``max_rate`` |
| 13-15 | (goal - position) / ``arena_size`` |
| 16 | battery fraction, in [0, 1] |
| 17 + 6 i .. | i-th nearest heard UAV: relative position / ``comm_radius`` (3), |
| | relative velocity / 10 m/s (3); zeros when fewer than ``k_neighbors`` were heard |

Every entry is clipped to [-100, 100] (the declared Box; scaled values are of
order 1, so the clip only guards against extreme configs).

"Heard" UAVs are the entries of the UAV's neighbour table (the last beacon of
up to ``max_neighbors`` senders; when full, a new sender replaces the stalest
entry) at most ``neighbor_timeout`` seconds old, as they were when sent.

**Reward** per UAV and step: metres of progress toward the goal, minus
``near_miss_penalty`` per near miss, minus ``energy_weight`` per joule used,
minus ``crash_penalty`` on the step it hits the ground or leaves the airspace.
A *near miss* is a beacon whose sender, dead-reckoned to the receiver's time,
is closer than ``safe_radius``. ``reward_terms(env)`` splits the last step's
rewards into these four terms (they sum to the rewards bit for bit).

**Termination**: a UAV terminates when it hits the ground (z < 0), leaves the
airspace (|x| or |y| > ``arena_size``, z > ``ceiling``) or empties its battery;
it then leaves ``agents``. Every UAV is truncated after ``max_cycles`` steps.

**infos[agent]** (ints, same keys every step): ``near_misses`` (this step),
``near_misses_total``, ``beacons_received`` (this step), ``neighbors`` (fresh
table entries), ``crash_cause`` (0 flying, 1 ground, 2 out of bounds,
3 battery empty).

**state()**: per UAV ``[x, y, z] / arena_size, [vx, vy, vz] / 10 m/s, battery
fraction, alive``, clipped to [-100, 100] like the observations; aircraft_v1
adds ``(goal - position) / arena_size`` (3 more per UAV, as observation 13-15),
so that a centralised critic sees what the progress reward depends on.

**stats()** (``env.unwrapped.stats()``): totals over all UAVs since reset —
``uavs``, ``flying``, ``crashed_ground``, ``crashed_out_of_bounds``,
``battery_empty``, ``near_misses``, ``beacons_received``, ``energy_used``
(joules) — and ``crash_fraction`` (ground or out of bounds, over ``uavs``) and
``mean_goal_distance`` (metres).

## Model

Dynamics per UAV: position ``p``, velocity ``v``, attitude ``q``, body rates
``w``; ``v' = g (1 + thrust) R(q) e_z - drag |v - u| (v - u) - g e_z`` with
wind ``u(p, t) = sum_m a_m sin(k_m . p + omega_m t + phase_m)``; the body
rates follow the command with gain ``rate_gain`` plus the gyroscopic term of a
rigid body (inertia 0.01, 0.01, 0.02 kg m^2). Battery power is ``power_idle +
power_thrust (1 + thrust)^2 + power_rate |rates|^2`` watts. The wind modes are
part of the scenario: drawn from ``wind_seed``, not from the episode seed (the
episode seed draws starts and goals: inner 80% of the airspace, 30-70% of the
ceiling).

Choices behind the defaults: ``comm_latency`` 50 ms is a mesh radio's latency
and gives the parallel executor 2-3 synchronization rounds per 100 ms step;
``beacon_every`` 10 substeps is 20 beacons per second; the default
``arena_size`` grows as ``6.25 * sqrt(num_uavs)`` (200 m x 200 m at 256 UAVs)
so that density, and so beacons per UAV (~20 per beacon round), stays the same at
every size.

## Rendering

``render_mode="rgb_array"``: ``render()`` returns a top-down
``uint8[256, 256, 3]`` picture: UAVs coloured by altitude, blue low to yellow
high, red on a near miss this step; their goals in green; crashed UAVs as dark
red crosses. ``"ansi"``: a text map and a summary line. ``"human"``: prints
the ``"ansi"`` text (no window, so it works headless).

## Versions

``seer_env.envs.aircraft_v0`` and ``seer_env.envs.aircraft_v1`` (reward
terms rescaled for the learnable task) build this class; each version's
module lists its arguments and defaults.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from seer_env.envs.version import EnvVersion, VersionedEnv
from seer_env.neighbours import NeighbourRule, heard_neighbours
from seer_env.workloads import entity_records, record_dtype

__all__ = ["UAV_STATE_DTYPE", "AircraftEnv", "uav_states"]

# The C++ UavState record (cpp/models/aircraft/aircraft.hpp), derived from the declaration.
UAV_STATE_DTYPE = record_dtype("aircraft", "state")

_RENDER_SIZE = 256  # rgb_array side, pixels
_GOAL_LINE_SAMPLES = 2 * _RENDER_SIZE  # points per UAV-to-goal line: under a pixel apart
_MAP_COLS, _MAP_ROWS = 64, 24  # ansi map size, characters


def uav_states(sim) -> np.ndarray:
    """The C++ entity states of an aircraft ``Simulation`` as a ``UAV_STATE_DTYPE`` array."""
    return entity_records(sim, UAV_STATE_DTYPE)


BATTERY_EMPTY = 3  # crash_cause of a UAV whose battery ran out (not penalized as a crash)
_GROUND, _OUT_OF_BOUNDS = 1, 2  # the other crash causes


def reward_terms(env) -> dict[str, np.ndarray]:
    """The last step's reward of every UAV, split into the terms it sums.

    float64 ``[num_uavs]`` arrays, one per term: ``progress`` (metres closer to
    the goal), ``near_misses`` (``-near_miss_penalty`` per near miss),
    ``energy`` (``-energy_weight`` per joule used) and ``crash``
    (``-crash_penalty`` on the step a UAV hits the ground or leaves the
    airspace). Computed from the UAV states in the model's own order of
    operations, so ``progress + near_misses + energy + crash`` equals the step's
    rewards bit for bit. Cheap (a pass over the states); call it after a step.
    """
    weights = env._model_config  # every parameter, defaults filled in
    states = uav_states(env.sim)
    delta = states["goal"] - states["body"][:, 0:3]
    distance = np.sqrt(
        delta[:, 0] * delta[:, 0] + delta[:, 1] * delta[:, 1] + delta[:, 2] * delta[:, 2]
    )
    crashed = (states["crashed_step"] != 0) & (states["crash_cause"] != BATTERY_EMPTY)
    return {
        "progress": states["prev_goal_dist"] - distance,
        "near_misses": -(
            float(weights["near_miss_penalty"]) * states["near_misses_step"].astype(np.float64)
        ),
        "energy": -(float(weights["energy_weight"]) * states["energy_step"]),
        "crash": np.where(crashed, -float(weights["crash_penalty"]), 0.0),
    }


def _heard(slots: int, timeout: float, raw: np.ndarray) -> np.ndarray:
    """``heard_neighbours`` of one instance's raw entity state bytes."""
    return heard_neighbours(raw.view(UAV_STATE_DTYPE)[:, 0], slots, timeout)


class AircraftEnv(VersionedEnv):
    """The ParallelEnv of every aircraft version (see the module docstring)."""

    metadata = {
        "name": "aircraft",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": True,
    }

    def __init__(self, version: EnvVersion, config: dict[str, Any], **options: Any) -> None:
        super().__init__(version, config, **options)
        self.num_uavs = config["num_uavs"]
        # arena_size's declared default is computed: the model says what it resolved.
        self.arena_size = self.sim.spec["derived_params"]["arena_size"]
        self.ceiling = config["ceiling"]
        self.battery_capacity = config["battery_capacity"]

    def neighbour_rule(self) -> NeighbourRule:
        """The UAVs each UAV has heard, read from the states (``seer_env.neighbours``)."""
        config = self._model_config
        slots, timeout = int(config["max_neighbors"]), float(config["neighbor_timeout"])
        # A partial of a module function, not a closure: the vector env pickles its rule.
        return NeighbourRule(slots, from_states=functools.partial(_heard, slots, timeout))

    def stats(self) -> dict[str, float]:
        """Totals over all UAVs since reset, and the figures a run is judged by.

        Returns:
            ``uavs``, ``flying``, the crashes by cause (``crashed_ground``,
            ``crashed_out_of_bounds``, ``battery_empty``), ``near_misses`` and
            ``beacons_received`` (ints, summed over the UAVs), ``energy_used``
            (joules), ``crash_fraction`` (UAVs that hit the ground or left the
            airspace, over ``uavs``) and ``mean_goal_distance`` (metres, every
            UAV, where it is or fell).
        """
        if self._episode_seed is None:
            raise RuntimeError("stats() called before reset()")
        states = uav_states(self.sim)
        cause = states["crash_cause"]
        delta = states["goal"] - states["body"][:, 0:3]
        crashed = int(np.count_nonzero((cause == _GROUND) | (cause == _OUT_OF_BOUNDS)))
        return {
            "uavs": int(states.shape[0]),
            "flying": int(np.count_nonzero(states["alive"])),
            "crashed_ground": int(np.count_nonzero(cause == _GROUND)),
            "crashed_out_of_bounds": int(np.count_nonzero(cause == _OUT_OF_BOUNDS)),
            "battery_empty": int(np.count_nonzero(cause == BATTERY_EMPTY)),
            "near_misses": int(states["near_misses_total"].sum()),
            "beacons_received": int(states["beacons_total"].sum()),
            "energy_used": float((self.battery_capacity - states["energy"]).sum()),
            "crash_fraction": crashed / states.shape[0],
            "mean_goal_distance": float(np.sqrt((delta * delta).sum(axis=1)).mean()),
        }

    # -- rendering ------------------------------------------------------------------------------
    def _swarm(self) -> dict[str, np.ndarray]:
        states = uav_states(self.sim)
        return {
            "pos": states["body"][:, 0:3],
            "goal": states["goal"],
            "alive": states["alive"] != 0,
            "near_miss": states["near_misses_step"] > 0,
            "battery": states["energy"],
        }

    def _render_rgb_array(self) -> np.ndarray:
        """Top-down picture, north up: ``uint8[256, 256, 3]``.

        Flying UAVs are 3x3 squares coloured by altitude (blue low, yellow high;
        red during a step with a near miss), each with a faint line to its goal
        (a green 2x2 mark); crashed UAVs are dark red crosses.
        """
        size = _RENDER_SIZE
        swarm = self._swarm()
        image = np.empty((size, size, 3), dtype=np.uint8)
        image[:] = (24, 28, 36)
        image[[0, -1], :] = image[:, [0, -1]] = (90, 96, 110)  # airspace border

        def pixels(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            scale = (size - 1) / (2.0 * self.arena_size)
            with np.errstate(invalid="ignore"):
                col = np.clip((points[:, 0] + self.arena_size) * scale, 0, size - 1)
                row = np.clip((self.arena_size - points[:, 1]) * scale, 0, size - 1)
            col, row = np.nan_to_num(col), np.nan_to_num(row)
            return row.astype(np.int64), col.astype(np.int64)

        def stamp(rows, cols, offsets, colors) -> None:
            for dr, dc in offsets:
                r, c = np.clip(rows + dr, 0, size - 1), np.clip(cols + dc, 0, size - 1)
                image[r, c] = colors

        alive = swarm["alive"]
        # A faint line from each flying UAV to its goal (drawn first: under the marks).
        along = np.linspace(0.0, 1.0, _GOAL_LINE_SAMPLES)[None, :, None]
        start, end = swarm["pos"][alive, None, 0:2], swarm["goal"][alive, None, 0:2]
        lr, lc = pixels((start + (end - start) * along).reshape(-1, 2))
        image[lr, lc] = (52, 70, 62)
        gr, gc = pixels(swarm["goal"][alive])
        stamp(gr, gc, [(0, 0), (0, 1), (1, 0), (1, 1)], (60, 200, 90))
        dr_, dc_ = pixels(swarm["pos"][~alive])
        stamp(dr_, dc_, [(-1, -1), (0, 0), (1, 1), (-1, 1), (1, -1)], (140, 30, 30))
        rows, cols = pixels(swarm["pos"][alive])
        height = np.clip(np.nan_to_num(swarm["pos"][alive, 2]) / self.ceiling, 0.0, 1.0)
        colors = np.stack(
            [60 + 195 * height, 90 + 150 * height, 255 - 200 * height], axis=1
        ).astype(np.uint8)
        colors[swarm["near_miss"][alive]] = (255, 40, 40)
        square = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)]
        stamp(rows, cols, square, colors)
        return image

    def _render_ansi(self) -> str:
        """A text map (``o`` one UAV, digits for more, ``#`` ten or more, ``x`` crashed)."""
        swarm = self._swarm()
        grid = np.zeros((_MAP_ROWS, _MAP_COLS), dtype=np.int64)
        dead = np.zeros((_MAP_ROWS, _MAP_COLS), dtype=bool)
        for points, target in (
            (swarm["pos"][swarm["alive"]], None),
            (swarm["pos"][~swarm["alive"]], dead),
        ):
            with np.errstate(invalid="ignore"):
                u = np.nan_to_num((points[:, 0] + self.arena_size) / (2.0 * self.arena_size))
                v = np.nan_to_num((self.arena_size - points[:, 1]) / (2.0 * self.arena_size))
            c = np.clip((u * _MAP_COLS).astype(np.int64), 0, _MAP_COLS - 1)
            r = np.clip((v * _MAP_ROWS).astype(np.int64), 0, _MAP_ROWS - 1)
            if target is None:
                np.add.at(grid, (r, c), 1)
            else:
                target[r, c] = True
        lines = []
        for row in range(_MAP_ROWS):
            chars = []
            for col in range(_MAP_COLS):
                n = grid[row, col]
                if n == 0:
                    chars.append("x" if dead[row, col] else ".")
                else:
                    chars.append("o" if n == 1 else (str(n) if n < 10 else "#"))
            lines.append("".join(chars))
        infos = self.sim.infos()
        alive = int(swarm["alive"].sum())
        battery = swarm["battery"] / self.battery_capacity
        head = (
            f"{self.metadata['name']} t={self.sim.now:.2f} s step {self.sim.steps}: "
            f"{alive}/{self.num_uavs} flying, near misses {int(infos[:, 0].sum())} "
            f"(total {int(infos[:, 1].sum())}), mean battery {battery.mean():.1%}"
        )
        border = "+" + "-" * _MAP_COLS + "+"
        return "\n".join([head, border, *(f"|{line}|" for line in lines), border])

    def _render_human(self) -> None:
        """Print the ``"ansi"`` text (works headless: no window is opened)."""
        print(self._render_ansi())
