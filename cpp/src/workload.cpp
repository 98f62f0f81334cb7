#include "seer/workload.hpp"

#include <stdexcept>

namespace seer {

ParamDecl int_param(std::string name, std::int64_t default_value, std::int64_t lo,
                    std::int64_t hi, std::string doc) {
  ParamDecl p;
  p.name = std::move(name);
  p.type = ParamType::kInteger;
  p.default_value = static_cast<double>(default_value);
  p.lo = static_cast<double>(lo);
  p.hi = static_cast<double>(hi);
  p.doc = std::move(doc);
  return p;
}

ParamDecl real_param(std::string name, double default_value, double lo, double hi,
                     std::string doc) {
  ParamDecl p;
  p.name = std::move(name);
  p.type = ParamType::kReal;
  p.default_value = default_value;
  p.lo = lo;
  p.hi = hi;
  p.doc = std::move(doc);
  return p;
}

ParamDecl positive_param(std::string name, double default_value, double lo, double hi,
                         std::string doc) {
  ParamDecl p = real_param(std::move(name), default_value, lo, hi, std::move(doc));
  p.lo_open = true;
  return p;
}

ParamDecl capped(ParamDecl p) {
  p.hi_is_cap = true;
  return p;
}

ParamDecl derived_default(ParamDecl p, std::string how) {
  p.has_default = false;
  p.default_doc = std::move(how);
  return p;
}

const ParamDecl* WorkloadDecl::find_param(const std::string& param_name) const {
  for (const ParamDecl& p : params) {
    if (p.name == param_name) return &p;
  }
  return nullptr;
}

const RecordDecl* WorkloadDecl::find_record(const std::string& record_name) const {
  for (const RecordDecl& r : records) {
    if (r.name == record_name) return &r;
  }
  return nullptr;
}

namespace {

std::size_t code_size(const std::string& code) { return std::stoul(code.substr(2)); }

}  // namespace

RecordDecl checked_record(std::string name, std::size_t size, std::vector<FieldDecl> fields,
                          const std::vector<RecordDecl>& known) {
  std::size_t end = 0;
  for (const FieldDecl& f : fields) {
    std::size_t item = 0;
    if (f.type.size() >= 3 && (f.type[0] == '<' || f.type[0] == '|')) {
      item = code_size(f.type);
    } else {
      for (const RecordDecl& r : known) {
        if (r.name == f.type) item = r.size;
      }
      if (item == 0) {
        throw std::logic_error("record " + name + ": field " + f.name + " names unknown record '" +
                               f.type + "' (declare it first)");
      }
    }
    for (std::size_t n : f.shape) item *= n;
    if (f.offset != end) {
      throw std::logic_error("record " + name + ": field " + f.name + " at byte " +
                             std::to_string(f.offset) + " but the previous field ends at byte " +
                             std::to_string(end) + " (a field is missing or out of order)");
    }
    end = f.offset + item;
  }
  if (end != size) {
    throw std::logic_error("record " + name + ": fields cover " + std::to_string(end) +
                           " bytes of " + std::to_string(size) + " (a field is missing)");
  }
  return RecordDecl{std::move(name), size, std::move(fields)};
}

const ParamDecl& Params::param(const std::string& name, ParamType type) const {
  const ParamDecl* p = decl_.find_param(name);
  if (p == nullptr) {
    throw std::logic_error("model " + decl_.name + " reads parameter '" + name +
                           "' that its declaration lacks");
  }
  if (p->type != type) {
    throw std::logic_error("model " + decl_.name + " reads parameter '" + name +
                           "' with the wrong type");
  }
  return *p;
}

std::int64_t Params::integer(const std::string& name) {
  const ParamDecl& p = param(name, ParamType::kInteger);
  return integer_at_most(name, static_cast<std::int64_t>(p.hi));
}

std::int64_t Params::integer_at_most(const std::string& name, std::int64_t hi) {
  const ParamDecl& p = param(name, ParamType::kInteger);
  return config_.integer(name, static_cast<std::int64_t>(p.default_value),
                         static_cast<std::int64_t>(p.lo), hi);
}

double Params::real(const std::string& name) {
  const ParamDecl& p = param(name, ParamType::kReal);
  if (!p.has_default) {
    throw std::logic_error("model " + decl_.name + " reads '" + name +
                           "' (no fixed default) without a fallback: use real_or");
  }
  return config_.real(name, p.default_value, p.lo, p.hi, p.lo_open);
}

double Params::real_or(const std::string& name, double fallback) {
  const ParamDecl& p = param(name, ParamType::kReal);
  return config_.real(name, fallback, p.lo, p.hi, p.lo_open);
}

}  // namespace seer
