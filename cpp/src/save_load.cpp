// Simulation::save() and Simulation::load(): the save format, its writer
// and its reader (seer_env/testing/save_format.py reads the same layout).
//
// Layout, native byte order: the magic "SEERSAV3", a 64-bit checksum
// (save_checksum.hpp) of everything after the 16-byte header, then num_entities, the entity state
// and public record sizes, the clock, steps, events handled and seed; per
// entity its state and public records, RNG position (blocks, used) and next
// sequence number; the pending events (count, then the events in key order);
// the five output arrays of the last boundary (each a count, then values),
// and a sixth, the action masks, for a model that declares action_mask;
// with event-driven decisions, where the step's windows stand and each
// waiting agent's request and held events (DecisionRecord below); last, the
// Simulation's identity() text and its length (a uint64), read
// first: a save of another model or configuration is refused by name.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "save_checksum.hpp"
#include "seer/errors.hpp"
#include "simulation.hpp"

namespace seer {
namespace {

// Format 3: magic, a 64-bit checksum (save_checksum.hpp) of everything after
// it, then the payload. The checksum refuses accidental corruption (bit
// flips, truncation) before any field is read; every field is validated too
// (a crafted blob).
constexpr char kSaveMagic[8] = {'S', 'E', 'E', 'R', 'S', 'A', 'V', '3'};
constexpr char kSaveMagicPrefix[7] = {'S', 'E', 'E', 'R', 'S', 'A', 'V'};
constexpr std::size_t kSaveHeader = sizeof(kSaveMagic) + sizeof(std::uint64_t);

[[noreturn]] void refuse(const std::string& why) {
  throw std::invalid_argument("saved state is corrupt or not from this model: " + why);
}

// The action masks' share of the outputs: a count, then one byte per agent
// and action (none for a model without action_mask).
std::size_t mask_bytes(const ModelSpec& s) {
  if (!s.action_mask) return 0;
  return sizeof(std::uint64_t) + std::size_t{s.num_agents} * static_cast<std::size_t>(s.action.n);
}

// Writes into out[0, size): save_size() bytes, exactly (checked).
class Writer {
 public:
  Writer(char* out, std::size_t size) : out_(out), size_(size) {}
  template <class T>
  void value(const T& v) { bytes(&v, sizeof(T)); }
  void bytes(const void* p, std::size_t n) {
    if (n == 0) return;  // p may be null (empty outputs of a model without agents)
    if (n > size_ - pos_) throw std::logic_error("save_into: the buffer is smaller than save_size()");
    std::memcpy(out_ + pos_, p, n);
    pos_ += n;
  }
  std::size_t written() const { return pos_; }

