"""The dict API (built in C++): the bytes of step_arrays, today's types, no aliasing."""

import copy
import pickle
import sys
import sysconfig

import numpy as np
import pytest
from envcases import AGENTS_DIE, ENV_NAMES, SMALL, cycles, make

from seer_env import _core, vector
from seer_env.vector import SeerAsyncVectorEnv


def snapshot(outputs):
    """A deep copy of step/reset outputs (arrays copied)."""
    return copy.deepcopy(outputs)


def assert_same(a, b):
    """Equal dicts: same keys in the same order, values of the same type and bytes."""
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    else:
        assert a == b or (a != a and b != b)


@pytest.fixture(params=["in place", "public API"])
def item_access(request):
    """Runs a test with the bridge reading its items in place, then through the public API."""
    was = _core._dict_entries()
    _core._dict_entries(request.param == "in place")
    yield request.param
    _core._dict_entries(was)


def test_items_are_read_in_place_on_the_layouts_we_know():
    """On CPython 3.11-3.13 (GIL builds) the layout check passes: the fast path is not lost."""
    known = (3, 11) <= sys.version_info[:2] <= (3, 13)
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    assert _core._dict_entries() is (known and not free_threaded)


def random_actions(env, rng):
    space = env.action_space(env.possible_agents[0])
    n = len(env.possible_agents)
    if hasattr(space, "n"):
        return rng.integers(0, space.n, n)
    return rng.uniform(space.low, space.high, (n, *space.shape)).astype(np.float32)


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("kind", ["python int", "numpy scalar", "numpy row"])
def test_dict_step_equals_step_arrays_through_deaths(name, kind):
    length = cycles(name, 30)
    by_dict, by_array = make(name, max_cycles=length), make(name, max_cycles=length)
    obs_d, info_d = by_dict.reset(seed=4)
    obs_a, _ = by_array.reset(seed=4)
    for agent in by_dict.possible_agents:
        assert obs_d[agent].tobytes() == obs_a[agent].tobytes()
    rng = np.random.default_rng(9)
    steps = 0
    while by_dict.agents:
        actions = random_actions(by_dict, rng)
        live = list(by_dict.agents)
        if kind == "python int":
            given = dict(zip(by_dict.possible_agents, actions.tolist()))
        elif kind == "numpy scalar":
            given = dict(zip(by_dict.possible_agents, actions))  # np.int64 / float32 rows
        else:
            given = {a: np.asarray(actions[i]) for i, a in enumerate(by_dict.possible_agents)}
        given = {a: given[a] for a in live}
        obs, rew, term, trunc, info = by_dict.step(given)
        o, r, te, tr = by_array.step_arrays(actions)
        rows = [by_dict.possible_agents.index(a) for a in live]
        assert list(obs) == live and list(rew) == live and list(info) == live
        assert list(term) == live and list(trunc) == live
        assert np.stack([obs[a] for a in live]).tobytes() == o[rows].tobytes()
        assert [rew[a] for a in live] == r[rows].tolist()
        assert [term[a] for a in live] == te[rows].tolist()
        assert [trunc[a] for a in live] == tr[rows].tolist()
        assert by_dict.agents == by_array.agents
        steps += 1
    assert steps == length or name in AGENTS_DIE


@pytest.mark.parametrize("name", ENV_NAMES)
def test_types_keys_and_separate_info_dicts(name):
    env = make(name, max_cycles=cycles(name, 30))
    obs, infos = env.reset(seed=0)
    keys = list(infos[env.possible_agents[0]])
    assert keys == list(env.sim.spec["info_keys"])
    rng = np.random.default_rng(0)
    space = env.observation_space(env.possible_agents[0])
    while env.agents:
        live = list(env.agents)
        actions = random_actions(env, rng)
        out = env.step(dict(zip(live, [actions[env.possible_agents.index(a)] for a in live])))
        obs, rew, term, trunc, info = out
        for a in live:
            assert type(obs[a]) is np.ndarray and obs[a].dtype == space.dtype
            assert obs[a].shape == space.shape
            assert type(rew[a]) is float
            assert type(term[a]) is bool and type(trunc[a]) is bool
            assert list(info[a]) == keys and all(type(v) is int for v in info[a].values())
        assert len({id(d) for d in info.values()}) == len(live)  # one dict per agent
        assert env.agents is not env.possible_agents


