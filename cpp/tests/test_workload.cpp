// Workload declarations: a record that misses a field is refused, Params
// reads defaults and bounds from the table, and the registry refuses a model
// that disagrees with its declaration (reads an undeclared key, never reads a
// declared one).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "builtin_models.hpp"
#include "check.hpp"
#include "model_registry.hpp"
#include "phold/phold.hpp"
#include "seer/workload.hpp"

namespace {

struct Rec {
  std::uint64_t a;
  std::uint32_t b;
  std::uint32_t c;
  double d[3];
};

template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

void test_records() {
  std::vector<seer::RecordDecl> known;
  const seer::RecordDecl ok = seer::checked_record(
      "rec", sizeof(Rec),
      {SEER_FIELD(Rec, a), SEER_FIELD(Rec, b), SEER_FIELD(Rec, c), SEER_FIELD(Rec, d)}, known);
  if (ok.fields[3].type != "<f8" || ok.fields[3].shape.size() != 1 || ok.fields[3].shape[0] != 3 ||
      ok.fields[3].offset != offsetof(Rec, d) || ok.fields[1].type != "<u4") {
    FAIL("field types, shapes or offsets");
  }
  const std::string missing = error_of<std::logic_error>([&] {
    seer::checked_record("rec", sizeof(Rec), {SEER_FIELD(Rec, a), SEER_FIELD(Rec, c), SEER_FIELD(Rec, d)},
                         known);
  });
  if (missing.find("field c at byte 12 but the previous field ends at byte 8") == std::string::npos) {
    FAIL("missing middle field not refused: " + missing);
  }
  const std::string short_tail = error_of<std::logic_error>([&] {
    seer::checked_record("rec", sizeof(Rec), {SEER_FIELD(Rec, a), SEER_FIELD(Rec, b), SEER_FIELD(Rec, c)},
                         known);
  });
  if (short_tail.find("fields cover 16 bytes of 40") == std::string::npos) {
    FAIL("missing last field not refused: " + short_tail);
  }
}

seer::WorkloadDecl toy_decl() {
  seer::WorkloadDecl w;
  w.name = "toy";
  w.params = {seer::int_param("n", 5, 1, 10, "count"),
              seer::positive_param("x", 2.5, 0.0, 9.0, "size")};
  return w;
}

void test_params() {
  const seer::WorkloadDecl decl = toy_decl();
  seer::Config empty;
  seer::Params p(decl, empty);
  if (p.integer("n") != 5 || p.real("x") != 2.5) FAIL("declared defaults");
  seer::Config bad({{"x", 0.0}});
  seer::Params q(decl, bad);
  const std::string msg = error_of<std::invalid_argument>([&] { q.real("x"); });
  if (msg != "x must be a finite number in (0, 9], got 0") FAIL("bound message: " + msg);
  if (error_of<std::logic_error>([&] { p.real("nope"); }).find("lacks") == std::string::npos) {
    FAIL("undeclared read not refused");
  }
  if (error_of<std::logic_error>([&] { p.real("n"); }).find("wrong type") == std::string::npos) {
    FAIL("wrong type not refused");
  }
}

void test_registry_checks_the_model_against_its_declaration() {
  seer::register_builtin_models();
  seer::WorkloadDecl extra = seer::phold_workload();
  extra.params.push_back(seer::int_param("never_read", 0, 0, 1, "declared, unread"));
  seer::register_model("phold_extra", extra, seer::make_phold);
  std::string msg = error_of<std::logic_error>([] { seer::make_model("phold_extra", {}); });
  if (msg.find("declares parameter 'never_read' but never reads it") == std::string::npos) {
    FAIL("unread declared parameter: " + msg);
  }
  seer::WorkloadDecl fewer = seer::phold_workload();
  fewer.params.pop_back();  // hot_work: still read by the model, through Params
  seer::register_model("phold_fewer", fewer, seer::make_phold);
  msg = error_of<std::logic_error>([] { seer::make_model("phold_fewer", {}); });
  if (msg.find("hot_work") == std::string::npos) FAIL("undeclared read: " + msg);
  const seer::WorkloadDecl pcs = seer::workload_decl("pcs");
  if (pcs.find_param("width") == nullptr || pcs.find_record("state") == nullptr) {
    FAIL("registry lost the pcs declaration");
  }
  msg = error_of<std::invalid_argument>([] { seer::workload_decl("nope"); });
  if (msg.find("got 'nope'") == std::string::npos) FAIL("unknown name: " + msg);
}

}  // namespace

int main() {
  test_records();
  test_params();
  test_registry_checks_the_model_against_its_declaration();
  return check::report("test_workload");
}
