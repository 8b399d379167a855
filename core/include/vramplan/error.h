// Errors and warnings as values. The core never lets an exception cross its API: every entry
// point returns either a value or a list of Issues with a stable, grep-able code, the JSON path
// of the offending field ("train.lora.rank") and one human sentence saying what is allowed.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace vramplan {

struct Issue {
  std::string code;        // stable id: errors "unknown_key", "out_of_range", ...; warnings from the
                           // one table in core/src/diagnostics/warning_codes.h ("would_not_start", ...)
  std::string field_path;  // JSON path into the scenario, "" for the whole document
  std::string message;     // one line: what is wrong and what is allowed
};

using Issues = std::vector<Issue>;

// Either a T or the errors that prevented computing it.
template <typename T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}                 // NOLINT: implicit by design
  Expected(Issues errors) : state_(std::move(errors)) {}          // NOLINT: implicit by design
  bool ok() const { return std::holds_alternative<T>(state_); }
  const T& value() const { return std::get<T>(state_); }
  T& value() { return std::get<T>(state_); }
  const Issues& errors() const { return std::get<Issues>(state_); }

 private:
  std::variant<T, Issues> state_;
};

}  // namespace vramplan
