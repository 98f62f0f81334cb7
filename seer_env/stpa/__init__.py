"""STPA: choose the executor and pool size of a simulation (``num_threads="auto"``).

The modules, one concept each:

- ``threads``: the ``num_threads`` option (parsing, its default executor, the
  oversubscription warning);
- ``chooser``: ``choose()``, the order of the answers (override, fixed,
  cached, measured);
- ``measure``: the preflight driver (probe, prune, measure, report), over
  ``preflight`` (the throw-away copies and their timings) and ``cost_model``
  (the static model);
- ``rules``: which measured candidate is chosen;
- ``reuse``: a cached decision's checks, its duel (``revalidate``) and storing
  a new one, in the cache file (``cache``);
- ``hardware`` and ``load``: the machine's features and load.

See docs/stpa.md.
"""

from __future__ import annotations

# Besides the public names (__all__), the internals tests and tools reach as
# ``stpa.X`` are re-exported (``X as X``): DecisionCache, Candidate, Preflight,
# SERIAL, TIE, _preflight and the rules _decide, _pick, _pick_contended.
from seer_env.stpa.cache import DecisionCache as DecisionCache
from seer_env.stpa.chooser import choose
from seer_env.stpa.decision import Decision
from seer_env.stpa.measure import _preflight as _preflight
from seer_env.stpa.preflight import SERIAL as SERIAL
from seer_env.stpa.preflight import Candidate as Candidate
from seer_env.stpa.preflight import Preflight as Preflight
from seer_env.stpa.rules import TIE as TIE
from seer_env.stpa.rules import _decide as _decide
from seer_env.stpa.rules import _pick as _pick
from seer_env.stpa.rules import _pick_contended as _pick_contended
from seer_env.stpa.threads import (
    AUTO,
    OversubscriptionWarning,
    default_executor,
    parse_num_threads,
    warn_if_oversubscribed,
)

__all__ = [
    "AUTO",
    "Decision",
    "OversubscriptionWarning",
    "choose",
    "default_executor",
    "parse_num_threads",
    "warn_if_oversubscribed",
]