@pytest.mark.parametrize("name", ENV_NAMES)
def test_returned_dicts_are_unchanged_by_later_steps(name, item_access):
    """A user keeps last step's dicts: the next step, a reset or a write must not change them."""
    env = make(name, max_cycles=cycles(name, 30))
    kept = [env.reset(seed=1)]
    copies = [snapshot(kept[0])]
    rng = np.random.default_rng(1)
    while env.agents:
        live = env.agents
        actions = random_actions(env, rng)
        out = env.step({a: actions[env.possible_agents.index(a)] for a in live})
        kept.append(out)
        copies.append(snapshot(out))
    env.reset(seed=2)
    env.step({a: random_actions(env, rng)[i] for i, a in enumerate(env.agents)})
    for got, expected in zip(kept, copies):
        for g, e in zip(got, expected):
            assert_same(g, e)


def test_bad_dicts_still_get_the_checkers_messages():
    """The C++ fast path declines what it does not accept; the ActionChecker words the error."""
    env = make("pcs_v0")
    env.reset(seed=0)
    a0 = env.possible_agents[0]
    good = {a: 0 for a in env.agents}
    with pytest.raises(ValueError, match="no action for live agents"):
        env.step({a: 0 for a in env.agents[1:]})
    with pytest.raises(ValueError, match="unknown agents"):
        env.step({**good, "ghost_0": 0})
    with pytest.raises(ValueError, match=rf"actions\['{a0}'\] must be in \[0, "):
        env.step({**good, a0: 99})
    with pytest.raises(ValueError, match=rf"actions\['{a0}'\] must be an integer"):
        env.step({**good, a0: 0.5})
    with pytest.raises(ValueError, match=rf"actions\['{a0}'\] must be in"):
        env.step({**good, a0: 2**70})
    # Accepted by the checker though not by the fast path: the same step either way.
    other = make("pcs_v0")
    other.reset(seed=0)
    obs, *_ = env.step({**good, a0: 2.0})
    ref, *_ = other.step({**good, a0: 2})
    assert obs[a0].tobytes() == ref[a0].tobytes()


@pytest.mark.parametrize("name", ENV_NAMES)
def test_dict_vector_and_async_agree(name):
    """One instance: the dict env, the sync and the async vector env give the same bytes."""
    cfg = dict(SMALL.get(name, {}), max_cycles=cycles(name, 30))
    single = make(name, max_cycles=cfg["max_cycles"])  # envcases.make adds SMALL
    sync = vector.make(name, 2, **cfg)
    asyn = SeerAsyncVectorEnv(name, 2, num_batches=2, **cfg)
    obs, _ = single.reset(seed=7)
    o_sync, _ = sync.reset(seed=7)
    o_async, _ = asyn.reset(seed=7)
    n = len(single.possible_agents)
    assert np.stack(list(obs.values())).tobytes() == o_sync[:n].tobytes() == o_async[:n].tobytes()
    rng = np.random.default_rng(3)
    while single.agents:
        actions = np.concatenate([random_actions(single, rng)] * 2)
        live = list(single.agents)
        obs, rew, *_ = single.step({a: actions[single.possible_agents.index(a)] for a in live})
        s = sync.step(actions)
        asyn.step_async(actions[asyn.rows(1)], batch=1)
        asyn.step_async(actions[asyn.rows(0)], batch=0)
        first = asyn.step_wait(batch=0)
        asyn.step_wait(batch=1)
        rows = [single.possible_agents.index(a) for a in live]
        assert np.stack([obs[a] for a in live]).tobytes() == s[0][rows].tobytes()
        assert s[0][:n].tobytes() == first[0][:n].tobytes()
        assert [rew[a] for a in live] == s[1][rows].tolist() == first[1][rows].tolist()
    asyn.close()


def step_checked(env, ref, rng):
    """A dict step of ``env`` checked against ``ref``'s step_arrays; its outputs and live agents."""
    live = list(env.agents)
    actions = random_actions(env, rng)
    out = env.step({a: actions[env.possible_agents.index(a)] for a in live})
    expected = expected_outputs(ref, *ref.step_arrays(actions), live)
    for got, want in zip(out, expected):
        assert_same(got, want)
    return out, live


