"""``check_contract``: run a model in checked mode and report what it breaks."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

import seer_env
from seer_env.testing.arguments import seed_list, step_count
from seer_env.testing.equivalence import EnvFn
from seer_env.testing.trajectory import Policy, compare_frames, random_policy, step_outputs


@dataclasses.dataclass(frozen=True)
class Violation:
    """One thing the model got wrong."""

    rule: str  # "event-locality", "handler", "event budget", "outputs", "determinism"
    seed: int
    step: int  # 0: reset
    message: str
    entity: int | None = None
    kind: str | None = None
    time: float | None = None


@dataclasses.dataclass
class Coverage:
    """What checked runs exercised: handler calls by hook and by event kind.

    Read from the runtime (``Simulation.checked_counts``), which counts the
    handlers a contract check runs one at a time; summed over the runs read.
    """

    on_init: int = 0
    on_step_begin: int | None = 0  # None: the model has no on_step_begin
    on_action: int = 0
    events: dict[str, int] = dataclasses.field(default_factory=dict)  # every declared kind

    def add(self, counts: dict) -> None:
        """Add one run's ``checked_counts()``."""
        self.on_init += counts["on_init"]
        if counts["on_step_begin"] is None:
            self.on_step_begin = None
        elif self.on_step_begin is not None:
            self.on_step_begin += counts["on_step_begin"]
        self.on_action += counts["on_action"]
        for kind, n in counts["events"].items():
            self.events[kind] = self.events.get(kind, 0) + n

    def never_ran(self) -> list[str]:
        """The hooks and declared event kinds that no checked run called, in declaration order."""
        hooks = [("on_init", self.on_init), ("on_step_begin", self.on_step_begin)]
        hooks.append(("on_action", self.on_action))
        found = [name for name, n in hooks if n == 0]
        return found + [f"event kind {kind!r}" for kind, n in self.events.items() if n == 0]

    def __str__(self) -> str:
        hooks = f"on_init {self.on_init}, "
        if self.on_step_begin is not None:
            hooks += f"on_step_begin {self.on_step_begin}, "
        hooks += f"on_action {self.on_action}"
        events = ", ".join(f"{kind} {n}" for kind, n in self.events.items())
        return f"{hooks}; events: {events or 'none declared'}"


@dataclasses.dataclass
class ContractReport:
    """What ``check_contract`` found; ``ok`` when nothing."""

    violations: list[Violation] = dataclasses.field(default_factory=list)
    seeds: int = 0
    steps: int = 0
    #: What the first run of each seed exercised (None: the env hides its Simulation).
    coverage: Coverage | None = None

    @property
    def ok(self) -> bool:
        """True when no violation was found."""
        return not self.violations

    def __str__(self) -> str:
        head = f"contract check: {self.seeds} seeds, {self.steps} steps"
        if self.ok:
            return f"{head}: no violations"
        lines = [f"{head}: {len(self.violations)} violation(s)"]
        for v in self.violations:
            where = f"seed {v.seed}, " + ("reset" if v.step == 0 else f"step {v.step}")
            lines.append(f"  [{v.rule}] {where}: {v.message}")
        return "\n".join(lines)


_RUNTIME_ERRORS = (
    (seer_env.ContractViolation, "event-locality"),
    (seer_env.HandlerError, "handler"),
    (seer_env.EventBudgetExceeded, "event budget"),
)


def _output_problems(env, outputs: dict) -> list[str]:
    problems = []
    for agent, obs in outputs.get("observations", {}).items():
        if not env.observation_space(agent).contains(obs):
            problems.append(f"observation of {agent} is outside observation_space: {obs}")
            break
    for agent, reward in outputs.get("rewards", {}).items():
        if not isinstance(reward, float) or not math.isfinite(reward):
            problems.append(f"reward of {agent} is not a finite float: {reward!r}")
            break
    return problems


def _run(env, seed: int, steps: int, policy: Policy, report: ContractReport):
    """One checked episode: its frames (for the determinism check) and its step count."""
    frames, step = [], 0
    try:
        observations, infos = env.reset(seed=seed)
        outputs = {"observations": observations, "infos": infos}
        frames.append(("reset", outputs))
        for problem in _output_problems(env, outputs):
            report.violations.append(Violation("outputs", seed, 0, problem))
        for step in range(1, steps + 1):
            if not env.agents:
                break
            outputs = step_outputs(env.step(policy(seed, step - 1, env)))
            frames.append((f"step {step}", outputs))
            for problem in _output_problems(env, outputs):
                report.violations.append(Violation("outputs", seed, step, problem))
    except tuple(e for e, _ in _RUNTIME_ERRORS) as error:
        rule = next(r for e, r in _RUNTIME_ERRORS if isinstance(error, e))
        report.violations.append(
            Violation(
                rule,
                seed,
                step,
                str(error),
                getattr(error, "entity", None),
                getattr(error, "kind", None),
                getattr(error, "time", None),
            )
        )
        return None, step
    return frames, step


def _add_coverage(report: ContractReport, env) -> None:
    """Add what ``env``'s checked run exercised to ``report.coverage`` (None once unknown)."""
    sim = getattr(getattr(env, "unwrapped", env), "sim", None)
    counts = getattr(sim, "checked_counts", None)
    if report.coverage is None or counts is None:
        report.coverage = None
        return
    report.coverage.add(counts())


def check_contract(
    env_fn: EnvFn,
    *,
    seeds: Iterable[int] = (0,),
    steps: int = 20,
    policy: Policy | None = None,
    strict: bool = True,
) -> ContractReport:
    """Run ``env_fn(check=True, executor="serial", num_threads=1)`` and report violations.

    Checked mode makes the runtime verify, after every handler, that no other
    entity's state changed, and that the snapshot did not change during a
    step; the cheap checks (lookahead, targets, finite times) always run.
    Besides those this reports handler exceptions, event-budget overruns,
    observations outside their space, non-finite rewards, and
    non-determinism (each seed runs twice and must repeat itself exactly: no
    global RNG, clocks or iteration over unordered containers).

    Args:
        env_fn: builds a fresh env from keyword arguments.
        seeds: episode seeds; each runs twice.
        steps: steps per episode (fewer if every agent is done).
        policy: ``policy(seed, step, env) -> actions`` (default: ``random_policy``).
        strict: raise ``AssertionError`` with the report when anything is found.

    Returns:
        The ``ContractReport`` (``report.ok``, ``report.violations``, and
        ``report.coverage``: the handlers the checked runs called, by hook
        and event kind).

    Raises:
        ValueError: ``seeds=()`` or ``steps=0``: a report of no seed or no
            step would say "no violations" having checked nothing.
    """
    seeds, steps = seed_list(seeds), step_count(steps)
    policy = policy or random_policy
    report = ContractReport(coverage=Coverage())
    for seed in seeds:
        report.seeds += 1
        env = env_fn(check=True, executor="serial", num_threads=1)
        first, ran = _run(env, seed, steps, policy, report)
        _add_coverage(report, env)
        report.steps += ran
        if first is None:
            continue
        again, _ = _run(
            env_fn(check=True, executor="serial", num_threads=1), seed, steps, policy, report
        )
        if again is None:
            continue
        found = compare_frames(first, again)
        if found:
            step = 0 if found[0] == "reset" else int(found[0].split()[-1])
            report.violations.append(
                Violation(
                    "determinism",
                    seed,
                    step,
                    f"a second run with the same seed differs at {found[0]}: {found[1]}",
                )
            )
    if strict and not report.ok:
        raise AssertionError(str(report))
    return report
