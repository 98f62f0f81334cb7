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

# The public API only; the internals (DecisionCache, Candidate, the rules...) are
# imported from the module that defines them.
from seer_env.stpa.chooser import choose
from seer_env.stpa.decision import Decision
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
