// A workload's declaration: what a model reads, exposes and stores, written
// once beside the model and read by everything else (the Python envs, their
// docs, the pure-Python references, the record dtypes).
//
// A model declares
//   - its parameters (name, int/real, default, bounds, one-line doc), which it
//     then reads through Params (below) instead of repeating defaults and
//     bounds at each read;
//   - its spaces as text for docs (concrete shapes depend on the parameters:
//     they come from the built model's ModelSpec);
//   - its info keys, total keys and event kinds (the model copies them into
//     its ModelSpec, so they cannot disagree);
//   - the byte layout of its records (State, Public, payloads) as NumPy
//     structured dtypes, built with SEER_FIELD so field offsets and types come
//     from the struct itself; record() refuses a declaration that leaves a
//     byte of the struct uncovered.
// Not thread-safe to build; immutable once registered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "seer/config.hpp"

namespace seer {

enum class ParamType { kInteger, kReal };

struct ParamDecl {
  std::string name;
  ParamType type = ParamType::kReal;
  // The value used when the config omits the key; ignored when !has_default.
  double default_value = 0.0;
  // False: the model computes the default from other parameters
  // (default_doc says how; the Python signature shows None).
  bool has_default = true;
  double lo = 0.0, hi = 0.0;
  bool lo_open = false;  // lo itself excluded (reals only)
  // hi only guards the C++ reader against absurd values; it is not part of
  // the documented range, and Python leaves the check to the C++ reader.
  bool hi_is_cap = false;
  std::string doc;          // one line, for the docs' Arguments list
  std::string default_doc;  // !has_default: how the default is computed
};

// Parameter table rows, so a table reads as one line per parameter.
ParamDecl int_param(std::string name, std::int64_t default_value, std::int64_t lo,
                    std::int64_t hi, std::string doc);
ParamDecl real_param(std::string name, double default_value, double lo, double hi,
                     std::string doc);
// (lo, hi]: lo excluded.
ParamDecl positive_param(std::string name, double default_value, double lo, double hi,
                         std::string doc);
// hi is only a cap of the C++ reader (see ParamDecl::hi_is_cap).
ParamDecl capped(ParamDecl p);
// No fixed default: the model computes it (`how` documents it).
ParamDecl derived_default(ParamDecl p, std::string how);

// One field of a record: NumPy type code ("<f8") or the name of another
// record of the same workload, byte offset, and array shape (empty: scalar).
struct FieldDecl {
  std::string name;
  std::string type;
  std::size_t offset = 0;
  std::vector<std::size_t> shape;
};

// A C++ struct the Python side reads as a NumPy structured dtype.
struct RecordDecl {
  std::string name;  // e.g. "state", "public", or a payload/nested name
  std::size_t size = 0;
  std::vector<FieldDecl> fields;
};

// Symbolic space text for docs, e.g. shape "(10,)", "Discrete(channels + 1)".
struct SpaceDecl {
  std::string shape;
  std::string dtype;
  std::string bounds;
};

struct WorkloadDecl {
  std::string name;
  std::string summary;  // one line
  std::vector<ParamDecl> params;
  SpaceDecl observation, action, state;
  std::vector<std::string> info_keys;
  std::vector<std::string> total_keys;
  std::vector<std::string> event_kinds;
  std::vector<RecordDecl> records;
  // Agents act when their handlers ask (Context::request_decision), not at
  // every step: the env runs event-driven decisions (docs/decisions.md).
  bool decisions = false;
  // Which of its (Discrete) actions an agent may take varies: the model
  // writes a mask (Model::action_mask; ModelSpec::action_mask says the same)
  // and the envs expose it (PettingZoo's {"observation", "action_mask"}).
  bool action_mask = false;

  // nullptr when `name` is not declared.
  const ParamDecl* find_param(const std::string& name) const;
  const RecordDecl* find_record(const std::string& name) const;
};

// The numpy type code of a scalar C++ type; a type without one fails to compile.
template <class T>
constexpr const char* numpy_code() {
  static_assert(std::is_arithmetic_v<T>, "a record field must be an arithmetic type or record");
  if constexpr (std::is_same_v<T, double>) return "<f8";
  else if constexpr (std::is_same_v<T, float>) return "<f4";
  else if constexpr (std::is_same_v<T, bool>) return "|b1";
  else if constexpr (std::is_signed_v<T> && sizeof(T) == 8) return "<i8";
  else if constexpr (std::is_signed_v<T> && sizeof(T) == 4) return "<i4";
  else if constexpr (std::is_signed_v<T> && sizeof(T) == 2) return "<i2";
  else if constexpr (std::is_signed_v<T> && sizeof(T) == 1) return "|i1";
  else if constexpr (sizeof(T) == 8) return "<u8";
  else if constexpr (sizeof(T) == 4) return "<u4";
  else if constexpr (sizeof(T) == 2) return "<u2";
  else return "|u1";
}

// A field of member type M at `offset`: scalars and (nested) arrays of
// scalars get their code from M; arrays of records name the record.
template <class M>
FieldDecl field_decl(std::string name, std::size_t offset, std::string record_name = "") {
  using Element = std::remove_all_extents_t<M>;
  FieldDecl f{std::move(name), "", offset, {}};
  if constexpr (std::rank_v<M> >= 1) f.shape.push_back(std::extent_v<M, 0>);
  if constexpr (std::rank_v<M> >= 2) f.shape.push_back(std::extent_v<M, 1>);
  static_assert(std::rank_v<M> <= 2, "record fields have at most two array dimensions");
  if constexpr (std::is_arithmetic_v<Element>) {
    f.type = numpy_code<Element>();
  } else {
    static_assert(std::is_trivially_copyable_v<Element>, "nested records must be trivially copyable");
    f.type = std::move(record_name);
  }
  return f;
}

// Checks that `fields` tile the struct (ascending, no overlap, no gap, ending
// at `size`, nested records known by `known`); throws std::logic_error naming
// the record and the byte where they do not.
RecordDecl checked_record(std::string name, std::size_t size, std::vector<FieldDecl> fields,
                          const std::vector<RecordDecl>& known);

// Reads a model's parameters from a Config with the declared defaults and
// bounds, keeping Config's messages (std::invalid_argument naming key and
// value). Reading an undeclared name, or with the wrong type, is a model bug
// (std::logic_error).
class Params {
 public:
  Params(const WorkloadDecl& decl, Config& config) : decl_(decl), config_(config) {}

  std::int64_t integer(const std::string& name);
  double real(const std::string& name);
  // Declared bounds narrowed at run time (e.g. an id below another parameter).
  std::int64_t integer_at_most(const std::string& name, std::int64_t hi);
  // A parameter without a fixed default (derived_default): `fallback` is it.
  double real_or(const std::string& name, double fallback);

 private:
  const ParamDecl& param(const std::string& name, ParamType type) const;

  const WorkloadDecl& decl_;
  Config& config_;
};

}  // namespace seer

// A FieldDecl for `Struct::member`, offset and type from the struct itself.
#define SEER_FIELD(Struct, member) \
  ::seer::field_decl<decltype(Struct::member)>(#member, offsetof(Struct, member))
// The same for an array of another record of the workload, named `record`.
#define SEER_RECORD_FIELD(Struct, member, record) \
  ::seer::field_decl<decltype(Struct::member)>(#member, offsetof(Struct, member), record)
