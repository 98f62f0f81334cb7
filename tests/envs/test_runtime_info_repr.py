"""``RuntimeInfo``'s one line says what ran when the adaptive pool shed threads."""

from seer_env.env import RuntimeInfo

BASE = dict(
    executor="parallel",
    num_threads=2,
    events=10,
    cross_events=1,
    rounds=1,
    seconds=1e-3,
    events_total=10,
)


def test_repr_names_the_threads_used_and_the_decision_when_the_pool_shed():
    why = "rounds stalled: next steps on 1 thread"
    text = repr(RuntimeInfo(**BASE, threads_used=1, thread_decision=why))
    assert text.startswith("RuntimeInfo(parallel x2, ")
    assert f"on 1 of 2 threads ({why})" in text


def test_repr_is_unchanged_when_every_thread_ran():
    text = repr(RuntimeInfo(**BASE, threads_used=2, thread_decision="all threads"))
    assert " of 2 threads" not in text
