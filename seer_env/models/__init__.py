"""Models written in Python with ``seer_env.NumbaModel`` (compiled by numba, or interpreted)."""
