"""The runtime options every env takes, declared once.

A model's own parameters come from its declaration (``seer_env.workloads``);
the options below are the env's: how long an episode runs, how the runtime
runs a step, how it is checked and rendered. ``SeerParallelEnv``, every
built-in env version, the vector envs and the generated "Arguments" docs read
them from ``RUNTIME_OPTIONS``; a new option is one entry here plus the code
that acts on it.
"""

from __future__ import annotations

import dataclasses
import inspect
import textwrap
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DEFAULT_CHECK_STEPS",
    "RUNTIME_OPTIONS",
    "RuntimeOption",
    "option_names",
    "option_parameters",
    "options_doc",
    "resolve_options",
]

# Steps of the first episode run with the contract checks by default
# (``check_steps``): a breach shows once instead of silently. Two checked steps
# cost under 1% of a pcs_v0 or aircraft_v0 episode (docs/reliability.md).
DEFAULT_CHECK_STEPS = 2
_DOC_WIDTH = 79  # generated docstring lines wrap here


@dataclasses.dataclass(frozen=True)
class RuntimeOption:
    """One env option: its name, default, type annotation (as text) and one-line doc."""

    name: str
    default: Any
    annotation: str
    doc: str


RUNTIME_OPTIONS: tuple[RuntimeOption, ...] = (
    RuntimeOption(
        "max_cycles",
        1000,
        "int",
        "steps until every agent is truncated, >= 1 (an env version sets its own default)",
    ),
    RuntimeOption(
        "seed",
        None,
        "int | None",
        "seed of the first ``reset()`` without one (None: fresh entropy); ``reset()`` "
        "without a seed afterwards continues deterministically from the previous "
        "episode's seed",
    ),
    RuntimeOption(
        "executor",
        None,
        "str | None",
        "a name from ``seer_env.executor_names()``, or None: chosen with ``num_threads`` "
        '(``"serial"`` for 1 thread, else ``"parallel"``; STPA\'s choice for ``"auto"``); '
        "outputs never depend on it",
    ),
    RuntimeOption(
        "num_threads",
        "auto",
        "int | str",
        'threads of the executor (the calling thread included), or ``"auto"``: STPA '
        "chooses executor and pool size at the first ``reset()`` from a short preflight "
        "(``env.runtime.stpa`` says what and why; docs/stpa.md)",
    ),
    RuntimeOption(
        "check",
        False,
        "bool",
        "run the contract checks on every step (no handler writes another entity's state "
        "or the snapshot; one handler at a time; about 1.3-3x an unchecked serial step)",
    ),
    RuntimeOption(
        "check_steps",
        DEFAULT_CHECK_STEPS,
        "int",
        "run the same checks on the first ``check_steps`` steps after the first "
        "``reset()`` only (0: off), so that a breach raises ``ContractViolation`` at once; "
        "outputs are byte-identical either way",
    ),
    RuntimeOption(
        "event_budget",
        50_000_000,
        "int",
        "most events one step may handle (0: unlimited)",
    ),
    RuntimeOption(
        "render_mode",
        None,
        "str | None",
        "None or one of the env's ``metadata['render_modes']``",
    ),
    RuntimeOption(
        "decisions",
        None,
        "str | None",
        'how agents act: None as the model declares (``"lockstep"``: every live agent at '
        'every step; ``"windows"``: an agent when its events ask, the requests of one '
        'lookahead window answered together), or ``"one_at_a_time"``: each request '
        "answered before the next event runs (the reference the windows equal byte for "
        "byte; serial executor); docs/decisions.md",
    ),
)

_BY_NAME = {o.name: o for o in RUNTIME_OPTIONS}


def option_names() -> tuple[str, ...]:
    """The option names, in declaration order."""
    return tuple(_BY_NAME)


def option_parameters(**defaults: Any) -> list[inspect.Parameter]:
    """The options as keyword parameters, with ``defaults`` overriding declared ones."""
    unknown = set(defaults) - set(_BY_NAME)
    if unknown:
        raise ValueError(f"not runtime options: {sorted(unknown)}")
    return [
        inspect.Parameter(
            o.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=defaults.get(o.name, o.default),
            annotation=o.annotation,
        )
        for o in RUNTIME_OPTIONS
    ]


def resolve_options(options: Mapping[str, Any], **defaults: Any) -> dict[str, Any]:
    """Every option's value: ``options`` over ``defaults`` over the declared defaults.

    Raises:
        TypeError: an option that is not declared (as a plain function would).
    """
    unknown = [k for k in options if k not in _BY_NAME]
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    values = {o.name: defaults.get(o.name, o.default) for o in RUNTIME_OPTIONS}
    values.update(options)
    return values


def options_doc(**defaults: Any) -> str:
    """The options as a Markdown list (name, doc, default), as env docs show them."""
    lines = []
    for o in RUNTIME_OPTIONS:
        default = defaults.get(o.name, o.default)
        line = f"- ``{o.name}``: {o.doc}; default ``{default!r}``."
        lines += textwrap.wrap(line, _DOC_WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(lines)
