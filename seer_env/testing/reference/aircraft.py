"""aircraft_v0 in NumPy: the same model as ``cpp/models/aircraft``, as oracle and baseline.

The C++ model runs each step as events (SUBSTEP, BEACON) in the contract's key
order ``(time, source, seq)``. All UAVs substep at the same instants
``t_k + j h``, so this reference advances them together, vectorized over
UAVs, and delivers beacons in batches in between, reproducing the serial
order exactly:

* a batch of beacons arriving at ``T`` is handled after every substep whose
  time is below ``T`` and before every later one; at a tie ``T == t_k + j h``
  receiver ``r`` handles beacons from senders ``s < r`` before its own
  substep ``j`` and those from ``s > r`` after it (the key orders by source);
* one receiver handles its beacons of one instant in increasing sender id
  (the table update is sequential per receiver; it is vectorized across
  receivers by rank).

Every floating-point expression repeats the C++ one operation for operation
(the C++ is compiled without FMA contraction), and states are kept in the C++
record layout (``UAV_STATE_DTYPE``), so a test can compare the two field by
field. The only source of ulp-level difference is ``np.sin`` against C++
``std::sin``: NumPy may use its own SIMD sine on some CPUs/builds instead of
the C library's; where both are the C library's (as on the machines this was
written on) the two implementations agree bit for bit.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from seer_env.testing.rng import EntityRng
from seer_env.workloads import model_parameters, record_dtype, workload_spec

SPEC = workload_spec("aircraft")
# The C++ UavState record, derived from the model's declaration.
UAV_STATE_DTYPE = record_dtype("aircraft", "state")
NO_NEIGHBOR = 0xFFFFFFFF  # kNoNeighbor in cpp/models/aircraft/aircraft.hpp: an empty table slot

VELOCITY_SCALE = 10.0
OBS_BOUND = 100.0
OWN_OBS = 17
INFO_KEYS = tuple(SPEC["info_keys"])
ALIVE, GROUND, OUT_OF_BOUNDS, BATTERY_EMPTY = 0, 1, 2, 3

# Inertia of the airframe (kg m^2): only the gyroscopic ratios enter.
_IXX, _IYY, _IZZ = 0.01, 0.01, 0.02


def _post_init(self) -> None:
    if self.arena_size is None:
        self.arena_size = 6.25 * math.sqrt(float(self.num_uavs))
    self.h = self.dt / float(self.substeps)
    self.half_h = self.h * 0.5
    self.sixth_h = self.h / 6.0
    self.gyro = ((_IYY - _IZZ) / _IXX, (_IZZ - _IXX) / _IYY, (_IXX - _IYY) / _IZZ)
    self.comm_radius_sq = self.comm_radius * self.comm_radius
    self.safe_radius_sq = self.safe_radius * self.safe_radius


# The model's parameters, fields and defaults from its declaration
# (cpp/models/aircraft/workload.cpp); arena_size None: 6.25 * sqrt(num_uavs).
AircraftParams = dataclasses.make_dataclass(
    "AircraftParams",
    [(p.name, p.annotation, dataclasses.field(default=p.default)) for p in model_parameters(SPEC)],
    namespace={"__post_init__": _post_init, "__doc__": "aircraft_v0's model parameters."},
)


def draw_wind(modes: int, speed: float, wind_seed: int) -> np.ndarray:
    """Wind modes ``[modes, 8]``: (ax, ay, az, kx, ky, kz, omega, phase), as in wind.cpp."""
    out = np.zeros((modes, 8))
    if modes == 0:
        return out
    two_pi = 2.0 * math.pi
    rng = EntityRng(wind_seed, 2**64 - 1)
    amp = speed / math.sqrt(float(modes))
    for i in range(modes):
        heading = two_pi * rng.uniform()
        vertical = 0.2 * (2.0 * rng.uniform() - 1.0)
        wavelength = 40.0 + 160.0 * rng.uniform()
        direction = two_pi * rng.uniform()
        tilt = 0.25 * (2.0 * rng.uniform() - 1.0)
        omega = 0.2 + 0.6 * rng.uniform()
        phase = two_pi * rng.uniform()
        k = two_pi / wavelength
        out[i] = (
            amp * math.cos(heading),
            amp * math.sin(heading),
            amp * vertical,
            k * math.cos(direction),
            k * math.sin(direction),
            k * tilt,
            omega,
            phase,
        )
    return out


def _obs_value(x: np.ndarray, bound: float = OBS_BOUND) -> np.ndarray:
    """Clip to [-bound, bound], NaN to 0, then float32 (obs_value in C++)."""
    return np.where(np.isnan(x), 0.0, np.clip(x, -bound, bound)).astype(np.float32)


class AircraftReference:
    """aircraft_v0 with the C++ model's config keys and defaults (see module docstring).

    ``states`` holds every UAV in the C++ record layout; ``reset``/``step`` and
    the output methods mirror ``seer_env.Simulation``.
    """

    def __init__(self, **config) -> None:
        self.p = AircraftParams(**config)
        self.wind = [
            tuple(float(v) for v in m)
            for m in draw_wind(self.p.wind_modes, self.p.wind_speed, self.p.wind_seed)
        ]
        self.states = np.zeros(self.p.num_uavs, dtype=UAV_STATE_DTYPE)

    # -- physics (dynamics.cpp) -----------------------------------------------------------------
    def wind_at(self, pos: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Wind at positions ``pos[n, 3]`` and time ``t``, summed in mode order."""
        wx = wy = wz = 0.0
        px, py, pz = pos[:, 0], pos[:, 1], pos[:, 2]
        for ax, ay, az, kx, ky, kz, omega, phase in self.wind:
            s = np.sin(kx * px + ky * py + kz * pz + omega * t + phase)
            wx = wx + ax * s
            wy = wy + ay * s
            wz = wz + az * s
        zero = np.zeros(len(pos))
        return zero + wx, zero + wy, zero + wz

    def derivative(self, t: float, x: np.ndarray, thrust_acc, rate_cmd) -> np.ndarray:
        """Body-state derivative ``dx[n, 13]``, operation for operation as in C++."""
        p = self.p
        wx, wy, wz = self.wind_at(x[:, 0:3], t)
        vx, vy, vz = x[:, 3], x[:, 4], x[:, 5]
        qw, qx, qy, qz = x[:, 6], x[:, 7], x[:, 8], x[:, 9]
        ox, oy, oz = x[:, 10], x[:, 11], x[:, 12]
        rx, ry, rz = vx - wx, vy - wy, vz - wz
        speed = np.sqrt(rx * rx + ry * ry + rz * rz)
        ds = p.drag * speed
        bx = 2.0 * (qx * qz + qw * qy)
        by = 2.0 * (qy * qz - qw * qx)
        bz = 1.0 - 2.0 * (qx * qx + qy * qy)
        ta = thrust_acc
        dx = np.empty_like(x)
        dx[:, 0], dx[:, 1], dx[:, 2] = vx, vy, vz
        dx[:, 3] = ta * bx - ds * rx
        dx[:, 4] = ta * by - ds * ry
        dx[:, 5] = ta * bz - ds * rz - p.gravity
        dx[:, 6] = 0.5 * (-qx * ox - qy * oy - qz * oz)
        dx[:, 7] = 0.5 * (qw * ox + qy * oz - qz * oy)
        dx[:, 8] = 0.5 * (qw * oy - qx * oz + qz * ox)
        dx[:, 9] = 0.5 * (qw * oz + qx * oy - qy * ox)
        gx, gy, gz = p.gyro
        dx[:, 10] = p.rate_gain * (rate_cmd[:, 0] - ox) + gx * oy * oz
        dx[:, 11] = p.rate_gain * (rate_cmd[:, 1] - oy) + gy * oz * ox
        dx[:, 12] = p.rate_gain * (rate_cmd[:, 2] - oz) + gz * ox * oy
        return dx

    def rk4(self, t: float, x: np.ndarray, thrust_acc, rate_cmd) -> np.ndarray:
        """One RK4 substep of length h from t, quaternion renormalized (a new array)."""
        p = self.p
        h, hh = p.h, p.half_h
        k1 = self.derivative(t, x, thrust_acc, rate_cmd)
        k2 = self.derivative(t + hh, x + hh * k1, thrust_acc, rate_cmd)
        k3 = self.derivative(t + hh, x + hh * k2, thrust_acc, rate_cmd)
        k4 = self.derivative(t + h, x + h * k3, thrust_acc, rate_cmd)
        x = x + p.sixth_h * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        q = x[:, 6:10]
        norm = np.sqrt(
            q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1] + q[:, 2] * q[:, 2] + q[:, 3] * q[:, 3]
        )
        x[:, 6:10] = q / norm[:, None]
        return x

    # -- episode --------------------------------------------------------------------------------
    def _set_command(self, rows: np.ndarray, actions: np.ndarray | None) -> None:
        p, s = self.p, self.states
        if actions is None:
            cmd = np.zeros((len(rows), 4))
        else:
            cmd = np.asarray(actions, dtype=np.float32).astype(np.float64)
            cmd = np.where(np.isnan(cmd), 0.0, np.clip(cmd, -1.0, 1.0))
        s["cmd"][rows] = cmd
        lift = 1.0 + cmd[:, 0]
        s["thrust_acc"][rows] = p.gravity * lift
        c1, c2, c3 = cmd[:, 1], cmd[:, 2], cmd[:, 3]
        s["power"][rows] = (
            p.power_idle
            + p.power_thrust * lift * lift
            + p.power_rate * (c1 * c1 + c2 * c2 + c3 * c3)
        )

    def _goal_distance(self) -> np.ndarray:
        s = self.states
        d = s["goal"] - s["body"][:, 0:3]
        return np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])

    def reset(self, seed: int) -> None:
        """New episode: starts and goals from each UAV's stream (seed, id), as on_init."""
        p = self.p
        n = p.num_uavs
        self.states = s = np.zeros(n, dtype=UAV_STATE_DTYPE)
        spread = 0.8 * p.arena_size
        for e in range(n):
            rng = EntityRng(seed, e)
            for field in ("start", "goal"):
                point = (
                    spread * (2.0 * rng.uniform() - 1.0),
                    spread * (2.0 * rng.uniform() - 1.0),
                    p.ceiling * (0.3 + 0.4 * rng.uniform()),
                )
                if field == "start":
                    s["body"][e, 0:3] = point
                else:
                    s["goal"][e] = point
        s["body"][:, 6] = 1.0
        s["energy"] = p.battery_capacity
        s["alive"] = 1
        s["prev_goal_dist"] = self._goal_distance()
        self._set_command(np.arange(n), None)
        s["table"]["id"] = NO_NEIGHBOR
        s["table"]["t_heard"] = -np.inf
        self.steps = 0
        self.pending: list[tuple] = []  # beacon batches (T, dst, src, pos, vel, t_sent)
        self._publish()

    def _publish(self) -> None:
        """The boundary snapshot: who hears whom during the next step."""
        s = self.states
        self.snap_pos = s["body"][:, 0:3].copy()
        self.snap_alive = s["alive"] != 0
        pos = self.snap_pos
        dx = pos[None, :, 0] - pos[:, None, 0]  # [sender, receiver]: other - me
        dy = pos[None, :, 1] - pos[:, None, 1]
        dz = pos[None, :, 2] - pos[:, None, 2]
        near = dx * dx + dy * dy + dz * dz <= self.p.comm_radius_sq
        near &= self.snap_alive[None, :] & self.snap_alive[:, None]
        np.fill_diagonal(near, False)
        self.edge_src, self.edge_dst = np.nonzero(near)

    def step(self, actions: np.ndarray, alive: np.ndarray | None = None) -> None:
        """One step with float32 ``actions[N, 4]``; ``alive`` selects who acts."""
        p, s = self.p, self.states
        n = p.num_uavs
        t_k = float(self.steps) * p.dt
        t_end = float(self.steps + 1) * p.dt
        # on_step_begin, then on_action for agents that act.
        s["crashed_step"] = 0
        s["near_misses_step"] = 0
        s["beacons_step"] = 0
        s["energy_step"] = 0.0
        s["t_step"] = t_k
        s["prev_goal_dist"] = self._goal_distance()
        self._set_command(np.arange(n), None)
        acting = s["alive"] != 0
        if alive is not None:
            acting &= np.asarray(alive).astype(bool)
        rows = np.flatnonzero(acting)
        self._set_command(rows, np.asarray(actions, dtype=np.float32).reshape(n, 4)[rows])

        for j in range(p.substeps):
            tau = t_k + float(j) * p.h
            self._deliver_before(tau)
            tie = self._take_batches(lambda t, tau=tau: t == tau)
            if tie is not None:
                early = tie[2] < tie[1]  # sender < receiver: handled before the substep
                self._deliver(*(a[early] for a in tie[1:]))
                self._substep(j, tau)
                self._deliver(*(a[~early] for a in tie[1:]))
            else:
                self._substep(j, tau)
        self._deliver_before(t_end)
        self.steps += 1
        self._publish()

    def _substep(self, j: int, tau: float) -> None:
        p, s = self.p, self.states
        rows = np.flatnonzero(s["alive"] != 0)
        if rows.size == 0:
            return
        if j % p.beacon_every == 0:
            sending = np.zeros(p.num_uavs, dtype=bool)
            sending[rows] = True
            keep = sending[self.edge_src]
            src, dst = self.edge_src[keep], self.edge_dst[keep]
            body = s["body"]
            self.pending.append(
                (
                    tau + p.comm_latency,
                    dst,
                    src,
                    body[src, 0:3].copy(),
                    body[src, 3:6].copy(),
                    np.full(len(src), tau),
                )
            )
        cmd = s["cmd"][rows]
        rate_cmd = p.max_rate * cmd[:, 1:4]
        body = self.rk4(tau, s["body"][rows], s["thrust_acc"][rows], rate_cmd)
        s["body"][rows] = body
        s["t_state"][rows] = s["t_step"][rows] + float(j + 1) * p.h
        used = s["power"][rows] * p.h
        energy = s["energy"][rows] - used
        s["energy_step"][rows] = s["energy_step"][rows] + used
        x, y, z = body[:, 0], body[:, 1], body[:, 2]
        ground = ~(z >= 0.0)
        out = ~ground & ~(
            (np.abs(x) <= p.arena_size) & (np.abs(y) <= p.arena_size) & (z <= p.ceiling)
        )
        empty = ~ground & ~out & (energy <= 0.0)
        s["energy"][rows] = np.where(energy < 0.0, 0.0, energy)
        cause = np.where(
            ground, GROUND, np.where(out, OUT_OF_BOUNDS, np.where(empty, BATTERY_EMPTY, 0))
        )
        dead = rows[cause != 0]
        s["alive"][dead] = 0
        s["crash_cause"][dead] = cause[cause != 0]
        s["crashed_step"][dead] = 1

    # -- beacons --------------------------------------------------------------------------------
    def _take_batches(self, select):
        """Remove and merge the pending batches whose arrival time passes ``select``."""
        taken = [b for b in self.pending if select(b[0])]
        if not taken:
            return None
        self.pending = [b for b in self.pending if not select(b[0])]
        return (taken[0][0],) + tuple(np.concatenate([b[i] for b in taken]) for i in range(1, 6))

    def _deliver_before(self, t: float) -> None:
        """Deliver every pending batch arriving before ``t``, in arrival order."""
        for arrival in sorted({b[0] for b in self.pending if b[0] < t}):
            batch = self._take_batches(lambda x, a=arrival: x == a)
            self._deliver(*batch[1:])

    def _deliver(self, dst, src, pos, vel, t_sent) -> None:
        """Beacons of one instant: per receiver in (sender, send time) order."""
        if len(dst) == 0:
            return
        order = np.lexsort((t_sent, src, dst))
        dst, src, pos, vel, t_sent = dst[order], src[order], pos[order], vel[order], t_sent[order]
        starts = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]])
        rank = np.arange(len(dst)) - np.repeat(starts, np.diff(np.r_[starts, len(dst)]))
        for r in range(int(rank.max()) + 1):
            sel = rank == r
            self._receive(dst[sel], src[sel], pos[sel], vel[sel], t_sent[sel])

    def _receive(self, recv, src, pos, vel, t_sent) -> None:
        """One beacon for each of distinct receivers ``recv`` (receive_beacon in C++)."""
        p, s = self.p, self.states
        live = s["alive"][recv] != 0
        recv, src, pos, vel, t_sent = recv[live], src[live], pos[live], vel[live], t_sent[live]
        if recv.size == 0:
            return
        s["beacons_step"][recv] += 1
        s["beacons_total"][recv] += 1
        m = p.max_neighbors
        table = s["table"][recv, :m]
        match = table["id"] == src[:, None].astype(np.uint32)
        slot = np.where(match.any(axis=1), match.argmax(axis=1), table["t_heard"].argmin(axis=1))
        entries = s["table"]
        entries["id"][recv, slot] = src
        entries["pad"][recv, slot] = 0
        entries["pos"][recv, slot] = pos
        entries["vel"][recv, slot] = vel
        entries["t_heard"][recv, slot] = t_sent
        lag = s["t_state"][recv] - t_sent
        body = s["body"][recv]
        dx = pos[:, 0] + vel[:, 0] * lag - body[:, 0]
        dy = pos[:, 1] + vel[:, 1] * lag - body[:, 1]
        dz = pos[:, 2] + vel[:, 2] * lag - body[:, 2]
        close = recv[dx * dx + dy * dy + dz * dz < p.safe_radius_sq]
        s["near_misses_step"][close] += 1
        s["near_misses_total"][close] += 1

    # -- boundary outputs -----------------------------------------------------------------------
    def _fresh(self) -> tuple[np.ndarray, np.ndarray]:
        p, s = self.p, self.states
        table = s["table"][:, : p.max_neighbors]
        fresh = (table["id"] != NO_NEIGHBOR) & (
            s["t_state"][:, None] - table["t_heard"] <= p.neighbor_timeout
        )
        return table, fresh

    def observations(self) -> np.ndarray:
        """float32 ``[N, 17 + 6 k]`` as AircraftModel::observe."""
        p, s = self.p, self.states
        n, k = p.num_uavs, p.k_neighbors
        body = s["body"]
        pos, vel = body[:, 0:3], body[:, 3:6]
        obs = np.zeros((n, OWN_OBS + 6 * k), dtype=np.float32)
        obs[:, 0:3] = _obs_value(pos / p.arena_size)
        obs[:, 3:6] = _obs_value(vel / VELOCITY_SCALE)
        obs[:, 6:10] = _obs_value(body[:, 6:10], 1.0)
        obs[:, 10:13] = _obs_value(body[:, 10:13] / p.max_rate)
        obs[:, 13:16] = _obs_value((s["goal"] - pos) / p.arena_size)
        obs[:, 16] = _obs_value(s["energy"] / p.battery_capacity, 1.0)
        table, fresh = self._fresh()
        d = table["pos"] - pos[:, None, :]
        dist = d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1] + d[..., 2] * d[..., 2]
        with np.errstate(invalid="ignore"):
            dist = np.where(fresh & (dist < np.inf), dist, np.inf)
        order = np.argsort(dist, axis=1, kind="stable")[:, :k]
        rows = np.arange(n)[:, None]
        chosen = table[rows, order]
        valid = dist[rows, order] < np.inf
        rel_pos = (chosen["pos"] - pos[:, None, :]) / p.comm_radius
        rel_vel = (chosen["vel"] - vel[:, None, :]) / VELOCITY_SCALE
        block = _obs_value(np.concatenate([rel_pos, rel_vel], axis=2))
        block[~valid] = 0.0
        obs[:, OWN_OBS:] = block.reshape(n, 6 * k)
        return obs

    def rewards(self) -> np.ndarray:
        """Progress to the goal minus near-miss, energy and crash penalties."""
        p, s = self.p, self.states
        crashed = (s["crashed_step"] != 0) & (s["crash_cause"] != BATTERY_EMPTY)
        return (
            s["prev_goal_dist"]
            - self._goal_distance()
            - p.near_miss_penalty * s["near_misses_step"].astype(np.float64)
            - p.energy_weight * s["energy_step"]
            - np.where(crashed, p.crash_penalty, 0.0)
        )

    def terminations(self) -> np.ndarray:
        """Dead UAVs."""
        return self.states["alive"] == 0

    def infos(self) -> np.ndarray:
        """int64 ``[N, 5]`` in INFO_KEYS order."""
        s = self.states
        _, fresh = self._fresh()
        return np.stack(
            [
                s["near_misses_step"].astype(np.int64),
                s["near_misses_total"].astype(np.int64),
                s["beacons_step"].astype(np.int64),
                fresh.sum(axis=1).astype(np.int64),
                s["crash_cause"].astype(np.int64),
            ],
            axis=1,
        )

    def state(self) -> np.ndarray:
        """float32 ``[8 N]`` per UAV: position / arena_size, velocity / 10, battery, alive."""
        s = self.states
        out = np.empty((self.p.num_uavs, 8), dtype=np.float32)
        out[:, 0:3] = _obs_value(s["body"][:, 0:3] / self.p.arena_size)
        out[:, 3:6] = _obs_value(s["body"][:, 3:6] / VELOCITY_SCALE)
        out[:, 6] = s["energy"] / self.p.battery_capacity
        out[:, 7] = s["alive"]
        return out.reshape(-1)
