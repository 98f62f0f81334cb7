"""The C++ route, walked: scaffold a prototype's project, build it, port it, verify it."""

import re
import subprocess
import sys
import time
from pathlib import Path

import heat_ring_prototype
import pytest

from seer_env.sdk.scaffold import main, new_cpp_project
from seer_env.testing import verify

TESTS = Path(__file__).resolve().parents[1] / "support"  # the prototype's folder

# What a user writes when porting HeatRing: the bodies of the hooks marked PORT.
PORTED = {
    "on_init": """  void on_init(seer::Context& ctx) override {
    ctx.schedule(ctx.self(), 0.1, kTick);
  }""",
    "on_action": """  void on_action(seer::Context& ctx, const seer::ActionView& action) override {
    if (action.discrete) ctx.schedule(next(ctx), ctx.now() + spec_.lookahead, kToken);
  }""",
    "on_event": """  void on_event(seer::Context& ctx, const seer::Event& event) override {
    State& s = self_state(ctx);
    if (event.kind == kTick) {
      const double u = ctx.rng().uniform();
      const double neighbour = snapshot(next(ctx)).heat;
      s.heat = s.heat * 0.5 + u * 0.3 + 0.1;
      s.heat += neighbour * 0.25;
      ctx.schedule(ctx.self(), ctx.now() + 0.3, kTick);
    } else {
      s.tokens += 1;
      s.heat += 1.0;
    }
  }
  seer::EntityId next(const seer::Context& ctx) const {
    return (ctx.self() + 1) % spec_.num_entities;
  }""",
    "observe": """  void observe(seer::EntityId agent, float* obs) const override {
    obs[0] = static_cast<float>(state_of(agent).heat);
    obs[1] = static_cast<float>(state_of(agent).tokens);
  }""",
    "reward": """  double reward(seer::EntityId agent) const override {
    return static_cast<double>(state_of(agent).tokens);
  }""",
}


def _port(source: str) -> str:
    """Replace each PORT-marked stub (the C++ after the comment block) with its port."""
    for hook, code in PORTED.items():
        comment = rf"  // PORT: HeatRing\.{hook}, [^\n]*\n(?:  //[^\n]*\n)*"
        one_line = rf"  [^\n]* {hook}\([^\n]*\{{ [^\n]*\}}\n"
        block = rf"  [^\n]* {hook}\([^\n]*\{{\n(?:    [^\n]*\n)*  \}}\n"
        pattern = re.compile(rf"({comment})(?:{one_line}|{block})")
        source, count = pattern.subn(lambda m, c=code: m.group(1) + c + "\n", source)
        assert count == 1, f"the PORT stub of {hook} was not found"
    # The sizes the scaffold took from the default config, computed from the parameter.
    sized = "spec_.num_entities = spec_.num_agents = static_cast<std::uint32_t>(num_entities_);"
    source = source.replace("spec_.num_entities = 6;", sized).replace("spec_.num_agents = 6;", "")
    return source


def _install(project: Path, target: Path) -> Path:
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    done = subprocess.run([*pip, "--target", str(target), str(project)], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    return target


_BEFORE_PORT = """
import sys
sys.path[:0] = [{site!r}, {tests!r}]
import heat_ring
from seer_env.testing import verify
report = verify(heat_ring.NAME, heat_ring.Prototype, seeds=(0, 1), steps=10, strict=False)
print(report)
"""


@pytest.mark.slow
def test_scaffold_build_port_verify(tmp_path):
    project = tmp_path / "heat_ring"
    files = new_cpp_project("heat_ring_prototype:HeatRing", project)
    assert {f.name for f in files} == {
        "CMakeLists.txt", "pyproject.toml", "heat_ring.cpp", "__init__.py"
    }  # fmt: skip
    source = (project / "src" / "cpp" / "heat_ring.cpp").read_text()
    assert 'static_assert(offsetof(State, tokens) == 8, "State.tokens: its offset");' in source
    assert 'seer::int_param("num_entities", 6, 2, 1048576, "agents in the ring")' in source
    assert "// PORT: HeatRing.on_event, the prototype's code:" in source
    assert '  //           state["tokens"] += 1\n' in source

    # As generated: builds, keeps the contract, is serial-equivalent; only the
    # comparison with the prototype fails (nothing ported yet), located.
    site = _install(project, tmp_path / "site_stubs")
    script = _BEFORE_PORT.format(site=str(site), tests=str(TESTS))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "ok      declarations" in done.stdout
    assert "ok      contract (port)" in done.stdout
    assert "ok      serial equivalence" in done.stdout
    assert "ok      reset (reused env)" in done.stdout
    assert "FAILED  prototype vs port: port differs from prototype (seed 0) at" in done.stdout

    # Ported: verify passes, states and pending events included.
    (project / "src" / "cpp" / "heat_ring.cpp").write_text(_port(source))
    site = _install(project, tmp_path / "site_ported")
    sys.path.insert(0, str(site))
    try:
        import heat_ring

        start = time.perf_counter()
        report = verify(heat_ring.NAME, heat_ring.Prototype)
        assert time.perf_counter() - start < 60
        assert "entity states, pending events and the digest" in str(report)
        verify(heat_ring.NAME, heat_ring.Prototype, config={"num_entities": 3}, seeds=(5,))
        assert heat_ring.Prototype is heat_ring_prototype.HeatRing
    finally:
        sys.path.remove(str(site))


def test_dest_must_be_new(tmp_path):
    (tmp_path / "x").write_text("")
    with pytest.raises(ValueError, match="dest must be a new or empty folder"):
        new_cpp_project(heat_ring_prototype.HeatRing, tmp_path)
    with pytest.raises(ValueError, match="prototype must be 'pkg.module:Class'"):
        new_cpp_project("heat_ring_prototype", tmp_path / "new")


def test_the_command_line_writes_the_project(tmp_path, capsys):
    dest = tmp_path / "port"
    assert main(["new-cpp", "heat_ring_prototype:HeatRing", str(dest)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert (dest / "src" / "heat_ring" / "__init__.py").is_file()
    assert main(["new-cpp", "heat_ring_prototype:Nope", str(tmp_path / "x")]) == 2
    assert "is not a seer_env.PythonModel subclass" in capsys.readouterr().err
