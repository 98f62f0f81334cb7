"""seer_env: one step of a large multi-agent environment, run in parallel on CPU threads.

Every step is a bounded stream of timestamped events. Under the event-locality
contract (entity-local writes, cross-entity effects as future events) the C++
runtime runs independent events on a thread pool and returns exactly the bytes
a serial run returns.
"""

from seer_env import _core
from seer_env._core import (
    ContractViolation,
    EventBudgetExceeded,
    HandlerError,
    Simulation,
    executor_names,
    model_names,
)
from seer_env._version import __version__
from seer_env.decision_env import SeerDecisionEnv
from seer_env.env import RuntimeInfo, SeerParallelEnv
from seer_env.models.numba import NumbaCompileError, NumbaModel, kernel
from seer_env.models.python_model import PythonModel
from seer_env.registry import env_names, make
from seer_env.sdk import get_cmake_dir, get_include, register_cpp_model
from seer_env.stpa import OversubscriptionWarning

__all__ = [
    "ContractViolation",
    "EventBudgetExceeded",
    "HandlerError",
    "NumbaCompileError",
    "NumbaModel",
    "OversubscriptionWarning",
    "PythonModel",
    "RuntimeInfo",
    "SeerDecisionEnv",
    "SeerParallelEnv",
    "Simulation",
    "__version__",
    "env_names",
    "executor_names",
    "get_cmake_dir",
    "get_include",
    "kernel",
    "make",
    "model_names",
    "register_cpp_model",
]

# Exceptions are created inside the extension; give them their public home.
for _name in ("ContractViolation", "EventBudgetExceeded", "HandlerError"):
    getattr(_core, _name).__module__ = "seer_env"
del _name

# gymnasium.make("seer_env/pcs_v1") and gymnasium.make_vec(...) after `import seer_env`.
# env.fork() returns a vector env, which is built over the env: wired here, so
# that seer_env.env never imports the vector package that imports it.
from seer_env.vector import SeerVectorEnv as _SeerVectorEnv  # noqa: E402

SeerParallelEnv._fork_batch = _SeerVectorEnv.from_snapshot
del _SeerVectorEnv

from seer_env.integrations.gymnasium_registration import register_envs as _register_envs  # noqa: E402

_register_envs()
del _register_envs
