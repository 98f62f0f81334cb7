"""The scaffold refuses (or renames) every name that would not build or would shadow a package."""

import re
import warnings

import numpy as np
import pytest
from gymnasium import spaces

import seer_env
from seer_env.sdk.scaffold import main, new_cpp_project


class _Base(seer_env.PythonModel):
    state_dtype = np.dtype([("x", "<f8")])
    event_kinds = ("TICK",)
    params = ({"name": "n", "type": "int", "default": 2, "low": 1, "high": 8, "doc": "n"},)

    def __init__(self, n=2):
        super().__init__()
        self.num_entities = self.num_agents = n
        self.lookahead, self.dt = 0.5, 1.0
        self.observation_space = spaces.Box(0, 1, (1,), np.float32)
        self.action_space = spaces.Discrete(2)

    def on_action(self, ctx, state, action):
        pass

    def observe(self, agent, state, snapshot):
        return [0.0]

    def reward(self, agent, state, snapshot):
        return 0.0


class State(_Base):
    pass


class Keywords(_Base):
    state_dtype = np.dtype([("default", "<f8"), ("new", "<u8")])


class TwoPings(_Base):
    event_kinds = ("ping", "PING")


class SeerEnv(_Base):
    pass


class Queue(_Base):
    pass


class Outer:
    class Inner(_Base):
        name = "outer_inner_port"


class NoParams(_Base):
    params = ()


class NeedsArguments(_Base):
    def __init__(self, n, size):  # size: neither declared nor defaulted
        super().__init__(n)


def _scaffold(cls, dest):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return new_cpp_project(cls, dest)


def test_a_class_named_like_a_generated_struct_is_renamed(tmp_path):
    _scaffold(State, tmp_path / "p")
    source = (tmp_path / "p" / "src" / "cpp" / "state.cpp").read_text()
    assert "class StateModel final : public seer::ModelBase<StateModel, State, Public>" in source


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (Keywords, "state_dtype field 'default' is not a C++ identifier"),
        (TwoPings, "event kinds 'ping' and 'PING' would both be kPing"),
        (SeerEnv, "shadow this package, seer_env"),
        (Queue, "shadow the standard library's 'queue'"),
        (NeedsArguments, "cannot be built with its default config"),
    ],
)
def test_names_that_would_not_build_are_refused(tmp_path, cls, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        _scaffold(cls, tmp_path / "p")
    assert not (tmp_path / "p").exists()  # nothing half-written


def test_a_nested_class_imports_by_its_qualified_name(tmp_path):
    _scaffold(Outer.Inner, tmp_path / "p")
    init = (tmp_path / "p" / "src" / "outer_inner_port" / "__init__.py").read_text()
    assert '_PROTOTYPE = ("test_scaffold_names", "Outer.Inner")' in init
    assert "from test_scaffold_names import" not in init  # imported lazily, by qualname
    compile(init, "__init__.py", "exec")


def test_a_prototype_without_params_warns(tmp_path):
    with pytest.warns(UserWarning, match="declares no params"):
        new_cpp_project(NoParams, tmp_path / "p")


def test_command_line_errors_are_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(["new-cpp", "test_scaffold_names:NoParams", str(tmp_path / "file")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: dest must be a new or empty folder") and "(a file)" in err
    assert main(["new-cpp", "test_scaffold_names:NeedsArguments", str(tmp_path / "d")]) == 2
    assert "error: prototype NeedsArguments cannot be built" in capsys.readouterr().err
    assert main(["new-cpp", "test_scaffold_names:NoParams", str(tmp_path / "w")]) == 0
    assert "warning: NoParams declares no params" in capsys.readouterr().err
