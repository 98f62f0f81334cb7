"""Interrupts that reach compiled loops: a poll at the head of every loop.

A compiled handler runs without the GIL, so neither Ctrl-C nor a vector env's
interrupt can stop it from outside; the runtime checks its stop flag only
between handlers. This module gives numba a pipeline (``PollingPipeline``)
with one more pass over the untyped IR: at the head of every loop of the
function it inserts a call of ``_poll()``, which asks the runtime
(``seer_handler_stop_requested``: one load of a process-wide count while no
step is being stopped) and raises when the step running on this thread was
asked to stop. The entry point turns the exception into a failed status, and
the runtime, seeing its stop flag set, raises the interrupt rather than a
handler error. A loop that never ends thus stops like any step.

The handlers and every ``@seer_env.kernel`` helper are compiled with it; a
function the user jitted with ``numba.njit`` is compiled as they asked.
"""

from __future__ import annotations

import numba
from numba.core import ir
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.untyped_passes import IRProcessing

from seer_env.models.numba import abi


class StepInterrupted(RuntimeError):
    """Raised in compiled code when its step was asked to stop (never reaches Python)."""


@numba.njit(cache=False)
def _poll():
    if abi.stop_requested():
        raise StepInterrupted("the step was asked to stop")


@register_pass(mutates_CFG=False, analysis_only=False)
class InsertLoopPolls(FunctionPass):
    """Inserts ``_poll()`` at the head of every loop (untyped IR)."""

    _name = "seer_insert_loop_polls"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        """Insert the polls; True when the function has a loop (the IR changed)."""
        blocks = state.func_ir.blocks
        heads = {loop.header for loop in compute_cfg_from_blocks(blocks).loops().values()}
        for label in heads:
            block = blocks[label]
            loc, scope = block.loc, block.scope
            fn = scope.redefine("$seer_poll_fn", loc)
            result = scope.redefine("$seer_poll", loc)
            block.body[:0] = [
                ir.Assign(ir.Global("_poll", _poll, loc), fn, loc),
                ir.Assign(ir.Expr.call(fn, (), (), loc), result, loc),
            ]
        return bool(heads)


class PollingPipeline(CompilerBase):
    """numba's nopython pipeline with ``InsertLoopPolls`` after the IR is built."""

    def define_pipelines(self):
        """The nopython passes of numba, and ours."""
        passes = DefaultPassBuilder.define_nopython_pipeline(self.state)
        passes.add_pass_after(InsertLoopPolls, IRProcessing)
        passes.finalize()
        return [passes]
