// CompiledModel with handlers written as plain C functions against
// handler_abi.h (what numba's cfuncs are to the runtime), so that
// `make tsan` and `make asan` see a compiled model's handlers on the worker
// threads without Python.
//
// The model: entities pass tokens to random neighbours after exponential
// delays (>= lookahead); each token carries a hop count. Checks: every
// executor and thread count returns the serial executor's digest and outputs
// after every step; a failing handler is a HandlerError naming entity, kind
// and time; a schedule before now + lookahead is a ContractViolation even when
// the handler goes on; below(0) is a HandlerError; a handler that loops until
// seer_handler_stop_requested() (as numba's polled loops do) stops when the
// step is interrupted, as Interrupted.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "comparison_executors.hpp"
#include "compiled_model.hpp"
#include "dispatcher.hpp"
#include "handler_abi.h"
#include "seer/errors.hpp"
#include "simulation.hpp"

namespace {

constexpr std::uint32_t kEntities = 40;
constexpr double kLookahead = 0.25;

struct State {
  std::uint64_t received;
  std::uint64_t hops;
  std::int64_t mode;  // failure to inject (Mode)
};
struct Public {
  std::uint64_t received;
};
struct Token {
  std::uint64_t hops;
};
enum Mode : std::int64_t {
  kFine = 0,
  kFail = 1,
  kEarly = 2,
  kBelowZero = 3,
  kSpin = 4,
  kFailObserve = 5,  // observe fails for agent kFailingAgent
};
constexpr std::uint64_t kFailingAgent = 13;

const seer_ctx_api* api() { return seer_handler_ctx_api(); }

std::int64_t mode_of(const void* params) { return *static_cast<const std::int64_t*>(params); }

std::int32_t pass_on(seer_ctx* ctx, Token token) {
  const std::uint32_t self = api()->self(ctx);
  const auto target = static_cast<std::uint32_t>(
      (self + 1 + api()->below(ctx, 3)) % api()->num_entities(ctx));
  const double at = api()->now(ctx) + api()->lookahead(ctx) + api()->exponential(ctx, 0.5);
  return api()->schedule(ctx, target, at, 0, &token, sizeof(token));
}

std::int32_t on_init(seer_ctx* ctx, void*, const void*, const void*) {
  for (int i = 0; i < 3; ++i) pass_on(ctx, Token{0});
  return SEER_OK;
}

std::int32_t on_action(seer_ctx* ctx, void*, const void*, const void*, std::int64_t a,
                       const float*, std::uint64_t) {
  if (a == 1) pass_on(ctx, Token{0});
  return SEER_OK;
}

std::int32_t on_event(seer_ctx* ctx, void* state, const void*, const void* params,
                      std::uint32_t, void* payload) {
  // The header compiled code reads in place (at offset 0) says what the context
  // functions say, and holds the model's own constants.
  const auto* header = reinterpret_cast<const seer_ctx_header*>(ctx);
  if (header->now != api()->now(ctx) || header->self != api()->self(ctx) ||
      header->source != api()->source(ctx) || header->num_entities != api()->num_entities(ctx) ||
      header->lookahead != api()->lookahead(ctx) || header->dt != api()->dt(ctx)) {
    return SEER_HANDLER_FAILED;
  }
  if (header->num_entities != kEntities || header->lookahead != kLookahead ||
      header->dt != 1.0 || header->self >= kEntities || header->source >= kEntities ||
      !(header->now > 0.0)) {
    return SEER_HANDLER_FAILED;
  }
  auto* s = static_cast<State*>(state);
  auto* token = static_cast<Token*>(payload);
  const auto mode = mode_of(params);
  s->received += 1;
  s->hops += token->hops;
  token->hops += 1;
  if (mode == kFail && api()->now(ctx) > 1.0) return SEER_HANDLER_FAILED;
  if (mode == kEarly && api()->now(ctx) > 1.0) {
    const std::uint32_t other = (api()->self(ctx) + 1) % kEntities;
    api()->schedule(ctx, other, api()->now(ctx) + kLookahead / 2, 0, token, sizeof(Token));
  }
  if (mode == kBelowZero && api()->now(ctx) > 1.0) api()->below(ctx, 0);
  if (mode == kSpin && api()->now(ctx) > 1.0) {
    while (seer_handler_stop_requested() == 0) {
    }
    return SEER_HANDLER_FAILED;  // what a polled numba loop returns when it gives up
  }
  pass_on(ctx, *token);  // a failed schedule is parked in ctx and rethrown by the runtime
  return SEER_OK;
}

std::int32_t write_snapshot(const void* states, void* snapshot, std::uint64_t begin,
                            std::uint64_t end, const void*, std::uint64_t*) {
  for (std::uint64_t e = begin; e < end; ++e) {
    static_cast<Public*>(snapshot)[e].received = static_cast<const State*>(states)[e].received;
  }
  return SEER_OK;
}

// Boundary hooks run over a range of agents; `out` is the range's first row.
std::int32_t observe(std::uint64_t begin, std::uint64_t end, const void* states,
                     const void* snapshot, std::uint64_t n, const void* params, void* out,
                     std::uint64_t size, std::uint64_t* failed) {
  const auto* snap = static_cast<const Public*>(snapshot);
  if (size != 2) return SEER_HANDLER_FAILED;
  for (std::uint64_t a = begin; a < end; ++a) {
    if (mode_of(params) == kFailObserve && a == kFailingAgent) {
      *failed = a;
      return SEER_HANDLER_FAILED;
    }
    float* obs = static_cast<float*>(out) + (a - begin) * size;
    obs[0] = static_cast<float>(static_cast<const State*>(states)[a].received);
    obs[1] = static_cast<float>(snap[(a + 1) % n].received);
  }
  return SEER_OK;
}

std::int32_t reward(std::uint64_t begin, std::uint64_t end, const void* states, const void*,
                    std::uint64_t, const void*, void* out, std::uint64_t, std::uint64_t*) {
  for (std::uint64_t a = begin; a < end; ++a) {
    static_cast<double*>(out)[a - begin] =
        static_cast<double>(static_cast<const State*>(states)[a].hops);
  }
  return SEER_OK;
}

std::unique_ptr<seer::Model> make_model(std::int64_t mode) {
  seer::ModelSpec spec;
  spec.name = "c_tokens";
  spec.num_entities = kEntities;
  spec.num_agents = kEntities / 2;
  spec.lookahead = kLookahead;
  spec.dt = 1.0;
  spec.obs_dim = 2;
  spec.obs_low.assign(2, 0.0f);
  spec.obs_high.assign(2, 1e9f);
  spec.action = seer::ActionSpec{true, 2, 0, 0.0f, 0.0f};
  spec.event_kinds = {"TOKEN"};
  seer_model_handlers handlers{};
  handlers.on_init = on_init;
  handlers.on_action = on_action;
  handlers.on_event = on_event;
  handlers.write_snapshot = write_snapshot;
  handlers.observe = observe;
  handlers.reward = reward;
  std::vector<unsigned char> params(sizeof(mode));
  std::memcpy(params.data(), &mode, sizeof(mode));
  return std::make_unique<seer::CompiledModel>(spec, sizeof(State), sizeof(Public), params,
                                               handlers, nullptr);
}

std::vector<std::int64_t> actions_for(int step) {
  std::vector<std::int64_t> a(kEntities / 2);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::int64_t>((i + step) % 2);
  return a;
}

struct Trace {
  std::vector<std::uint64_t> digests;
  std::vector<float> observations;
  std::vector<double> rewards;
};

Trace run(const std::string& executor, unsigned threads, int steps) {
  seer::SimulationOptions options;
  options.executor = executor;
  options.num_threads = threads;
  seer::Simulation sim(make_model(kFine), options);
  sim.reset(7);
  Trace trace;
  const std::size_t n = kEntities / 2;
  for (int k = 0; k < steps; ++k) {
    const auto actions = actions_for(k);
    sim.step(actions.data(), nullptr);
    trace.digests.push_back(sim.digest());
    const auto& out = sim.outputs();
    trace.observations.insert(trace.observations.end(), out.observations,
                              out.observations + n * 2);
    trace.rewards.insert(trace.rewards.end(), out.rewards, out.rewards + n);
  }
  return trace;
}

template <class Error>
void expect_failure(std::int64_t mode, const std::string& needle, const std::string& name) {
  seer::SimulationOptions options;
  options.executor = "parallel";
  options.num_threads = 2;
  seer::Simulation sim(make_model(mode), options);
  sim.reset(3);
  try {
    for (int k = 0; k < 4; ++k) {
      const auto actions = actions_for(k);
      sim.step(actions.data(), nullptr);
    }
    CHECK(false, name + ": no exception");
  } catch (const Error& error) {
    const std::string what = error.what();
    CHECK(what.find(needle) != std::string::npos, name + ": message '" + what + "'");
    CHECK(error.kind == "TOKEN", name + ": kind " + error.kind);
    CHECK(error.time > 1.0, name + ": time");
  }
}

// A boundary hook that fails for one agent of its range names that agent.
void expect_boundary_failure(unsigned threads) {
  const std::string name = "failing observe x" + std::to_string(threads);
  seer::SimulationOptions options;
  options.executor = threads == 1 ? "serial" : "parallel";
  options.num_threads = threads;
  seer::Simulation sim(make_model(kFailObserve), options);
  try {
    sim.reset(3);
    CHECK(false, name + ": no exception");
  } catch (const seer::HandlerError& error) {
    const std::string what = error.what();
    CHECK(what.find("observe(13)") != std::string::npos, name + ": message '" + what + "'");
    CHECK(error.entity == kFailingAgent && error.kind == "observe",
          name + ": entity " + std::to_string(error.entity) + ", kind " + error.kind);
  }
}

// Within one range too (the Simulation's ranges of 20 agents hold one each).
void expect_failure_inside_a_range() {
  const auto model = make_model(kFailObserve);
  model->reset_states();
  const std::size_t n = kEntities / 2;
  std::vector<float> obs(n * 2);
  std::vector<double> rewards(n);
  std::vector<std::uint8_t> flags(2 * n, 7);
  const seer::Outputs out{obs.data(), rewards.data(), flags.data(), flags.data() + n, nullptr};
  try {
    model->write_outputs(10, 20, out);
    CHECK(false, "range failure: no exception");
  } catch (const seer::HandlerError& error) {
    CHECK(error.entity == kFailingAgent, "range failure: entity " + std::to_string(error.entity));
  }
  // No terminated/truncated hooks: their rows are zeroed.
  const auto fine = make_model(kFine);
  fine->reset_states();
  fine->write_outputs(4, 9, out);
  CHECK(std::count(flags.begin(), flags.end(), 0) == 10, "flags of a range without hooks");
}

// A handler that loops until its step is stopped: request_interrupt() from
// another thread ends the step with Interrupted, and the next reset() runs.
void expect_interrupt(unsigned threads) {
  const std::string name = "interrupted spin x" + std::to_string(threads);
  seer::SimulationOptions options;
  options.executor = "parallel";
  options.num_threads = threads;
  seer::Simulation sim(make_model(kSpin), options);
  sim.reset(3);
  std::thread stopper([&sim] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    sim.request_interrupt();
  });
  try {
    for (int k = 0; k < 4; ++k) {
      const auto actions = actions_for(k);
      sim.step(actions.data(), nullptr);
    }
    CHECK(false, name + ": no exception");
  } catch (const seer::Interrupted& error) {
    const std::string what = error.what();
    // On one thread the spinning handler reports it; on more, another worker
    // may stop first, before its next handler.
    const bool named = what.find("inside entity") != std::string::npos &&
                       what.find("compiled on_event") != std::string::npos;
    CHECK(what.rfind("interrupted: ", 0) == 0 && (threads > 1 || named),
          name + ": message '" + what + "'");
  }
  stopper.join();
  CHECK(seer::Dispatcher::stops_in_progress().load() == 1, name + ": stop not counted");
  sim.reset(4);
  CHECK(seer::Dispatcher::stops_in_progress().load() == 0, name + ": stop still counted");
}

}  // namespace

