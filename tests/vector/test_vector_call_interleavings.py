"""Random interleavings of step_async/step_wait/reset/close/step on the vector envs.

Each example runs a random call sequence on a SeerVectorEnv or a
SeerAsyncVectorEnv (serial or parallel) and checks every output, byte for
byte, and every refusal against a serial model (``vector_calls``); ``make
fuzz`` runs the same target for longer under ASan.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vector_calls import CALLS, EXECUTORS, run_calls


@pytest.mark.parametrize("kind", ["sync", "async"])
@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(executor=st.sampled_from(EXECUTORS), calls=CALLS)
def test_random_call_sequences_match_the_serial_model(kind, executor, calls):
    run_calls(kind, executor, calls)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_close_and_batch_cases_the_fuzz_must_reach(kind):
    """Fixed sequences through the paths the random ones may miss."""
    run_calls(
        kind,
        ("parallel", 2),
        [
            ("step", (1, None)),  # before reset: refused
            ("reset", 3),
            ("step_async", 1, (2, None)),
            ("reset", None),  # refused: a batch in flight
            ("step_wait", None),  # refused on the async env: batch 0 idle
            ("close",),  # drops the step in flight
            ("step", (3, 5)),  # a bad action: refused, unless its row is not read
            ("step", (4, None)),  # every dropped instance restarts
            ("step_async", None, (5, 2)),
            ("step_async", None, (6, None)),
            ("step_wait", 0),
            ("step_wait", 1),
            ("step", (8, None)),
            ("step", (9, None)),
            ("step_async", 0, (10, None)),
            ("close",),
            ("close",),
        ],
    )
