// The case format of conformance/schema/schema.yaml: every case is checked
// against it before it runs (conformance/README.md).
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
// GCC 12 under -fsanitize=address misreads std::regex's std::function
// members as maybe uninitialized (a false positive clang lacks).
#pragma GCC diagnostic push
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#pragma GCC diagnostic pop
#include <stdexcept>
#include <string>

namespace conformance {

// The case itself is malformed (a typo in the YAML, not a failure of rl).
struct BadCase : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Schema {
 public:
  // Reads schema.yaml; throws YAML::Exception when it cannot.
  explicit Schema(const std::string& path);

  // Checks `value` against the schema's `type` (a scalar or record name) and
  // fills in the defaults it gives; throws BadCase naming the field at fault,
  // `where` being the path to value ("case.steps[2].expect").
  void check(YAML::Node value, const std::string& type, const std::string& where) const;

  // The verb of a checked step: its one field with `verb: true`.
  std::string verb_of(const YAML::Node& step) const;

  // The type of a record's field ("int64", "bool", ...).
  std::string type_of(const std::string& record, const std::string& field) const;

 private:
  std::map<std::string, std::regex> patterns_;  // the scalars, by name
  YAML::Node records_;
};

}  // namespace conformance
