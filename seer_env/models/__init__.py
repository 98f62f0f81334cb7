"""Models written in Python: ``python_model`` (``PythonModel``), ``numba`` (``NumbaModel``).

``numba_pcs`` is the C++ ``pcs`` model ported to a ``NumbaModel``.
"""
