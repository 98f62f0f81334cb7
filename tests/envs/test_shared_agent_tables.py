"""The per-agent tables of an env are held once (PCS 256x256: 65,536 agents).

``_agent_index`` (name -> row) is the dict bridge's own dict, and
``observation_spaces`` / ``action_spaces`` map every agent to the one shared
space without an entry each; both survive pickling.
"""

import pickle

import pytest

import seer_env


def test_per_agent_tables_are_held_once():
    env = seer_env.make("pcs_v0", width=4, height=2)
    assert env._agent_index is env._dicts.index
    assert len(env.observation_spaces) == len(env.action_spaces) == 8
    assert dict(env.action_spaces) == dict.fromkeys(env.possible_agents, env.action_space("cell_0"))
    with pytest.raises(KeyError):
        env.observation_spaces["cell_8"]
    env.reset(seed=1)
    copy = pickle.loads(pickle.dumps(env))
    assert copy._agent_index is copy._dicts.index
    assert list(copy.observation_spaces) == copy.possible_agents
    assert copy.observation_space("cell_3") == env.observation_space("cell_3")