def expected_outputs(env, o, r, te, tr, live):
    """The dicts a step must return, built in Python from step_arrays' arrays."""
    rows = [env.possible_agents.index(a) for a in live]
    infos = env.sim.infos()
    keys = list(env.sim.spec["info_keys"])
    return (
        {a: o[i].copy() for a, i in zip(live, rows)},
        {a: float(r[i]) for a, i in zip(live, rows)},
        {a: bool(te[i]) for a, i in zip(live, rows)},
        {a: bool(tr[i]) for a, i in zip(live, rows)},
        {a: dict(zip(keys, infos[i].tolist())) for a, i in zip(live, rows)},
    )


@pytest.mark.parametrize("name", ENV_NAMES)
def test_outputs_let_go_of_are_refilled_and_what_is_held_never_changes(name, item_access):
    """Dropped outputs are reused (the fast path); any part the caller holds stays as it was.

    Each step the caller keeps one kind of reference (a row, a view derived from
    a row, a weak reference to a row, one info dict, a whole dict) and drops
    the rest, after scribbling on some of what it drops (a reused dict the
    caller changed must come back right).
    """
    import weakref

    env = make(name, max_cycles=cycles(name, 40))
    ref = make(name, max_cycles=cycles(name, 40))
    env.reset(seed=5)
    ref.reset(seed=5)
    rng = np.random.default_rng(5)
    held, seen_ids = [], []
    step = 0
    while env.agents:
        out, live = step_checked(env, ref, rng)
        seen_ids.append(tuple(id(d) for d in out))
        a0 = live[step % len(live)]
        kind = step % 8
        if kind == 0:
            held.append((out[0][a0], out[0][a0].copy()))
        elif kind == 1:
            view = out[0][a0][1:]
            held.append((view, view.copy()))
        elif kind == 2:
            held.append((weakref.ref(out[0][a0]), out[0][a0].copy()))
        elif kind == 3:
            held.append((out[4][a0], dict(out[4][a0])))
        elif kind == 4:
            held.append((out[1], dict(out[1])))
        elif kind == 5:  # the last item deleted and put back: same order, a hole in the table
            for d in (out[4][a0], out[1], out[2]):
                last = next(reversed(d))
                d[last] = d.pop(last)
            del d
        elif kind == 6:  # values of other types under the same keys
            out[4][a0][next(iter(out[4][a0]))] = 2**70
            for k in list(out[1]):
                out[1][k] = np.float64(out[1][k])
            out[2][a0] = 1
            for d in (out[3], out[4][live[(step + 1) % len(live)]]):
                items = list(d.items())  # reordered, no hole in the table
                d.clear()
                d.update(reversed(items))
            del d, items  # let go of them too
        else:  # scribble on everything, then let go of it
            out[0][a0][:] = -1.0
            out[1][a0] = "x"
            out[2].pop(a0)
            out[3][a0] = None
            out[4][a0]["extra"] = 1
            out[4][a0][next(iter(out[4][a0]))] = -7
        del out
        for obj, copy_ in held:
            if isinstance(obj, weakref.ref):
                obj = obj()
                if obj is None:
                    continue
            assert_same(obj, copy_)
        step += 1
    # The fast path ran: some step returned dicts a step before it returned and let go of.
    assert len({i for ids in seen_ids for i in ids}) < 5 * len(seen_ids)


