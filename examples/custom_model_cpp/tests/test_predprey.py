"""The example's own tests: what a user of the SDK would write for their model."""

import predprey
from pettingzoo.test import parallel_api_test

from seer_env.testing import (
    assert_declarations_match,
    assert_models_equivalent,
    assert_serial_equivalent,
    check_contract,
)


def test_pettingzoo_api():
    parallel_api_test(predprey.parallel_env(seed=0), num_cycles=50)


def test_every_executor_returns_the_serial_bytes():
    assert_serial_equivalent(lambda **kw: predprey.parallel_env(**kw), threads=(1, 2, 4))


def test_the_cpp_port_declares_what_the_prototype_declares():
    assert_declarations_match(predprey.PredPreyPrototype, "predprey")


def test_the_cpp_port_equals_the_prototype():
    assert_models_equivalent(
        lambda: predprey.parallel_env(implementation="python"),
        lambda: predprey.parallel_env(),
        steps=40,
    )


def test_contract():
    check_contract(lambda **kw: predprey.parallel_env(**kw))
