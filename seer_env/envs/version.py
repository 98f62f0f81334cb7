"""An env version: one workload's env class under one declaration and its defaults.

A version is one row of ``seer_env.envs.VERSIONS`` (EnvPool style)::

    ("pcs_v1", PcsEnv, "pcs_v1", {"max_cycles": 96}, "time-varying traffic."),

The declaration (``seer_env.workloads``) gives the model parameters (names,
defaults, bounds, docs); ``seer_env.options`` gives the runtime options; the
row sets the version's name, where they differ its defaults of either, and the
line its version history shows. The three functions take exactly those
arguments (their signature says so, and a call with an unknown one is a
TypeError as for a plain function).

A version's module (``seer_env/envs/pcs_v1.py``) re-exports them, PettingZoo
style, under its own docstring::

    VERSION = VERSIONS["pcs_v1"]
    parallel_env, raw_env, env = VERSION.functions(__name__)
    __doc__ = VERSION.document(__doc__)

``document`` appends what is generated from the row, never stored: the
"Arguments" (the call, the parameters, the options, each with its default) and
the "Version history" of the workload's versions up to this one.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pettingzoo import AECEnv

from seer_env.aec import aec_env
from seer_env.env import SeerParallelEnv
from seer_env.options import option_names, option_parameters, options_doc
from seer_env.workloads import (
    arguments_doc,
    model_parameters,
    signature_line,
    validate_params,
    workload_spec,
    wrap_doc_line,
)

__all__ = ["EnvVersion", "VersionTable", "VersionedEnv"]


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
        changes: what this version changed, one line of its version history.
        earlier: the (name, changes) of the workload's earlier versions, newest first.

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
        changes: str = "",
        earlier: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.name = name
        #: The workload's versions up to this one, newest first: (name, changes).
        self.history = ((name, changes), *earlier)
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

    def document(self, doc: str | None) -> str:
        """``doc`` (the module's own text) with the generated Arguments and Version history."""
        history = "\n".join(
            "\n".join(wrap_doc_line(f"- {name.rsplit('_', 1)[1]}: {changes}"))
            for name, changes in self.history
        )
        return (
            f"{(doc or '').rstrip()}\n\n## Arguments\n\n{self.arguments_text()}\n\n"
            f"## Version history\n\n{history}\n"
        )


class VersionTable(Mapping[str, EnvVersion]):
    """Name -> ``EnvVersion``, from rows ``(name, env_class, declaration, defaults, changes)``.

    A version is built when first asked for: listing the names
    (``seer_env.env_names()``, at ``import seer_env``) reads no declaration, so
    a version reads its declaration as registered when it is first used.
    """

    def __init__(self, *rows: tuple[str, type, str, Mapping[str, Any], str]) -> None:
        self._rows = {row[0]: row for row in rows}
        if len(self._rows) != len(rows):
            raise ValueError(f"an env version is in the table twice: {[r[0] for r in rows]}")
        self._built: dict[str, EnvVersion] = {}

    def __getitem__(self, name: str) -> EnvVersion:
        if name not in self._built:
            row = self._rows[name]
            rows = list(self._rows.values())
            earlier = [(r[0], r[4]) for r in rows[: rows.index(row)] if r[1] is row[1]]
            self._built[name] = EnvVersion(*row, earlier=earlier[::-1])
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def env_class(self, name: str) -> type:
        """The env class of version ``name``, without building the version."""
        return self._rows[name][1]

    def __len__(self) -> int:
        return len(self._rows)
