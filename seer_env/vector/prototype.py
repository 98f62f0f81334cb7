"""The instance a vector env copies: an env by name, or a model's generic env; a copy's options."""

from __future__ import annotations

from seer_env import _core, stpa
from seer_env.env import SeerParallelEnv
from seer_env.model_source import is_numba_model
from seer_env.models.numba import NumbaModel
from seer_env.options import option_names
from seer_env.registry import env_names
from seer_env.registry import make as make_env
from seer_env.vector.decisions import declares_decisions


def prototype(name: str | type[NumbaModel], config: dict) -> SeerParallelEnv:
    """One instance: the env ``name`` (``seer_env.env_names()``), or a model's generic env.

    A model is a registered C++ model (``seer_env.model_names()``: a built-in's
    or a plugin's, as ``SeerParallelEnv`` takes it) or a compiled NumbaModel;
    its keywords are the runtime options (``seer_env.options``) and its parameters.
    """
    if declares_decisions(name):
        raise ValueError(
            f"{name!r} has its agents act when their events ask (decisions); SeerVectorEnv "
            "and SeerAsyncVectorEnv step models whose live agents all act at every step: "
            "seer_env.vector.make(name, ...) gives its SeerDecisionVectorEnv"
        )
    if isinstance(name, str) and name not in env_names() and name in _core.model_names():
        pass  # a registered model without an env module: its generic env, below
    elif not is_numba_model(name):
        if isinstance(name, str) and name not in env_names():
            raise ValueError(
                f"name must be an env ({env_names()}) or a registered model "
                f"({_core.model_names()}), or a NumbaModel subclass, got {name!r}"
            )
        return make_env(name, **config)
    options = {k: config.pop(k) for k in option_names() if k in config}
    proto = SeerParallelEnv(name, config, **options)
    config.update(options)  # kept whole, as for a named env
    return proto


def batch_options(options: dict) -> dict:
    """``executor`` and ``num_threads`` for a batch of copies (``from_snapshot``), checked."""
    unknown = sorted(set(options) - {"executor", "num_threads"})
    if unknown:
        raise TypeError(f"unexpected keyword arguments {unknown}: executor and num_threads only")
    chosen = {k: v for k, v in options.items() if v is not None}
    executor = chosen.get("executor")
    if executor is not None and executor not in _core.executor_names():
        raise ValueError(f"executor must be one of {_core.executor_names()}, got {executor!r}")
    if "num_threads" in chosen:
        threads = stpa.parse_num_threads(chosen["num_threads"])
        if threads == stpa.AUTO:
            raise ValueError('num_threads="auto" is not for copies: the env\'s choice is kept')
        chosen["num_threads"] = threads
        chosen.setdefault("executor", stpa.default_executor(threads))
    return chosen