int main() {
  seer::register_comparison_executors();
  const int steps = 6;
  const Trace serial = run("serial", 1, steps);
  const struct {
    const char* executor;
    unsigned threads;
  } cases[] = {{"parallel", 1}, {"parallel", 2}, {"parallel", 4}, {"locked", 3}, {"barrier", 2}};
  for (const auto& c : cases) {
    const Trace t = run(c.executor, c.threads, steps);
    const std::string name = std::string(c.executor) + " x" + std::to_string(c.threads);
    CHECK(t.digests == serial.digests, name + ": digests differ from serial");
    CHECK(std::memcmp(t.observations.data(), serial.observations.data(),
                      t.observations.size() * sizeof(float)) == 0,
          name + ": observations differ");
    CHECK(t.rewards == serial.rewards, name + ": rewards differ");
  }
  expect_failure<seer::HandlerError>(kFail, "compiled handler on_event failed", "failing handler");
  expect_failure<seer::ContractViolation>(kEarly, "before now + lookahead", "early schedule");
  expect_failure<seer::HandlerError>(kBelowZero, "n must be >= 1", "below(0)");
  expect_boundary_failure(1);
  expect_boundary_failure(2);
  expect_failure_inside_a_range();
  expect_interrupt(1);
  expect_interrupt(2);
  return check::report("test_compiled_model");
}
