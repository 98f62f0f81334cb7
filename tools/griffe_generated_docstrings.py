"""The docs build's griffe extension: a module that completes its ``__doc__`` at import
is documented with the imported docstring.

An env version's module (``seer_env/envs/pcs_v1.py``) stores only its own text;
its "Arguments" and "Version history" are generated from its row of
``seer_env.envs.VERSIONS`` when it is imported, never stored, so the source's
docstring lacks them. mkdocs.yml names this file under mkdocstrings'
``extensions``.
"""

from __future__ import annotations

import importlib
from typing import Any

import griffe


class GeneratedDocstrings(griffe.Extension):
    """Replace the source docstring of a module that assigns ``__doc__`` by the imported one."""

    def on_module_members(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        if "__doc__" not in mod.members or mod.docstring is None:
            return
        source = mod.docstring
        mod.docstring = griffe.Docstring(
            importlib.import_module(mod.path).__doc__,
            lineno=source.lineno,
            endlineno=source.endlineno,
            parent=mod,
            parser=source.parser,
            parser_options=source.parser_options,
        )
