#include "compiled_model.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "dispatcher.hpp"
#include "seer/errors.hpp"

// What a compiled handler's `seer_ctx*` points to: the handler's Context, the
// event it handles, and the first failure of a context call (rethrown by the
// trampoline when the handler returns: nothing unwinds through foreign code).
struct seer_ctx {
  seer_ctx_header header;  // first: compiled code reads it at offset 0
  seer::Context* context;
  const seer::Event* event;
  std::exception_ptr error;
};

namespace seer {

// A compiled handler's draw costs a call; with the refill inlined in it, the
// call also saved and restored six registers. Here the buffered word is taken
// inline and the refill (one draw in four) is a call of its own.
struct CompiledDraws {
  static std::uint64_t next_u64(EntityRng& rng) {
    if (__builtin_expect(rng.pos_ < 4, 1)) return rng.buf_[rng.pos_++];
    return after_refill(rng);
  }
  [[gnu::noinline]] static std::uint64_t after_refill(EntityRng& rng) { return rng.next_u64(); }
};

namespace {

// -- The context API (handler_abi.h). Every function is noexcept in effect.
// The handler's constants: what compiled code reads in place (seer_ctx_header).
double ctx_now(const seer_ctx* c) { return c->header.now; }
std::uint32_t ctx_self(const seer_ctx* c) { return c->header.self; }
std::uint32_t ctx_source(const seer_ctx* c) { return c->header.source; }
std::uint32_t ctx_num_entities(const seer_ctx* c) { return c->header.num_entities; }
double ctx_lookahead(const seer_ctx* c) { return c->header.lookahead; }
double ctx_dt(const seer_ctx* c) { return c->header.dt; }
double ctx_uniform(seer_ctx* c) {
  return EntityRng::unit(CompiledDraws::next_u64(c->context->rng()));
}
double ctx_exponential(seer_ctx* c, double mean) { return c->context->rng().exponential(mean); }
std::uint64_t ctx_next_u64(seer_ctx* c) { return CompiledDraws::next_u64(c->context->rng()); }

std::uint64_t ctx_below(seer_ctx* c, std::uint64_t n) {
  if (n == 0) {
    if (!c->error) {
      c->error = std::make_exception_ptr(std::invalid_argument("below(n): n must be >= 1, got 0"));
    }
    return 0;
  }
  return c->context->rng().below(n);
}

struct RawPayload {
  unsigned char bytes[kPayloadBytes];
};

// Out of line, as every failure path here: the calls that succeed stay short.
[[gnu::noinline]] [[gnu::cold]] std::int32_t refuse_payload(seer_ctx* c, std::uint64_t size) {
  c->error = std::make_exception_ptr(std::invalid_argument(
      "schedule: payload must be at most " + std::to_string(kPayloadBytes) + " bytes, got " +
      std::to_string(size)));
  return SEER_CONTEXT_FAILED;
}

// A payload of exactly N bytes: copied into the event with N-byte moves, where
// a RawPayload costs zeroing 64 bytes, a memcpy call and a 64-byte copy (a
// third of a small handler's trip through the ABI).
template <std::size_t N>
void schedule_sized(Context& context, std::uint32_t target, double time, std::uint32_t kind,
                    const void* payload) {
  struct Bytes {
    unsigned char bytes[N];
  } raw;
  std::memcpy(raw.bytes, payload, N);
  context.schedule(target, time, kind, raw);  // the event's other bytes are zeroed
}

std::int32_t ctx_schedule(seer_ctx* c, std::uint32_t target, double time, std::uint32_t kind,
                          const void* payload, std::uint64_t size) {
  if (c->error) return SEER_CONTEXT_FAILED;  // the handler already failed
  if (__builtin_expect(size > kPayloadBytes || (size > 0 && payload == nullptr), 0)) {
    return refuse_payload(c, size);
  }
  try {
    Context& context = *c->context;
    switch (size) {  // the common record sizes; any other through a RawPayload
      case 0: context.schedule(target, time, kind); break;  // the payload is zeroed
      case 8: schedule_sized<8>(context, target, time, kind, payload); break;
      case 16: schedule_sized<16>(context, target, time, kind, payload); break;
      case 24: schedule_sized<24>(context, target, time, kind, payload); break;
      case 32: schedule_sized<32>(context, target, time, kind, payload); break;
      default: {
        RawPayload raw{};
        std::memcpy(raw.bytes, payload, size);
        context.schedule(target, time, kind, raw);
      }
    }
    return SEER_OK;
  } catch (...) {
    c->error = std::current_exception();
    return SEER_CONTEXT_FAILED;
  }
}

std::int32_t ctx_request_decision(seer_ctx* c) {
  if (c->error) return SEER_CONTEXT_FAILED;  // the handler already failed
  try {
    c->context->request_decision();
    return SEER_OK;
  } catch (...) {
    c->error = std::current_exception();
    return SEER_CONTEXT_FAILED;
  }
}

const seer_ctx_api kApi = {SEER_HANDLER_ABI_VERSION,
                           ctx_now,
                           ctx_self,
                           ctx_source,
                           ctx_num_entities,
                           ctx_lookahead,
                           ctx_dt,
                           ctx_uniform,
                           ctx_exponential,
                           ctx_below,
                           ctx_next_u64,
                           ctx_schedule,
                           ctx_request_decision};

// The stop flag of the model whose compiled handler runs (or last ran) on this
// thread: what seer_handler_stop_requested() reads. Every compiled handler call
// sets it first, and only compiled handlers poll, so a poll always reads the
// flag of its own model; it is never restored (one TLS access a call).
thread_local const std::atomic<bool>* t_stop = nullptr;

// Points t_stop at a model's flag for the handler call that follows.
void point_polls_at(const std::atomic<bool>* flag) { t_stop = flag; }

bool stopping(const std::atomic<bool>* flag) {
  return flag != nullptr && flag->load(std::memory_order_relaxed);
}

// What a failed compiled handler says after "compiled handler ...": numba
// keeps no exception message, so the status is all there is.
std::string failed_with(std::int32_t status) {
  return "failed (status " + std::to_string(status) +
         "; numba keeps no exception message in compiled code: run the model with "
         "compiled=False to see the Python exception)";
}

// A handler that failed because its step was stopped: "... inside `where` at t".
[[noreturn]] void throw_interrupted(const std::string& where, double t) {
  std::ostringstream out;
  out.precision(17);
  out << "interrupted: the step stopped inside " << where << " at t=" << t << "; call reset()";
  throw Interrupted(out.str());
}

// A handler that failed: the C++ exception the dispatcher reports
// (ContractViolation as is, a handler that failed because its step was
// stopped as Interrupted, anything else as HandlerError). Out of line: the
// message's stream would otherwise make every call save registers.
[[noreturn]] [[gnu::noinline]] [[gnu::cold]] void handler_failed(const Context& context,
                                                                 const seer_ctx& c,
                                                                 std::int32_t status,
                                                                 const char* what,
                                                                 const std::atomic<bool>* stop) {
  if (c.error) std::rethrow_exception(c.error);
  if (stopping(stop)) {
    throw_interrupted("entity " + std::to_string(context.self()) + "'s compiled " + what,
                      context.now());
  }
  throw std::runtime_error(std::string("compiled handler ") + what + " " + failed_with(status));
}

// Calls a handler; handler_failed throws what its failure was.
template <class Fn>
void run(Context& context, const Event* event, const char* what,
         const std::atomic<bool>* stop, Fn&& call) {
  const ModelSpec& spec = context.spec();
  const EntityId self = context.self();
  seer_ctx c{{context.now(), spec.lookahead, spec.dt, self,
              event != nullptr ? event->source : self, spec.num_entities, 0},
             &context,
             event,
             nullptr};
  point_polls_at(stop);
  const std::int32_t status = call(&c);
  if (__builtin_expect(status != SEER_OK || c.error != nullptr, 0)) {
    handler_failed(context, c, status, what, stop);
  }
}

void require(bool present, const char* name) {
  if (!present) {
    throw std::invalid_argument(std::string("compiled model: handler ") + name + " is missing");
  }
}

}  // namespace
}  // namespace seer

