"""The C++ model SDK: build a model against the runtime, register it, use it.

A model compiled in your own extension module (see ``seer/python_plugin.hpp``
and ``examples/custom_model_cpp``) exports a ``model_plugin`` capsule;
``register_cpp_model`` adds its factory to the registry inside
``seer_env._core``, after which ``SeerParallelEnv(name, config)`` builds it like
a built-in model. Both modules must be built with the same C++ ABI (same
compiler family and standard library); registration checks what it can and
refuses a mismatch. Details and the reasons for this design:
``docs/custom-models.md``.

``python -m seer_env.sdk.scaffold new-cpp pkg.module:Prototype DEST`` writes
the C++ project of a ``PythonModel`` prototype (``scaffold.py``, from the
files in ``templates/``).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from seer_env import _core

__all__ = ["get_cmake_dir", "get_include", "register_cpp_model"]

_PACKAGE = Path(__file__).resolve().parent.parent  # seer_env/


def get_include() -> str:
    """Directory holding ``seer/*.hpp`` (add it to your compiler's include path)."""
    installed = _PACKAGE / "include"
    if (installed / "seer" / "model.hpp").exists():
        return str(installed)
    return str(_PACKAGE.parent / "cpp" / "include")  # source checkout


def get_cmake_dir() -> str:
    """Directory of ``seer_envConfig.cmake``: pass it as ``-Dseer_env_DIR=...``."""
    return str(_PACKAGE / "cmake")


def register_cpp_model(name: str, plugin: Any) -> None:
    """Register a compiled model under ``name`` (``SeerParallelEnv(name, ...)``).

    Args:
        name: registry name; an existing name (your own, re-registered) is replaced.
        plugin: the extension module built with ``SEER_MODEL_MODULE``, or its
            ``model_plugin`` capsule.

    Raises:
        ValueError: ``plugin`` is not a seer_env model plugin, or was built with a
            C++ ABI different from this seer_env's.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if isinstance(plugin, ModuleType):
        if not hasattr(plugin, "model_plugin"):
            raise ValueError(
                f"plugin module {plugin.__name__!r} has no model_plugin "
                "(was it built with SEER_MODEL_MODULE?)"
            )
        plugin = plugin.model_plugin
    _core.register_plugin(name, plugin)
