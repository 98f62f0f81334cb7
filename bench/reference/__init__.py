"""Pure-Python/NumPy reference implementations of the models: oracles and baselines."""
