"""The built-in models (``cpp/models``) written again in Python and NumPy: oracles.

``pcs.PcsReference``, ``aircraft.AircraftReference`` and
``phold.PholdReference`` draw the same numbers (``seer_env.testing.rng``) and
return the same outputs as the C++ models: the tests compare the runtime
against them, and the benchmark runs them as its pure-Python alternative.
"""
