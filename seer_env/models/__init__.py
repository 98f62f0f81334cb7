"""Models written in Python: ``python_model`` (``PythonModel``), ``numba`` (``NumbaModel``).

A worked ``NumbaModel``, the C++ ``pcs`` model ported, is ``examples/numba_pcs.py``.
"""
