"""What a simulation runs: a registered C++ model, or a ``NumbaModel`` / ``PythonModel`` class.

The env, the vector env and STPA's preflight copies all build their
``_core.Simulation`` / ``_core.VectorSimulation`` here, so a compiled
``NumbaModel`` runs wherever a C++ model does: on any executor, in a batch,
and with ``num_threads="auto"``.
"""

from __future__ import annotations

from typing import Any

from seer_env import _core
from seer_env.models.numba import NumbaModel
from seer_env.models.python_model import PythonModel

#: A registered model name (``seer_env.model_names()``) or a model class.
ModelSource = str | type[PythonModel] | type[NumbaModel]


def is_numba_model(model: Any) -> bool:
    """``model`` is a ``NumbaModel`` subclass."""
    return isinstance(model, type) and issubclass(model, NumbaModel)


def _check(model: Any) -> None:
    if isinstance(model, str) or is_numba_model(model):
        return
    if not (isinstance(model, type) and issubclass(model, PythonModel)):
        raise ValueError(
            f"model must be a registered model name or a PythonModel or NumbaModel "
            f"subclass, got {model!r}"
        )


def runs_on_threads(model: ModelSource, config: dict) -> bool:
    """Whether ``model`` may run on worker threads: C++ models and compiled NumbaModels.

    Python handlers (a ``PythonModel``, a ``NumbaModel`` with ``compiled=False``)
    hold the GIL and run serially; compiled handlers never take it.
    """
    _check(model)
    if isinstance(model, str):
        return True
    return is_numba_model(model) and config.get("compiled", True) is True


def model_key(model: ModelSource) -> str:
    """The model's name in caches and reports: its registered name, or ``module.qualname``."""
    _check(model)
    return model if isinstance(model, str) else f"{model.__module__}.{model.__qualname__}"


def _runtime_model(model: type, config: dict):
    if is_numba_model(model):
        return model.from_config(config).runtime_model()
    return model.from_config(config)


def new_simulation(model: ModelSource, config: dict, **options: Any) -> _core.Simulation:
    """A ``_core.Simulation`` of ``model`` with ``config`` and the Simulation ``options``."""
    _check(model)
    if isinstance(model, str):
        return _core.Simulation(model, config, **options)
    return _core.Simulation(_runtime_model(model, config), **options)


def new_vector_simulation(
    model: ModelSource, config: dict, num_envs: int, **options: Any
) -> _core.VectorSimulation:
    """``num_envs`` instances of ``model`` (a registered name or a compiled NumbaModel)."""
    _check(model)
    if isinstance(model, str):
        return _core.VectorSimulation(model, config, num_envs, **options)
    if not runs_on_threads(model, config):
        raise ValueError(
            "a vector env runs registered models and compiled NumbaModels: Python handlers "
            f"hold the GIL (run {model.__name__} with compiled=False in a SeerParallelEnv), "
            f"got {model_key(model)} with compiled={config.get('compiled')!r}"
        )
    return _core.VectorSimulation(_runtime_model(model, config), {}, num_envs, **options)
