"""Scaling out with Ray: a thread budget per env runner, env runners on two nodes, a crash.

One Ray cluster serves the module: ``ray.cluster_utils.Cluster`` starts a head
and a worker node on this machine, one CPU each, so two 1-CPU env runners must
land on different nodes and their budgets add up to the two CPUs. Every test
runs under a watchdog (``deadline``) and the fixture checks that no Ray
process outlives the module.
"""

import contextlib
import faulthandler
import math
import os
import signal
import sys
import time

import pytest
from envcases import SMALL, cycles

pytest.importorskip("ray.rllib")
import psutil  # noqa: E402 - a Ray dependency
import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402
from ray.tune.registry import register_env  # noqa: E402

import seer_env  # noqa: E402
from seer_env.integrations import rllib as seer_rllib  # noqa: E402
from seer_env.stpa import hardware  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")

ENV = "pcs_v0" if "pcs_v0" in seer_env.env_names() else seer_env.env_names()[0]
ENV_CONFIG = {**SMALL.get(ENV, {}), "max_cycles": cycles(ENV, 8), "seed": 0}
CRASH_ENV = "seer_test/crash_once"


class _Deadline(Exception):
    """A test ran past its time limit (Ray hung or was far too slow)."""


@contextlib.contextmanager
def deadline(seconds: int):
    """Raise ``_Deadline`` after ``seconds``; kill the run with tracebacks 60 s later."""

    def expire(signum, frame):
        raise _Deadline(f"ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    faulthandler.dump_traceback_later(seconds + 60, exit=True)  # if even the alarm is stuck
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


def _descendants() -> set[psutil.Process]:
    """Processes started from this one (Ray's GCS, raylets, workers), while they run."""
    return set(psutil.Process().children(recursive=True))


def _alive(process: psutil.Process) -> bool:
    try:  # is_running() also checks the pid was not reused
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(scope="module")
def two_nodes():
    """A head and a worker node, one CPU each; yields ``(cluster, node ids)``."""
    if ray.is_initialized():
        ray.shutdown()
    before = _descendants()
    cluster = None
    started: set[psutil.Process] = set()
    try:
        with deadline(150):
            cluster = Cluster(
                initialize_head=True,
                head_node_args={"num_cpus": 1, "include_dashboard": False},
            )
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes(timeout=60)
            ray.init(
                address=cluster.address,
                log_to_driver=False,
                configure_logging=False,
            )
            nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        assert len(nodes) == 2
        yield cluster, nodes
    finally:
        # Ray's workers are the raylets' children: list them before the raylets go, or
        # workers left behind would be reparented out of sight.
        started = _descendants() - before
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        leaked = []
        for _ in range(100):  # up to 20 s for Ray's processes to exit
            leaked = [p for p in started if _alive(p)]
            if not leaked:
                break
            time.sleep(0.2)
        assert started or cluster is None, "no Ray process seen: the leak check checked nothing"
        assert not leaked, f"Ray processes left behind: {[p.name() for p in leaked]}"


# -- the budget rules, without a cluster ---------------------------------------------------------
class _FakeRay:
    """Stands in for ``ray`` in ``sys.modules``: a worker holding ``cpus`` CPUs."""

    WORKER_MODE = 1

    def __init__(self, cpus, mode=1):
        self.cpus, self.mode = cpus, mode

    def is_initialized(self):
        return True

    def get_runtime_context(self):
        fake = self

        class Context:
            worker = type("Worker", (), {"mode": fake.mode})()

            def get_assigned_resources(self):
                return {} if fake.cpus is None else {"CPU": fake.cpus}

        return Context()


@pytest.mark.parametrize(
    ("cpus", "mode", "assigned", "usable"),
    [
        (1.0, 1, 1.0, 1),
        (1.5, 1, 1.5, 1),  # rounded down
        (0.25, 1, 0.25, 1),  # never below 1
        (None, 1, 0.0, 1),  # a worker that reserved no CPU
        (64.0, 1, 64.0, None),  # more than the machine: affinity caps it
        (1.0, 0, None, None),  # the driver (SCRIPT_MODE): no grant
    ],
)
def test_ray_grant_rules(monkeypatch, cpus, mode, assigned, usable):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were never imported
    machine = hardware.usable_threads()
    monkeypatch.setitem(sys.modules, "ray", _FakeRay(cpus, mode))
    assert hardware.ray_assigned_cpus() == assigned
    assert hardware.usable_threads() == (machine if usable is None else usable)
    assert hardware.machine_features()["ray_assigned_cpus"] == assigned


def test_ray_not_imported_means_no_grant(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if never imported
    assert hardware.ray_assigned_cpus() is None


def test_driver_env_threads_follow_whether_the_driver_samples():
    from ray.rllib.env.env_context import EnvContext

    create = seer_rllib.env_creator(ENV)
    # remote runners sample: the driver's env only serves RLlib's space lookups
    spaces_only = create(EnvContext(dict(ENV_CONFIG), worker_index=0, num_workers=2)).par_env
    assert spaces_only.runtime.num_threads == 1 and spaces_only.runtime.stpa is None
    # num_env_runners=0: the driver samples, STPA sizes its pool over the driver's CPUs
    sampling = create(EnvContext(dict(ENV_CONFIG), worker_index=0, num_workers=0)).par_env
    assert sampling.runtime.stpa is not None
    assert sampling.runtime.num_threads <= hardware.usable_threads()


# -- the thread budget of a Ray worker ---------------------------------------------------------
@ray.remote
def _budget_and_env_pool():
    env = seer_rllib.env_creator(ENV)(dict(ENV_CONFIG))  # its constructor resets: STPA decides
    runtime = env.par_env.runtime
    return {
        "assigned": hardware.ray_assigned_cpus(),
        "usable": hardware.usable_threads(),
        "runner_threads": seer_rllib.env_runner_threads(),
        "num_threads": runtime.num_threads,
        "stpa": runtime.stpa,
    }


def test_outside_ray_workers_there_is_no_grant(two_nodes):
    assert hardware.ray_assigned_cpus() is None  # the driver reserves no CPU
    assert hardware.usable_threads() >= 1
    assert seer_rllib.env_runner_threads() == 1


@pytest.mark.parametrize("cpus", [1, 0.5])
def test_a_workers_grant_caps_stpa(two_nodes, cpus):
    with deadline(150):  # the first task starts a worker process: ~15 s on a busy machine
        got = ray.get(_budget_and_env_pool.options(num_cpus=cpus).remote(), timeout=120)
    assert got["assigned"] == cpus
    # affinity is the whole machine; the grant (rounded down, at least 1) is the budget
    assert got["usable"] == 1 and got["runner_threads"] == 1
    assert got["num_threads"] == 1
    assert got["stpa"]["source"] == "static" and "1 usable CPU" in got["stpa"]["reason"]
    assert got["stpa"]["features"]["ray_assigned_cpus"] == cpus


# -- PPO on two nodes ----------------------------------------------------------------------------
def _ppo_config(env, batch=64):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    return (
        PPOConfig()
        .environment(env, env_config=dict(ENV_CONFIG))
        .framework("torch")
        .env_runners(
            num_env_runners=2,
            num_cpus_per_env_runner=1,  # one per node: the nodes have one CPU each
            rollout_fragment_length="auto",
            sample_timeout_s=45,
        )
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=batch, minibatch_size=batch // 2, num_epochs=1)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[8]))
        .multi_agent(
            policies={"shared"},
            policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared",
            count_steps_by="agent_steps",
        )
        .fault_tolerance(
            restart_failed_env_runners=True,
            delay_between_env_runner_restarts_s=0.0,
            env_runner_health_probe_timeout_s=20,
        )
        .debugging(seed=0, log_level="ERROR")
    )


@pytest.mark.slow
def test_ppo_samples_from_runners_on_both_nodes(two_nodes):
    _, nodes = two_nodes
    seer_rllib.register([ENV])
    with deadline(240):  # a hang guard: ~50 s on a busy 2-core machine
        algo = _ppo_config(ENV).build_algo()
        try:
            result = algo.train()
            runners = seer_rllib.describe_env_runners(algo, timeout_s=30)
        finally:
            algo.stop()
    assert [r["worker_index"] for r in runners] == [1, 2]
    assert {r["node_id"] for r in runners} == nodes  # one runner per node
    for runner in runners:
        # each runner's env sampled, with a pool STPA sized within its 1-CPU grant
        (env,) = runner["envs"]
        assert env["env_steps"] > 0
        assert runner["ray_assigned_cpus"] == 1.0 and env["num_threads"] == 1
        assert env["stpa_source"] == "static"
    # two runners on one machine: their budgets add up to no more than its CPUs
    assert sum(r["usable_threads"] for r in runners) <= len(hardware.allowed_cpus())
    sampled = result["env_runners"]
    assert sum(sampled["num_agent_steps_sampled"].values()) >= 64
    assert math.isfinite(result["learners"]["shared"]["total_loss"])


def _crash_once(marker: str, at_step: int):
    """Env creator whose env raises at its ``at_step``-th step, once, in env runner 1 only.

    ``marker`` (a file) makes it once across processes: the restarted runner
    finds it and does not crash again. A closure, so that cloudpickle ships
    it by value (Ray's workers cannot import this test module).
    """
    create = seer_rllib.env_creator(ENV)

    def creator(config):
        env = create(config)
        if getattr(config, "worker_index", 0) == 1:
            step = env.step

            def crashing_step(actions):
                if env.env_steps + 1 >= at_step and not os.path.exists(marker):
                    with open(marker, "w") as f:
                        f.write(f"{os.getpid()}\n")
                    raise RuntimeError(f"injected crash at step {at_step}")
                return step(actions)

            env.step = crashing_step
        return env

    return creator


@pytest.mark.slow
def test_a_crashed_env_runner_is_restarted_and_training_goes_on(two_nodes, tmp_path):
    marker = tmp_path / "crashed"
    register_env(CRASH_ENV, _crash_once(str(marker), at_step=3))
    with deadline(300):  # a hang guard: ~65-95 s on a busy 2-core machine
        algo = _ppo_config(CRASH_ENV).build_algo()
        group = algo.env_runner_group
        try:
            pids = {r["worker_index"]: r["pid"] for r in seer_rllib.describe_env_runners(algo)}
            first = algo.train()  # runner 1 crashes; runner 2 fills the batch
            assert marker.exists() and int(marker.read_text()) == pids[1]
            # Ray restarts the runner's process; RLlib takes it back once it answers a probe
            while group.num_healthy_remote_workers() < 2:
                algo.restore_env_runners(group)
                time.sleep(0.5)
            second = algo.train()  # with both runners again
            restarts = group.num_remote_worker_restarts()
            runners = seer_rllib.describe_env_runners(algo, timeout_s=30)
        finally:
            algo.stop()
    assert restarts >= 1
    by_index = {r["worker_index"]: r for r in runners}
    assert by_index[1]["pid"] != pids[1]  # a new process ...
    assert by_index[1]["envs"][0]["env_steps"] > 0  # ... that sampled in the second iteration
    assert by_index[2]["pid"] == pids[2]
    for result in (first, second):
        assert sum(result["env_runners"]["num_agent_steps_sampled"].values()) >= 64
        assert math.isfinite(result["learners"]["shared"]["total_loss"])
