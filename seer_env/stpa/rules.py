"""The decision rules: which measured candidate the preflight chooses, and why.

Quiet machine: the fewest threads within ``TIE`` of the best score (``_pick``).
Under contention, where the static model predicts that some pool pays on free
cores: the static model's optimum if it was measured and did not measure
slower than serial by more than ``CONTENDED_LOSS``, else the most threads
within ``TIE`` (``_pick_contended``); the adaptive pool sheds threads at run
time while the load lasts, while a one-thread choice could never use the
cores the load leaves free. A measured loss is never overridden by the
model: a pool whose fastest step is clearly slower than serial's lost on
this machine, whatever the model predicts. The scores are the driver's
(``measure.py``).
"""

from __future__ import annotations

from seer_env.stpa.cost_model import Plan
from seer_env.stpa.preflight import SERIAL, Candidate

TIE = 0.03  # a candidate this close to the fastest counts as as fast
# Under contention the model's optimum stands unless its fastest step measured
# this much slower than serial's: a pool that shed its threads ties with
# serial (within noise), one that measures clearly slower lost.
CONTENDED_LOSS = 0.10


def _decide(
    allowed: list[Candidate],
    scores: dict[Candidate, float],
    *,
    contended: bool,
    plan: Plan,
    serial_s: float,
    pool: Candidate,
) -> tuple[Candidate, str]:
    """The preflight's choice among the measured ``allowed`` candidates, and why.

    ``pool`` is the static model's predicted optimum (``plan.best`` threads).
    """
    # Pool sizes the static model (load-free) predicts to beat serial.
    paying = {p for p, seconds in plan.predicted.items() if p > 1 and seconds < serial_s}
    lost = pool in allowed and scores[pool] > scores[SERIAL] * (1 + CONTENDED_LOSS)
    if contended and plan.best in paying and pool in allowed and not lost:
        # Under load the optimum's preflight copy measures the first steps,
        # which stall before the adaptive pool sheds; at run time the pool
        # sheds within a step or two and, once a probe confirms the load,
        # steps at the serial loop's speed or better while it lasts, and uses
        # every core when it goes.
        reason = (
            f"{pool.label}: the static model's optimum, measured under contention "
            f"(fastest step {scores[pool] * 1e6:.1f} us, "
            f"serial {scores[SERIAL] * 1e6:.1f} us); "
            "the adaptive pool sheds threads while the load lasts"
        )
        return pool, reason
    if contended and paying:
        choice, reason = _pick_contended(allowed, scores)
        if lost:
            reason += (
                f"; the static model's optimum, {pool.label}, measured "
                f"{scores[pool] / scores[SERIAL]:.2f}x serial's step: a measured loss"
            )
        return choice, reason
    # Quiet, or contended where the static model predicts that no pool pays
    # even on free cores (a tiny env): the fewest threads within TIE.
    return _pick(allowed, scores)


def _pick(allowed: list[Candidate], scores: dict[Candidate, float]) -> tuple[Candidate, str]:
    """Fewest threads within ``TIE`` of the best score (serial first at one thread)."""
    order = sorted(allowed, key=lambda c: (c.num_threads, c.executor != "serial"))
    best = min(order, key=lambda c: scores[c])
    choice = next(c for c in order if scores[c] <= scores[best] * (1 + TIE))
    serial = scores[SERIAL]
    reason = (
        f"{choice.label}: step {scores[choice] * 1e6:.1f} us "
        f"(serial {serial * 1e6:.1f} us, {serial / scores[choice]:.2f}x)"
    )
    if choice != best:
        reason += f"; within {TIE:.0%} of the fastest, {best.label}, with fewer threads"
    return choice, reason


def _pick_contended(
    allowed: list[Candidate], scores: dict[Candidate, float], tie: float = TIE
) -> tuple[Candidate, str]:
    """Under contention: the MOST threads within ``tie`` of the best score.

    The adaptive pool sheds threads at run time while the load lasts (a
    preflight copy of 2 threads may already have shed, so it ties with serial),
    but a one-thread choice never uses a core the load leaves free.
    """
    order = sorted(allowed, key=lambda c: (c.num_threads, c.executor != "serial"))
    best = min(order, key=lambda c: scores[c])
    choice = [c for c in order if scores[c] <= scores[best] * (1 + tie)][-1]
    serial = scores[SERIAL]
    reason = (
        f"{choice.label}: step {scores[choice] * 1e6:.1f} us "
        f"(serial {serial * 1e6:.1f} us, {serial / scores[choice]:.2f}x)"
    )
    if choice != best:
        reason += (
            f"; within {tie:.0%} of the fastest, {best.label}, with more threads "
            "(contended: the adaptive pool sheds them while the load lasts)"
        )
    return choice, reason