extern "C" const seer_ctx_api* seer_handler_ctx_api(void) { return &seer::kApi; }

extern "C" int32_t seer_handler_stop_requested(void) {
  if (seer::Dispatcher::stops_in_progress().load(std::memory_order_relaxed) == 0) return 0;
  return seer::stopping(seer::t_stop) ? 1 : 0;
}

namespace seer {

CompiledModel::CompiledModel(ModelSpec spec, std::size_t state_size, std::size_t public_size,
                             std::vector<unsigned char> params,
                             const seer_model_handlers& handlers, std::shared_ptr<void> keepalive)
    : spec_(std::move(spec)),
      state_size_(state_size),
      public_size_(public_size),
      params_(std::move(params)),
      handlers_(handlers),
      keepalive_(std::move(keepalive)) {
  require(handlers_.on_action != nullptr, "on_action");
  require(handlers_.on_event != nullptr, "on_event");
  require(handlers_.write_snapshot != nullptr, "write_snapshot");
  require(spec_.num_agents == 0 || handlers_.observe != nullptr, "observe");
  require(spec_.num_agents == 0 || handlers_.reward != nullptr, "reward");
  require(spec_.info_keys.empty() || handlers_.info != nullptr, "info");
  require(spec_.state_dim == 0 || handlers_.global_state != nullptr, "global_state");
  require(spec_.total_keys.empty() || handlers_.totals != nullptr, "totals");
  if (state_size_ == 0) throw std::invalid_argument("compiled model: the state record is empty");
  const auto words = [this](std::size_t size) {
    return (size * spec_.num_entities + 7) / 8;
  };
  states_.assign(words(state_size_), 0);
  snapshot_.assign(words(public_size_), 0);
  if (params_.empty()) params_.push_back(0);  // a valid pointer for a model without parameters
}

void CompiledModel::reset_states() {
  std::fill(states_.begin(), states_.end(), 0);
  std::fill(snapshot_.begin(), snapshot_.end(), 0);
  boundary_time_ = 0.0;
  if (handlers_.reset == nullptr) return;
  point_polls_at(stop_);
  const std::int32_t status =
      handlers_.reset(states_data(), public_data(), spec_.num_entities, params(), nullptr, 0);
  check_boundary(status, "reset", 0);
}

void CompiledModel::on_init(Context& ctx) {
  if (handlers_.on_init == nullptr) return;
  run(ctx, nullptr, "on_init", stop_, [&](seer_ctx* c) {
    return handlers_.on_init(c, entity_state(ctx.self()), public_data(), params());
  });
}

void CompiledModel::on_step_begin(Context& ctx) {
  if (handlers_.on_step_begin == nullptr) return;
  run(ctx, nullptr, "on_step_begin", stop_, [&](seer_ctx* c) {
    return handlers_.on_step_begin(c, entity_state(ctx.self()), public_data(), params());
  });
}

void CompiledModel::on_action(Context& ctx, const ActionView& action) {
  run(ctx, nullptr, "on_action", stop_, [&](seer_ctx* c) {
    return handlers_.on_action(c, entity_state(ctx.self()), public_data(), params(),
                               action.discrete, action.box, action.dim);
  });
}

void CompiledModel::on_event(Context& ctx, const Event& event) {
  // The handler's writable payload is the event's own bytes, not a copy: the
  // event is the executor's, and nothing reads its payload after on_event
  // (Model::on_event).
  auto* payload = const_cast<unsigned char*>(event.payload);
  run(ctx, &event, "on_event", stop_, [&](seer_ctx* c) {
    return handlers_.on_event(c, entity_state(ctx.self()), public_data(), params(), event.kind,
                              payload);
  });
}

void CompiledModel::write_snapshot(EntityId e) { write_snapshots(e, e + 1); }

void CompiledModel::write_snapshots(EntityId begin, EntityId end) {
  point_polls_at(stop_);
  std::uint64_t failed = begin;
  const std::int32_t status =
      handlers_.write_snapshot(states_data(), public_data(), begin, end, params(), &failed);
  check_boundary(status, "write_snapshot", static_cast<EntityId>(failed));
}

void CompiledModel::check_boundary(std::int32_t status, const char* what, EntityId agent) const {
  if (status == SEER_OK) return;
  const std::string hook = std::string(what) + "(" + std::to_string(agent) + ")";
  if (stopping(stop_)) throw_interrupted("the compiled " + hook, boundary_time_);
  std::ostringstream out;
  out.precision(17);
  out << "handler failed: " << hook << " at t=" << boundary_time_ << ": compiled handler "
      << failed_with(status);
  throw HandlerError(out.str(), agent, what, boundary_time_);
}

void CompiledModel::call_agents_hook(seer_agents_fn fn, const char* what, EntityId begin,
                                     EntityId end, void* out, std::size_t out_size) const {
  point_polls_at(stop_);
  std::uint64_t failed = begin;
  const std::int32_t status = fn(begin, end, states_data(), public_data(), spec_.num_entities,
                                 params(), out, out_size, &failed);
  check_boundary(status, what, static_cast<EntityId>(failed));
}

void CompiledModel::write_flags(seer_agents_fn fn, const char* what, EntityId begin,
                                EntityId end, std::uint8_t* rows) const {
  if (fn == nullptr) {
    std::fill(rows, rows + (end - begin), std::uint8_t{0});  // a hook not given: never
    return;
  }
  call_agents_hook(fn, what, begin, end, rows, 1);
}

void CompiledModel::write_outputs(EntityId begin, EntityId end, const Outputs& out) const {
  call_agents_hook(handlers_.observe, "observe", begin, end,
                   out.observations + begin * spec_.obs_dim, spec_.obs_dim);
  call_agents_hook(handlers_.reward, "reward", begin, end, out.rewards + begin, 1);
  write_flags(handlers_.terminated, "terminated", begin, end, out.terminations + begin);
  write_flags(handlers_.truncated, "truncated", begin, end, out.truncations + begin);
  const std::size_t n_info = spec_.info_keys.size();
  if (n_info != 0) {
    call_agents_hook(handlers_.info, "info", begin, end, out.infos + begin * n_info, n_info);
  }
}

void CompiledModel::observe(EntityId agent, float* obs) const {
  call_agents_hook(handlers_.observe, "observe", agent, agent + 1, obs, spec_.obs_dim);
}

double CompiledModel::reward(EntityId agent) const {
  double value = 0.0;
  call_agents_hook(handlers_.reward, "reward", agent, agent + 1, &value, 1);
  return value;
}

bool CompiledModel::terminated(EntityId agent) const {
  std::uint8_t flag = 0;
  write_flags(handlers_.terminated, "terminated", agent, agent + 1, &flag);
  return flag != 0;
}

bool CompiledModel::truncated(EntityId agent) const {
  std::uint8_t flag = 0;
  write_flags(handlers_.truncated, "truncated", agent, agent + 1, &flag);
  return flag != 0;
}

void CompiledModel::info(EntityId agent, std::int64_t* out) const {
  if (handlers_.info == nullptr) return;
  call_agents_hook(handlers_.info, "info", agent, agent + 1, out, spec_.info_keys.size());
}

void CompiledModel::state(float* out) const {
  if (handlers_.global_state == nullptr) return;
  point_polls_at(stop_);
  const std::int32_t status =
      handlers_.global_state(const_cast<unsigned char*>(states_data()), public_data(),
                             spec_.num_entities, params(), out, spec_.state_dim);
  check_boundary(status, "global_state", 0);
}

void CompiledModel::totals(std::int64_t* out) const {
  if (handlers_.totals == nullptr) return;
  point_polls_at(stop_);
  const std::int32_t status =
      handlers_.totals(const_cast<unsigned char*>(states_data()), public_data(),
                       spec_.num_entities, params(), out, spec_.total_keys.size());
  check_boundary(status, "totals", 0);
}

}  // namespace seer
