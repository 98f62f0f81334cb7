"""The test kit refuses arguments that would let a check pass having compared nothing.

`assert_serial_equivalent(..., seeds=())`, `threads=()` or `steps=0`,
`check_contract(..., seeds=())` ("0 seeds, 0 steps: no violations") and
`verify(..., threads=())` or `executors=("serial",)` ("0 runs") used to pass.
Each is a ValueError naming the argument and the value, raised before any env
is built.
"""

import re

import pytest

from seer_env.envs import pcs_v0
from seer_env.testing import (
    assert_models_equivalent,
    assert_serial_equivalent,
    check_contract,
    verify,
)


def never_built(**kwargs):
    """An env factory that must not be called: the arguments are refused first."""
    raise AssertionError(f"an env was built ({kwargs}) although the arguments leave nothing to do")


NOTHING_TO_COMPARE = [
    (dict(seeds=()), "seeds must name at least one seed, got ()"),
    (dict(seeds=[]), "seeds must name at least one seed, got []"),
    (dict(seeds=iter(())), "seeds must name at least one seed, got []"),
    (dict(steps=0), "steps must be an int >= 1, got 0"),
    (dict(steps=True), "steps must be an int >= 1, got True"),
]
NO_RUNS = [
    (dict(threads=()), "threads must name at least one thread count, got ()"),
    (dict(threads=(2, 0)), "threads must hold integers >= 1, got 0 in [2, 0]"),
    (dict(executors=("serial",)), "executors must name at least one executor besides 'serial'"),
    (dict(executors=()), "executors must name at least one executor besides 'serial'"),
]


@pytest.mark.parametrize("kwargs, message", NOTHING_TO_COMPARE + NO_RUNS)
def test_assert_serial_equivalent_refuses_to_compare_nothing(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        assert_serial_equivalent(never_built, **kwargs)


@pytest.mark.parametrize("kwargs, message", NOTHING_TO_COMPARE)
def test_check_contract_refuses_to_check_nothing(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_contract(never_built, **kwargs)


@pytest.mark.parametrize("kwargs, message", NOTHING_TO_COMPARE)
def test_assert_models_equivalent_refuses_to_compare_nothing(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        assert_models_equivalent(never_built, never_built, **kwargs)


@pytest.mark.parametrize("kwargs, message", NOTHING_TO_COMPARE + NO_RUNS)
def test_verify_refuses_to_compare_nothing(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        verify(never_built, **kwargs)


def test_the_refusal_names_the_default_executors():
    with pytest.raises(ValueError, match=r"None: all of \[.*'parallel'.*\]\), got \('serial',\)"):
        verify(never_built, executors=("serial",))


def test_seeds_from_a_generator_are_read_once_and_all_checked():
    report = check_contract(
        lambda **kw: pcs_v0.parallel_env(width=2, height=2, **kw),
        seeds=(seed for seed in (0, 1)),
        steps=2,
    )
    assert (report.seeds, report.steps) == (2, 4)