def reordered(given, how, rng):
    """The same action dict with its keys in another order or as other (equal) str objects."""
    items = list(given.items())
    if how == "reversed":
        items.reverse()
    elif how == "shuffled":
        items = [items[i] for i in rng.permutation(len(items))]
    elif how == "equal keys":  # equal names, not the env's own objects
        items = [("".join(list(a)), v) for a, v in items]
    elif how == "second half moved":  # in order at first, then not
        half = len(items) // 2
        items = items[:half] + items[half:][::-1]
    return dict(items)


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("how", ["reversed", "shuffled", "equal keys", "second half moved"])
def test_action_dicts_in_any_key_order_give_the_same_step(name, how):
    """The walk in agent order is only a shortcut: any key order or key objects step alike."""
    length = cycles(name, 20)
    env, ref = make(name, max_cycles=length), make(name, max_cycles=length)
    env.reset(seed=3)
    ref.reset(seed=3)
    rng = np.random.default_rng(3)
    while env.agents:
        live = list(env.agents)
        actions = random_actions(env, rng)
        given = {a: actions[env.possible_agents.index(a)] for a in live}
        out = env.step(reordered(given, how, rng))
        expected = expected_outputs(ref, *ref.step_arrays(actions), live)
        for got, want in zip(out, expected):
            assert_same(got, want)
    # As many keys as live agents, one of them foreign: still refused, nothing stepped.
    env.reset(seed=3)
    given = {a: 0 for a in env.agents[:-1]}
    steps = env.sim.steps
    with pytest.raises(ValueError, match="no action for live agents|unknown agents"):
        env.step(reordered({**given, "ghost_0": 0}, how, rng))
    assert env.sim.steps == steps


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_reused_dict_follows_live_at_the_same_agent_count(name, item_access):
    """Dicts let go of are refilled for this call's live agents, not the last call's.

    Two live lists of the same length that differ in one agent, alternated (as
    after a reset where other agents died): every dict keeps live's keys.
    """
    env = make(name, max_cycles=cycles(name, 10))
    env.reset(seed=0)
    views = env.sim.output_views()
    names = env.possible_agents
    lives = ([names[0], names[1]], [names[0], names[2]])
    for k in range(6):
        live = lives[k % 2]
        out = env._dicts.step_outputs(live, *views, False)
        assert [list(d) for d in out[:5]] == [live] * 5
        assert out[5] == live
        del out


def test_a_del_run_while_the_dicts_are_refilled_cannot_step_or_reset_the_env(item_access):
    """Releasing a value the caller left in a dict may run its __del__: a step,
    reset or pickle from there is refused, and the step's own dicts stay right."""
    import pickle

    env, ref = make("pcs_v0"), make("pcs_v0")
    env.reset(seed=3)
    ref.reset(seed=3)
    rng = np.random.default_rng(3)
    refused = []

    class Meddler:
        def __del__(self):
            for call in (
                lambda: env.step({a: 0 for a in env.agents}),
                lambda: env.reset(seed=9),
                lambda: pickle.dumps(env),
            ):
                try:
                    call()
                except RuntimeError as error:
                    refused.append(str(error))

    for k in range(6):
        out, live = step_checked(env, ref, rng)
        # Left in a dict the next step refills: released there.
        (out[1], out[3], out[4][live[0]])[k % 3][live[0] if k % 3 < 2 else "blocks"] = Meddler()
        del out
    assert len(refused) == 3 * 5
    assert all("another call on this env is in progress" in s for s in refused)


def test_the_bridge_itself_refuses_to_be_re_entered(item_access):
    """Memory safety below the env's guard: a nested bridge call raises, touching nothing."""
    env = make("pcs_v0")
    env.reset(seed=0)
    live = list(env.agents)
    views = env.sim.output_views()
    refused = []

    class Meddler:
        def __del__(self):
            try:
                env._dicts.step_outputs(live, *views, False)
            except RuntimeError as error:
                refused.append(str(error))

    out = env._dicts.step_outputs(live, *views, False)
    want = [snapshot(d) for d in out[:5]]
    out[1][live[0]] = Meddler()
    del out
    again = env._dicts.step_outputs(live, *views, False)
    assert refused == ["the dict API was re-entered while it built outputs"]
    for got, expected in zip(again[:5], want):
        assert_same(got, expected)