 private:
  char* out_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// Reads in[0, end).
class Reader {
 public:
  Reader(std::string_view in, std::size_t end) : in_(in), end_(end) {}
  Reader(std::string_view in, std::size_t begin, std::size_t end)
      : in_(in), end_(end), pos_(begin) {}
  template <class T>
  T value() {
    T v;
    bytes(&v, sizeof(T));
    return v;
  }
  void bytes(void* p, std::size_t n) {
    if (n == 0) return;  // memcpy to a null p is undefined even for 0 bytes (UBSan)
    if (n > end_ - pos_) throw std::invalid_argument("saved state is truncated");
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  bool done() const { return pos_ == end_; }
  std::size_t remaining() const { return end_ - pos_; }

 private:
  std::string_view in_;
  std::size_t end_;
  std::size_t pos_ = 0;
};

// identity() text as key -> value.
std::map<std::string, std::string> identity_fields(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return fields;
}

// Why a save of identity `saved` cannot load into `own`: what differs.
std::string identity_difference(const std::string& saved, const std::string& own) {
  auto theirs = identity_fields(saved);
  auto ours = identity_fields(own);
  std::ostringstream out;
  out << "saved state is for a different model or configuration: ";
  if (theirs["model"] != ours["model"]) {
    out << "the save is of model '" << theirs["model"] << "', this env runs '" << ours["model"]
        << "'";
    return out.str();
  }
  out << ours["model"] << " with";
  const char* sep = " ";
  std::map<std::string, std::string> keys = theirs;
  keys.insert(ours.begin(), ours.end());
  for (const auto& [key, unused] : keys) {
    const auto t = theirs.find(key);
    const auto o = ours.find(key);
    const std::string a = t == theirs.end() ? "(none)" : t->second;
    const std::string b = o == ours.end() ? "(none)" : o->second;
    if (a == b) continue;
    out << sep << key << "=" << a << " (this env: " << b << ")";
    sep = ", ";
  }
  return out.str();
}

// Event-driven decisions: the step's windows and the waiting agents.
struct DecisionRecord {
  std::uint8_t step_open, window_open, step_begin_done, answers_due;
  std::uint32_t waiting;  // agents parked; each then: agent, since, held count, held events
  double window_begin, window_end;
  std::uint64_t step_events, step_cross_events, step_rounds;
};
static_assert(sizeof(DecisionRecord) == 48, "DecisionRecord must have no padding");

// A save's decision record, read and checked before load() changes anything.
struct DecisionState {
  bool step_open = false, window_open = false, step_begin_done = false, answers_due = false;
  double window_begin = 0.0, window_end = 0.0;
  std::uint64_t step_events = 0, step_cross_events = 0, step_rounds = 0;
  struct Waiting {
    EntityId agent;
    double since;
    std::vector<Event> held;
  };
  std::vector<Waiting> waiting;  // by agent
};

// Reads and checks the decision record of a save at `now`, `steps`.
DecisionState read_decisions(Reader& r, const ModelSpec& s, double now, std::uint64_t steps) {
  DecisionState out;
  if (r.remaining() < sizeof(DecisionRecord)) refuse("no decision record");
  const auto rec = r.value<DecisionRecord>();
  if (rec.step_open > 1 || rec.window_open > 1 || rec.step_begin_done > 1 ||
      rec.answers_due > 1 || rec.waiting > s.num_agents) {
    refuse("decision record flags");
  }
  const double step_end = static_cast<double>(steps + 1) * s.dt;
  if (!(rec.window_begin >= now && rec.window_begin <= rec.window_end &&
        rec.window_end <= step_end) ||
      (rec.window_open && !rec.step_open) || (rec.answers_due && rec.waiting == 0)) {
    refuse("decision window [" + std::to_string(rec.window_begin) + ", " +
           std::to_string(rec.window_end) + ")");
  }
  out.step_open = rec.step_open != 0;
  out.window_open = rec.window_open != 0;
  out.window_begin = rec.window_begin;
  out.window_end = rec.window_end;
  out.step_events = rec.step_events;
  out.step_cross_events = rec.step_cross_events;
  out.step_rounds = rec.step_rounds;
  out.step_begin_done = rec.step_begin_done != 0;
  out.answers_due = rec.answers_due != 0;
  EntityId previous = 0;
  for (std::uint32_t k = 0; k < rec.waiting; ++k) {
    DecisionState::Waiting& wait = out.waiting.emplace_back();
    const auto agent = r.value<std::uint64_t>();
    if (agent >= s.num_agents || (k > 0 && agent <= previous)) {
      refuse("waiting agent " + std::to_string(agent));
    }
    previous = static_cast<EntityId>(agent);
    wait.agent = static_cast<EntityId>(agent);
    wait.since = r.value<double>();
    if (!(wait.since >= now && wait.since <= step_end)) {
      refuse("agent " + std::to_string(agent) + " waits since t=" + std::to_string(wait.since));
    }
    const auto held = r.value<std::uint64_t>();
    if (held > r.remaining() / sizeof(Event)) refuse("held events of agent " + std::to_string(agent));
    wait.held.resize(held);
    for (Event& e : wait.held) {
      r.bytes(&e, sizeof(Event));
      if (e.target != agent || e.source >= s.num_entities || !std::isfinite(e.time) ||
          e.time < wait.since || e.time >= rec.window_end || e.reserved != 0 ||
          (!s.event_kinds.empty() && e.kind >= s.event_kinds.size())) {
        refuse("a held event of agent " + std::to_string(agent));
      }
    }
  }
  if (!r.done()) throw std::invalid_argument("saved state has trailing bytes");
  return out;
}


template <class T>
void write_array(Writer& w, const T* data, std::size_t n) {
  w.value<std::uint64_t>(n);
  w.bytes(data, n * sizeof(T));
}

template <class T>
void read_array(Reader& r, T* data, std::size_t n) {
  if (r.value<std::uint64_t>() != n) {
    throw std::invalid_argument("saved state has a different shape");
  }
  r.bytes(data, n * sizeof(T));
}

}  // namespace

std::string Simulation::identity() const {
  const ModelSpec& s = spec();
  std::ostringstream out;
  out.precision(17);
  out << "model=" << s.name << '\n';
  for (const auto& [key, value] : config_) out << key << '=' << value << '\n';
  out << "spec.entities=" << s.num_entities << "\nspec.agents=" << s.num_agents
      << "\nspec.dt=" << s.dt << "\nspec.lookahead=" << s.lookahead
      << "\nspec.obs_dim=" << s.obs_dim << "\nspec.state_bytes=" << model_->entity_state_size()
      << "\nspec.public_bytes=" << model_->public_size() << '\n';
  // A window's state differs between the two: a save resumes in its own.
  if (options_.decisions == DecisionMode::kWindows) out << "decisions=windows\n";
  if (options_.decisions == DecisionMode::kOneAtATime) out << "decisions=one_at_a_time\n";
  return out.str();
}

std::size_t Simulation::save_size() const {
  const ModelSpec& s = spec();
  const std::size_t n = s.num_agents;
  const std::size_t per_entity = model_->entity_state_size() + model_->public_size() +
                                 sizeof(std::uint64_t) + sizeof(std::uint32_t) +
                                 sizeof(std::uint64_t);
  return kSaveHeader + 7 * sizeof(std::uint64_t) + s.num_entities * per_entity +
         sizeof(std::uint64_t) + executor_->pending_count() * sizeof(Event) +
         5 * sizeof(std::uint64_t) + n * s.obs_dim * sizeof(*out_.observations) +
         n * (sizeof(*out_.rewards) + sizeof(*out_.terminations) + sizeof(*out_.truncations)) +
         n * s.info_keys.size() * sizeof(*out_.infos) + mask_bytes(s) + decisions_size() +
         identity().size() + sizeof(std::uint64_t);
}

std::size_t Simulation::decisions_size() const {
  if (options_.decisions == DecisionMode::kLockstep) return 0;
  const DecisionBoard& board = dispatcher_.decisions();
  std::size_t size = sizeof(DecisionRecord);
  for (EntityId a = 0; a < board.agents(); ++a) {
    if (!board.parked(a)) continue;
    size += sizeof(std::uint64_t) + sizeof(double) + sizeof(std::uint64_t) +
            board.held(a).size() * sizeof(Event);
  }
  return size;
}

void Simulation::save_into(char* out, std::size_t size) const {
  require_ready("save()");
  const ModelSpec& s = spec();
  std::vector<Event> storage;  // used only by executors that cannot lend their events
  const std::vector<const Event*> pending = pending_in_key_order(storage);
  const std::string id = identity();
  const std::size_t n = s.num_agents;
  Writer w(out, size);
  w.bytes(kSaveMagic, sizeof(kSaveMagic));
  w.value<std::uint64_t>(0);  // the checksum, filled in below
  w.value<std::uint64_t>(s.num_entities);
  w.value<std::uint64_t>(model_->entity_state_size());
  w.value<std::uint64_t>(model_->public_size());
  w.value(now_);
  w.value(steps_);
  w.value(events_total_);
  w.value(dispatcher_.seed());
  for (EntityId e = 0; e < s.num_entities; ++e) {
    w.bytes(model_->entity_state(e), model_->entity_state_size());
    w.bytes(model_->public_state(e), model_->public_size());
    const EntityRuntime& rt = dispatcher_.entity(e);
    w.value(rt.rng.blocks());
    w.value(rt.rng.used());
    w.value(rt.next_seq);
  }
  w.value<std::uint64_t>(pending.size());
  for (const Event* e : pending) w.bytes(e, sizeof(Event));
  write_array(w, out_.observations, n * s.obs_dim);
  write_array(w, out_.rewards, n);
  write_array(w, out_.terminations, n);
  write_array(w, out_.truncations, n);
  write_array(w, out_.infos, n * s.info_keys.size());
  if (s.action_mask) write_array(w, out_.action_masks, n * static_cast<std::size_t>(s.action.n));
  if (options_.decisions != DecisionMode::kLockstep) {
    const DecisionBoard& board = dispatcher_.decisions();
    const DecisionClock& c = decision_;
    DecisionRecord rec{};
    rec.step_open = c.step_open;
    rec.window_open = c.window_open;
    rec.step_begin_done = !dispatcher_.has_step_begin() && model_->has_step_begin();
    rec.answers_due = !requests_.empty();
    rec.waiting = board.waiting();
    rec.window_begin = c.window_begin;
    rec.window_end = c.window_end;
    rec.step_events = c.stats.events;
    rec.step_cross_events = c.stats.cross_events;
    rec.step_rounds = c.stats.rounds;
    w.value(rec);
    for (EntityId a = 0; a < board.agents(); ++a) {
      if (!board.parked(a)) continue;
      w.value<std::uint64_t>(a);
      w.value(board.since(a));
      w.value<std::uint64_t>(board.held(a).size());
      for (const Event& e : board.held(a)) w.bytes(&e, sizeof(Event));
    }
  }
  w.bytes(id.data(), id.size());
  w.value<std::uint64_t>(id.size());
  // The writer refused a smaller buffer; a larger one is as wrong.
  if (w.written() != size) throw std::logic_error("save_into: size is not save_size()");
  const std::uint64_t sum = save_checksum(out + kSaveHeader, size - kSaveHeader);
  std::memcpy(out + sizeof(kSaveMagic), &sum, sizeof(sum));
}

std::string Simulation::save() const {
  std::string out(save_size(), '\0');
  save_into(out.data(), out.size());
  return out;
}

void Simulation::load(const char* data, std::size_t size) {
  const std::string_view blob(data, size);
  const ModelSpec& s = spec();
  if (blob.size() < kSaveHeader) {
    throw std::invalid_argument("saved state is truncated (" + std::to_string(blob.size()) +
                                " bytes)");
  }
  if (std::memcmp(blob.data(), kSaveMagicPrefix,
                                               sizeof(kSaveMagicPrefix)) != 0) {
    throw std::invalid_argument("saved state: not a seer_env save");
  }
  if (blob[sizeof(kSaveMagicPrefix)] != kSaveMagic[sizeof(kSaveMagicPrefix)]) {
    throw std::invalid_argument(std::string("saved state has format version '") +
                                blob[sizeof(kSaveMagicPrefix)] + "'; this seer_env reads '" +
                                kSaveMagic[sizeof(kSaveMagicPrefix)] +
                                "' only: saves of older versions cannot be loaded");
  }
  std::uint64_t sum;
  std::memcpy(&sum, blob.data() + sizeof(kSaveMagic), sizeof(sum));
  if (sum != save_checksum(blob.data() + kSaveHeader, blob.size() - kSaveHeader)) {
    refuse("the checksum does not match (the bytes were changed or truncated)");
  }
  // The identity trailer first: a save of another model or configuration is
  // refused by name, before any shape check could blame corruption.
  std::uint64_t id_size = 0;
  if (blob.size() < kSaveHeader + sizeof(id_size)) refuse("no identity");
  std::memcpy(&id_size, blob.data() + blob.size() - sizeof(id_size), sizeof(id_size));
  if (id_size > blob.size() - kSaveHeader - sizeof(id_size)) {
    refuse("identity of " + std::to_string(id_size) + " bytes");
  }
  const std::size_t body_end = blob.size() - sizeof(id_size) - id_size;
  const std::string saved_id(blob.substr(body_end, id_size));
  const std::string own_id = identity();
  if (saved_id != own_id) throw std::invalid_argument(identity_difference(saved_id, own_id));
  Reader r(blob, body_end);
  std::string header(kSaveHeader, '\0');
  r.bytes(header.data(), kSaveHeader);
  if (r.value<std::uint64_t>() != s.num_entities ||
      r.value<std::uint64_t>() != model_->entity_state_size() ||
      r.value<std::uint64_t>() != model_->public_size()) {
    throw std::invalid_argument("saved state is for a different model or configuration");
  }
  // Read and check everything the runtime relies on before changing anything
  // it cannot rebuild: a refused blob leaves the clock, RNG and queues alone.
  const auto now = r.value<double>();
  if (!std::isfinite(now) || now < 0.0) refuse("clock " + std::to_string(now));
  const auto steps = r.value<std::uint64_t>();
  // The clock is always steps x dt (every step ends at (steps + 1) x dt): a
  // blob claiming another clock would make the next step's window end before
  // `now`, and run_until() from there walk up to it one dt at a time.
  if (now != static_cast<double>(steps) * s.dt) {
    refuse("clock " + std::to_string(now) + " is not steps x dt (" + std::to_string(steps) +
           " x " + std::to_string(s.dt) + ")");
  }
  const auto events_total = r.value<std::uint64_t>();
  const auto seed = r.value<std::uint64_t>();
  const std::size_t state_size = model_->entity_state_size();
  const std::size_t public_size = model_->public_size();
  const std::size_t per_entity = state_size + public_size + sizeof(std::uint64_t) +
                                 sizeof(std::uint32_t) + sizeof(std::uint64_t);
  if (r.remaining() / per_entity < s.num_entities) refuse("truncated entity records");
  std::string states(s.num_entities * state_size, '\0');
  std::string publics(s.num_entities * public_size, '\0');
  struct Stream {
    std::uint64_t blocks;
    std::uint32_t used;
    std::uint64_t next_seq;
  };
  std::vector<Stream> streams(s.num_entities);
  for (EntityId e = 0; e < s.num_entities; ++e) {
    r.bytes(states.data() + e * state_size, state_size);
    r.bytes(publics.data() + e * public_size, public_size);
    Stream& st = streams[e];
    st.blocks = r.value<std::uint64_t>();
    st.used = r.value<std::uint32_t>();
    st.next_seq = r.value<std::uint64_t>();
    // A stream draws 4 words a block: used in [0, 4]; a fresh one (no block
    // yet) is exhausted (4).
    if (st.used > 4 || (st.blocks == 0 && st.used != 4)) {
      refuse("entity " + std::to_string(e) + " RNG counter (blocks " + std::to_string(st.blocks) +
             ", used " + std::to_string(st.used) + ")");
    }
  }
  const auto n_pending = r.value<std::uint64_t>();
  if (n_pending > r.remaining() / sizeof(Event)) {
    refuse(std::to_string(n_pending) + " pending events in " + std::to_string(r.remaining()) +
           " bytes");
  }
  std::vector<Event> pending(n_pending);
  for (std::uint64_t i = 0; i < n_pending; ++i) {
    Event& ev = pending[i];
    r.bytes(&ev, sizeof(Event));
    const std::string which = "pending event " + std::to_string(i) + " ";
    if (ev.target >= s.num_entities || ev.source >= s.num_entities) {
      refuse(which + "from entity " + std::to_string(ev.source) + " to entity " +
             std::to_string(ev.target) + " (" + std::to_string(s.num_entities) + " entities)");
    }
    if (!std::isfinite(ev.time) || ev.time < now) {
      refuse(which + "at t=" + std::to_string(ev.time) + ", before the saved clock t=" +
             std::to_string(now));
    }
    if (!s.event_kinds.empty() && ev.kind >= s.event_kinds.size()) {
      refuse(which + "of kind " + std::to_string(ev.kind));
    }
    if (ev.reserved != 0) refuse(which + "has nonzero reserved bytes");
    if (i > 0 && !key_less(pending[i - 1], ev)) refuse(which + "is out of order or repeated");
  }
  const std::size_t n = s.num_agents;
  const std::uint64_t output_bytes =
      5 * sizeof(std::uint64_t) + n * s.obs_dim * sizeof(*out_.observations) +
      n * sizeof(*out_.rewards) + n * sizeof(*out_.terminations) +
      n * sizeof(*out_.truncations) + n * s.info_keys.size() * sizeof(*out_.infos) +
      mask_bytes(s);
  if (r.remaining() < output_bytes ||
      (options_.decisions == DecisionMode::kLockstep && r.remaining() != output_bytes)) {
    refuse(std::to_string(r.remaining()) + " bytes of outputs, expected " +
           std::to_string(output_bytes));
  }
  // The decision record follows the outputs: checked now, before anything changes.
  DecisionState decided;
  if (options_.decisions != DecisionMode::kLockstep) {
    Reader record(blob, body_end - (r.remaining() - output_bytes), body_end);
    decided = read_decisions(record, s, now, steps);
  }
  // Valid: commit (the outputs' sizes were checked just above, so the reads
  // below cannot fail part-way).
  needs_reset_ = true;
  now_ = now;
  steps_ = steps;
  events_total_ = events_total;
  dispatcher_.reseed(seed);
  for (EntityId e = 0; e < s.num_entities; ++e) {
    std::memcpy(model_->entity_state(e), states.data() + e * state_size, state_size);
    std::memcpy(model_->public_state(e), publics.data() + e * public_size, public_size);
    EntityRuntime& rt = dispatcher_.entity(e);
    rt.rng.restore(seed, e, streams[e].blocks, streams[e].used);
    rt.next_seq = streams[e].next_seq;
  }
  executor_->clear();
  executor_->insert_all(pending.data(), pending.size());
  read_array(r, out_.observations, n * s.obs_dim);
  read_array(r, out_.rewards, n);
  read_array(r, out_.terminations, n);
  read_array(r, out_.truncations, n);
  read_array(r, out_.infos, n * s.info_keys.size());
  if (s.action_mask) read_array(r, out_.action_masks, n * static_cast<std::size_t>(s.action.n));
  DecisionBoard& board = dispatcher_.decisions();
  board.clear();
  requests_.clear();
  decision_ = DecisionClock{};
  dispatcher_.skip_step_begin(decided.step_begin_done);
  if (options_.decisions != DecisionMode::kLockstep) {
    decision_.step_open = decided.step_open;
    decision_.window_open = decided.window_open;
    decision_.window_begin = decided.window_begin;
    decision_.window_end = decided.window_end;
    decision_.stats.events = decided.step_events;
    decision_.stats.cross_events = decided.step_cross_events;
    decision_.stats.rounds = decided.step_rounds;
    decision_.started = std::chrono::steady_clock::now();
    for (DecisionState::Waiting& w : decided.waiting) {
      board.restore(w.agent, w.since, std::move(w.held));
      if (decided.answers_due) requests_.push_back({w.agent, w.since});
    }
    sort_requests(requests_);
  } else if (!r.done()) {
    throw std::invalid_argument("saved state has trailing bytes");
  }
  model_->after_snapshot();
  has_reset_ = true;
  needs_reset_ = false;
  ++generation_;
}

}  // namespace seer
