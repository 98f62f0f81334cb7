"""An env version: one workload's env class under one declaration and its defaults.

A built-in env module (``seer_env/envs/pcs_v1.py``) is its documentation and
three lines over the workload's one env class, PettingZoo style::

    VERSION = EnvVersion("pcs_v1", PcsEnv, declaration="pcs_v1", defaults={"max_cycles": 96})
    parallel_env, raw_env, env = VERSION.functions(__name__)
    __doc__ = VERSION.document(__doc__)

The declaration (``seer_env.workloads``) gives the model parameters (names,
defaults, bounds, docs); ``seer_env.options`` gives the runtime options; the
version sets its name and, where they differ, defaults of either (a version
that only changes a default is a module like the one above). The three
functions take exactly those arguments (their signature says so, and a call
with an unknown one is a TypeError as for a plain function).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pettingzoo import AECEnv

from seer_env.aec import aec_env
from seer_env.env import SeerParallelEnv
from seer_env.options import option_names, option_parameters, options_doc
from seer_env.workloads import (
    ARGUMENTS_BEGIN,
    ARGUMENTS_END,
    arguments_doc,
    model_parameters,
    signature_line,
    validate_params,
    workload_spec,
)

__all__ = ["EnvVersion", "VersionedEnv"]


class VersionedEnv(SeerParallelEnv):
    """A workload's env class, built by its versions (``env_class(version, config, **options)``)."""

    def __init__(self, version: EnvVersion, config: dict[str, Any], **options: Any) -> None:
        """The env of ``version`` (its name and declaration) for the validated ``config``.

        Args:
            version: the ``EnvVersion``.
            config: the validated model config.
            **options: the runtime options (``seer_env.options``).
        """
        self.metadata = {**type(self).metadata, "name": version.name}
        super().__init__(version.declaration, config, **options)


class EnvVersion:
    """The env ``name``: ``env_class`` built from ``declaration`` with ``defaults``.

    Args:
        name: the env's name (``metadata["name"]``, the module name, ``seer_env.make``'s key).
        env_class: the workload's env class; built as ``env_class(version, config, **options)``.
        declaration: the registered declaration whose parameters the env takes.
        defaults: this version's defaults where they differ from the declaration's
            (model parameters) or ``seer_env.options.RUNTIME_OPTIONS`` (e.g. ``max_cycles``).

    Raises:
        ValueError: a default for neither a declared parameter nor an option, or
            outside the parameter's bounds.
    """

    def __init__(
        self,
        name: str,
        env_class: type,
        declaration: str,
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.env_class = env_class
        self.declaration = declaration
        defaults = dict(defaults or {})
        # The declaration with this version's parameter defaults (docs and signature show them).
        self.spec = copy.deepcopy(workload_spec(declaration))
        self._param_names = [p["name"] for p in self.spec["params"]]
        unknown = set(defaults) - set(self._param_names) - set(option_names())
        if unknown:
            raise ValueError(
                f"defaults names neither a parameter of {declaration!r} nor a runtime option: "
                f"{sorted(unknown)}"
            )
        for p in self.spec["params"]:
            if p["name"] in defaults:
                p["default"] = defaults.pop(p["name"])
                validate_params({"params": [p]}, {p["name"]: p["default"]})
        self.option_defaults = defaults
        self.signature = inspect.Signature(
            [*model_parameters(self.spec), *option_parameters(**defaults)]
        )

    def parallel_env(self, *args: Any, **kwargs: Any) -> Any:
        """The ParallelEnv for a call against ``self.signature``."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        params = {n: values.pop(n) for n in self._param_names}
        return self.env_class(self, validate_params(self.spec, params), **values)

    def functions(self, module: str) -> tuple[Callable, Callable, Callable]:
        """``parallel_env``, ``raw_env`` and ``env`` of the version's module ``module``."""

        def parallel_env(*args: Any, **kwargs: Any) -> Any:
            return self.parallel_env(*args, **kwargs)

        def raw_env(*args: Any, **kwargs: Any) -> AECEnv:
            return aec_env(self.parallel_env(*args, **kwargs), enforce_order=False)

        def env(*args: Any, **kwargs: Any) -> AECEnv:
            return aec_env(self.parallel_env(*args, **kwargs))

        docs = {
            parallel_env: f"The {self.name} ParallelEnv; arguments as in the module docstring.",
            raw_env: f"{self.name} as an AEC env without wrappers (``parallel_to_aec_wrapper``).",
            env: f"{self.name} as an AEC env (``parallel_to_aec``: order enforced).",
        }
        for fn, doc in docs.items():
            fn.__module__ = module
            fn.__qualname__ = fn.__name__
            fn.__doc__ = doc
            fn.__signature__ = self.signature  # type: ignore[attr-defined]
        return parallel_env, raw_env, env

    def arguments_text(self) -> str:
        """The generated "Arguments" text: the call, the model parameters, the options."""
        return (
            f"{signature_line(f'{self.name}.parallel_env', self.signature)}\n\n"
            f"{arguments_doc(self.spec)}\n{options_doc(**self.option_defaults)}"
        )

    def document(self, doc: str) -> str:
        """``doc`` with the text between the declared-arguments markers regenerated."""
        if ARGUMENTS_BEGIN not in doc or ARGUMENTS_END not in doc:
            raise ValueError("docstring lacks the declared-arguments markers")
        head, rest = doc.split(ARGUMENTS_BEGIN, 1)
        tail = rest.split(ARGUMENTS_END, 1)[1]
        return f"{head}{ARGUMENTS_BEGIN}\n{self.arguments_text()}\n{ARGUMENTS_END}{tail}"