# -- env.agents in any order ---------------------------------------------------------------------
def reorder(live, how, rng):
    if how == "reversed":
        return live[::-1]
    if how == "sorted":  # "cell_10" < "cell_2": not possible_agents' order from 11 agents on
        return sorted(live)
    return [live[i] for i in rng.permutation(len(live))]


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("how", ["reversed", "sorted", "random"])
@pytest.mark.parametrize("path", ["dict", "step_arrays"])
def test_reordered_agents_get_their_own_actions_and_outputs(name, how, path):
    """`env.agents` is the user's list: reordered, every action still reaches its agent
    and every output comes back under its agent's name (through deaths, 11+ agents)."""
    length = cycles(name, 25)
    big = {"width": 4, "height": 4} if name.startswith("pcs") else {"num_uavs": 12}
    env, ref = make(name, max_cycles=length, **big), make(name, max_cycles=length, **big)
    env.reset(seed=5)
    ref.reset(seed=5)
    rng = np.random.default_rng(5)
    while ref.agents:
        env.agents = reorder(list(env.agents), how, rng)
        assert sorted(env.agents) == sorted(ref.agents)
        live, ref_live = list(env.agents), list(ref.agents)
        actions = random_actions(env, rng)
        ref_out = ref.step_arrays(actions)
        if path == "dict":
            given = {a: actions[env.possible_agents.index(a)] for a in live}
            out = env.step(given)
            assert [list(d) for d in out] == [live] * 5  # keyed in the caller's order
            want = expected_outputs(ref, *ref_out, ref_live)
            for got, expected in zip(out, want):
                assert_same(dict(sorted(got.items())), dict(sorted(expected.items())))
        else:
            for got, expected in zip(env.step_arrays(actions), ref_out):
                assert_same(got, expected)
        assert env.sim.digest() == ref.sim.digest()
        assert sorted(env.agents) == sorted(ref.agents)  # the same agents left
    assert not env.agents


@pytest.mark.parametrize("bad", ["twice", "unknown", "not a str"])
def test_agents_naming_an_agent_twice_or_no_agent_is_refused_before_stepping(bad):
    env = make("pcs_v1")
    env.reset(seed=0)
    first = env.agents[0]
    changed = {
        "twice": [first, *env.agents[:-1]],
        "unknown": ["ghost_0", *env.agents[1:]],
        "not a str": [0, *env.agents[1:]],
    }[bad]
    env.agents = changed
    digest = env.sim.digest()
    match = "twice" if bad == "twice" else "not one of possible_agents"
    for call in (
        lambda: env.step({a: 0 for a in env.possible_agents}),
        lambda: env.step_arrays(np.zeros(len(env.possible_agents), np.int64)),
    ):
        with pytest.raises(ValueError, match=rf"env.agents holds .* {match}"):
            call()
        assert env.sim.digest() == digest


@pytest.mark.parametrize("name", ENV_NAMES)
def test_every_env_in_a_process_keeps_the_no_lookup_path(name):
    """possible_agents in order is recognised without hashing on every env, not only the first.

    The bridge compares name pointers. Names that are not the interned objects (another
    env's, an unpickled env's) would make every step look each agent up by hash.
    """
    envs = [make(name) for _ in range(3)]
    envs.append(pickle.loads(pickle.dumps(envs[0])))
    envs.append(make(name))
    envs[-1].possible_agents = [str(a.encode().decode()) for a in envs[-1].possible_agents]
    envs[-1]._dicts = envs[-1]._new_dict_bridge()  # names that are not the interned objects
    for env in envs:
        env.reset(seed=0)
        env.agents = list(env.possible_agents)
        assert env._dicts.live_rows(env.agents) is None
    reordered = envs[0].agents[::-1]
    assert env._dicts.live_rows(reordered).tolist() == list(range(len(reordered)))[::-1]


# -- one action-dict policy on every env ---------------------------------------------------------
@pytest.mark.parametrize("name", ENV_NAMES)
def test_actions_for_every_possible_agent_work_all_episode(name):
    """`{a: pi(o) for a in env.possible_agents}`: the actions of agents that are done are
    ignored (unchecked), as PettingZoo's envs and SuperSuit's black_death do."""
    length = cycles(name, 40)
    env, ref = make(name, max_cycles=length), make(name, max_cycles=length)
    env.reset(seed=2)
    ref.reset(seed=2)
    rng = np.random.default_rng(2)
    deaths = 0
    while ref.agents:
        actions = random_actions(env, rng)
        given = dict(zip(env.possible_agents, actions))
        for a in set(env.possible_agents) - set(env.agents):  # done: any value, even a bad one
            given[a] = np.full_like(actions[0], np.nan, dtype=np.float64)
            deaths += 1
        ref_live = list(ref.agents)
        out = env.step(given)
        want = expected_outputs(ref, *ref.step_arrays(actions), ref_live)
        for got, expected in zip(out, want):
            assert_same(got, expected)
        assert env.sim.digest() == ref.sim.digest()
    if name in AGENTS_DIE:
        assert deaths > 0


