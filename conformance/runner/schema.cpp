#include "schema.h"

#include <vector>

namespace conformance {
namespace {

bool is_true(const YAML::Node& spec, const char* attribute) {
  return spec && spec[attribute] && spec[attribute].Scalar() == "true";
}

std::string joined(const YAML::Node& list) {
  std::string out;
  for (const auto& item : list) out += (out.empty() ? "" : ", ") + item.Scalar();
  return out;
}

}  // namespace

Schema::Schema(const std::string& path) {
  const YAML::Node doc = YAML::LoadFile(path);
  for (const auto& item : doc["scalars"]) {
    patterns_.emplace(item.first.Scalar(), std::regex(item.second.Scalar()));
  }
  records_ = doc["records"];
}

void Schema::check(YAML::Node value, const std::string& type, const std::string& where) const {
  if (const auto pattern = patterns_.find(type); pattern != patterns_.end()) {
    if (!value.IsScalar() || !std::regex_match(value.Scalar(), pattern->second)) {
      const std::string text = value.IsScalar() ? value.Scalar() : "(not a scalar)";
      throw BadCase(where + ": '" + text + "' is not " + (type == "int64" ? "an " : "a ") + type);
    }
    return;
  }
  const YAML::Node record = records_[type];
  const YAML::Node& given = value;  // looks up without adding keys (value's are added last)
  if (!value.IsMap()) throw BadCase(where + " must be a map");
  const YAML::Node fields = record["fields"];
  for (const auto& item : value) {
    const std::string field = item.first.Scalar();
    const YAML::Node spec = fields ? fields[field] : YAML::Node(YAML::NodeType::Undefined);
    if (!spec && !record["any_field"]) throw BadCase(where + ": unknown field '" + field + "'");
    const std::string field_type = spec ? spec["type"].Scalar() : record["any_field"].Scalar();
    const std::string at = where + "." + field;
    if (is_true(spec, "list")) {
      if (!item.second.IsSequence()) throw BadCase(at + " must be a list");
      for (size_t i = 0; i < item.second.size(); ++i) {
        check(item.second[i], field_type, at + "[" + std::to_string(i + 1) + "]");
      }
    } else {
      check(item.second, field_type, at);
    }
    if (spec && spec["with"] && !given[spec["with"].Scalar()]) {
      throw BadCase(at + " without " + spec["with"].Scalar());
    }
  }
  std::vector<std::string> verbs, checks;
  bool has_verbs = false;
  for (const auto& item : fields) {
    const std::string field = item.first.Scalar();
    if (is_true(item.second, "required") && !given[field]) throw BadCase(where + ": no " + field);
    has_verbs = has_verbs || is_true(item.second, "verb");
    if (given[field] && is_true(item.second, "verb")) verbs.push_back(field);
    if (given[field] && is_true(item.second, "of_decision")) checks.push_back(field);
  }
  for (const char* rule : {"exactly_one_of", "at_most_one_of"}) {
    if (!record[rule]) continue;
    size_t count = 0;
    for (const auto& field : record[rule]) count += given[field.Scalar()] ? 1 : 0;
    if (count > 1 || (count == 0 && std::string(rule) == "exactly_one_of")) {
      std::string name = rule;
      for (char& c : name) c = c == '_' ? ' ' : c;
      throw BadCase(where + ": " + name + " " + joined(record[rule]));
    }
  }
  if (has_verbs) {
    if (verbs.size() != 1) throw BadCase(where + ": needs exactly one verb");
    if (!checks.empty() && !is_true(fields[verbs[0]], "decides")) {
      throw BadCase(where + ": " + verbs[0] + " returns no decision for " + checks[0]);
    }
  }
  for (const auto& item : fields) {
    const std::string field = item.first.Scalar();
    if (item.second["default"] && !given[field]) value[field] = item.second["default"].Scalar();
  }
}

std::string Schema::verb_of(const YAML::Node& step) const {
  for (const auto& item : step) {
    if (is_true(records_["step"]["fields"][item.first.Scalar()], "verb")) {
      return item.first.Scalar();
    }
  }
  throw BadCase("a step with no verb");
}

std::string Schema::type_of(const std::string& record, const std::string& field) const {
  return records_[record]["fields"][field]["type"].Scalar();
}

}  // namespace conformance
