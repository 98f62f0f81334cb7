"""What every model written in Python declares and sets, whatever runs its handlers.

``PythonModel`` (handlers as Python methods) and ``NumbaModel`` (handlers
numba compiles) share these class attributes, the declaration the runtime and
the docs read, and the instance attributes their ``__init__`` sets; each adds
its own records (see their docstrings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from gymnasium import spaces


class DeclaredModel:
    """The declaration and sizes shared by ``PythonModel`` and ``NumbaModel``."""

    # Documented on PythonModel: records, names, the declared parameters.
    state_dtype: ClassVar[Any] = None
    payload_dtype: ClassVar[Any] = None
    event_kinds: ClassVar[Sequence[str]] = ()
    info_keys: ClassVar[Sequence[str]] = ()
    total_keys: ClassVar[Sequence[str]] = ()
    agent_prefix: ClassVar[str] = "agent"
    name: ClassVar[str] = ""
    params: ClassVar[Sequence[Mapping[str, Any]]] = ()
    space_docs: ClassVar[Mapping[str, Mapping[str, str]]] = {}
    # Agents act when a handler asks (ctx.request_decision()): on_action then
    # runs at that time, not at every step (docs/decisions.md).
    decisions: ClassVar[bool] = False
    # Which of its Discrete actions an agent may take varies: the model says
    # which (PythonModel.valid_actions) and the envs expose the mask
    # (docs/custom-models.md, "Action masks").
    action_mask: ClassVar[bool] = False

    def __init__(self) -> None:
        self.num_entities = 0
        self.num_agents = 0
        self.lookahead = 0.0
        self.dt = 1.0
        self.observation_space: spaces.Box | None = None
        self.action_space: spaces.Space | None = None
        self.state_space: spaces.Box | None = None