@pytest.mark.parametrize("name", ENV_NAMES)
def test_an_unknown_key_is_named_and_changes_nothing(name):
    env = make(name)
    env.reset(seed=0)
    zero = np.zeros(env.action_space(env.possible_agents[0]).shape or (), np.float32)
    action = 0 if not zero.shape else zero
    digest = env.sim.digest()
    for given in (
        {**{a: action for a in env.agents}, "ghost_0": action},  # one key too many
        {**{a: action for a in env.agents[1:]}, "ghost_0": action},  # in place of a live one
    ):
        with pytest.raises(ValueError, match=r"unknown agents \['ghost_0'\]"):
            env.step(given)
        assert env.sim.digest() == digest


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_live_agent_left_out_is_the_documented_default(name):
    """Discrete (pcs): a ValueError naming it; Box (aircraft): it hovers (no on_action)."""
    env = make(name)
    env.reset(seed=0)
    left_out = env.agents[0]
    space = env.action_space(left_out)
    given = {a: space.sample() * 0 for a in env.agents[1:]}
    if hasattr(space, "n"):
        digest = env.sim.digest()
        with pytest.raises(ValueError, match=rf"no action for live agents \['{left_out}'\]"):
            env.step(given)
        assert env.sim.digest() == digest
    else:
        env.step(given)  # hovers


# -- bools are not actions; a dict changed mid-call; exact values in messages -----------------
@pytest.mark.parametrize("name", ENV_NAMES)
def test_bool_actions_are_refused_on_the_dict_path_and_step_arrays(name):
    env = make(name)
    env.reset(seed=0)
    first = env.possible_agents[0]
    n = len(env.possible_agents)
    discrete = hasattr(env.action_space(first), "n")
    row = np.zeros(env.action_space(first).shape, np.float32)
    digest = env.sim.digest()
    if discrete:
        dicts = [
            {a: True if a == first else 1 for a in env.agents},
            {a: np.bool_(True) if a == first else 1 for a in env.agents},
        ]
        arrays = [np.ones(n, bool), [True] + [1] * (n - 1)]
    else:
        dicts = [
            {a: row.astype(bool) if a == first else row for a in env.agents},
            {a: [True, 0.5, 0.0, 0.0] if a == first else row for a in env.agents},
        ]
        arrays = [np.zeros((n, *row.shape), bool)]
    for given in dicts:
        with pytest.raises(ValueError, match=rf"actions\['{first}'\] must be .*a bool is not"):
            env.step(given)
    for given in arrays:
        with pytest.raises(ValueError, match=r"a bool is not an action"):
            env.step_arrays(given)
    assert env.sim.digest() == digest


def test_a_dict_changed_by_another_thread_mid_call_is_a_clear_error_or_a_snapshot():
    """The checker reads one copy of the dict: a change made meanwhile cannot tear it."""

    class Changing(dict):  # a dict whose own iteration changes it (another thread, say)
        def keys(self):
            self.pop(next(iter(self)))
            return super().keys()

        def __iter__(self):
            self.pop(next(iter(super().keys())), None)
            return super().__iter__()

    env = make("pcs_v1")
    env.reset(seed=0)
    digest = env.sim.digest()
    try:
        env.step(Changing({a: 0 for a in env.agents}))
    except RuntimeError as e:
        assert "changed" in str(e)
    except ValueError as e:  # the snapshot lacks the popped agent: named, as for any dict
        assert "no action for live agents" in str(e)
    assert env.sim.digest() == digest


def test_a_uint64_action_is_printed_exactly():
    env = make("pcs_v1")
    env.reset(seed=0)
    first = env.agents[0]
    given = {a: np.uint64(2**63 + 1) if a == first else 0 for a in env.agents}
    with pytest.raises(
        ValueError, match=rf"actions\['{first}'\] must be in \[0, 11\), got 9223372036854775809$"
    ):
        env.step(given)
