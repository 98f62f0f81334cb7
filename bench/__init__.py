"""``make bench``: side-by-side step-latency comparisons, measured as ratios.

Run ``python -m bench`` (default profile, a few minutes on 2 cores) or
``python -m bench --profile full``. Results go to ``bench/results/``:
a JSON file, a Markdown table and PNG plots.
"""

from seer_env import _core

# The comparison executors (locked, barrier) are the bench's: registered for it only.
_core._register_comparison_executors()
