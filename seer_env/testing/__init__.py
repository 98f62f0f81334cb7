"""The equivalence test kit: prove a model obeys the runtime's guarantees.

- ``assert_serial_equivalent(env_fn)``: every executor and thread count
  returns the serial executor's bytes, step after step.
- ``assert_models_equivalent(env_fn_a, env_fn_b)``: two implementations of a
  model (a ``PythonModel`` prototype and its C++ port) return the same bytes.
- ``assert_modes_equivalent(model)``: a ``NumbaModel`` returns the same bytes
  interpreted and compiled, at every executor and thread count.
- ``assert_declarations_match(model_a, model_b)``: the two declare the same
  parameters (names, types, defaults, bounds), keys and state record.
- ``verify(port, prototype)``: all of these in one call, over several
  seeds and a reused env, prototype and port compared on every entity state
  and pending event too, any difference located (step, entity, field, event).
- ``assert_decisions_equivalent(env_fn)``: a model whose agents ask for
  actions returns the same bytes with each lookahead window's requests
  answered together, on every executor and thread count, as answered one at
  a time (docs/decisions.md).
- ``check_contract(env_fn)``: runs with ``check=True`` and reports contract
  violations, handler failures, outputs outside their spaces and
  non-determinism, and what the runs exercised (``Coverage``: handler calls
  by hook and event kind; ``verify`` warns about what never ran).
- ``serial_step_ratio(a, b, config)``: not a check but a measurement: the
  serial step time of one implementation over another's, stepped in turn.

``env_fn`` builds a fresh env from keyword arguments (``executor``,
``num_threads``, ``check``), e.g. ``lambda **kw: pcs_v0.parallel_env(width=8,
height=8, **kw)``. Actions are drawn from a generator seeded by the episode
seed and replayed identically to every env compared.
"""

from seer_env.testing.contract import ContractReport, Coverage, Violation, check_contract
from seer_env.testing.decisions import assert_decisions_equivalent, hash_policy
from seer_env.testing.declaration import assert_declarations_match
from seer_env.testing.equivalence import assert_models_equivalent, assert_serial_equivalent
from seer_env.testing.numba_modes import assert_modes_equivalent
from seer_env.testing.speed import StepRatio, serial_step_ratio
from seer_env.testing.trajectory import first_difference, random_policy, record
from seer_env.testing.verify import Check, VerifyReport, verify

__all__ = [
    "Check",
    "ContractReport",
    "Coverage",
    "StepRatio",
    "Violation",
    "VerifyReport",
    "assert_declarations_match",
    "assert_decisions_equivalent",
    "assert_models_equivalent",
    "assert_modes_equivalent",
    "assert_serial_equivalent",
    "check_contract",
    "first_difference",
    "hash_policy",
    "random_policy",
    "record",
    "serial_step_ratio",
    "verify",
]
