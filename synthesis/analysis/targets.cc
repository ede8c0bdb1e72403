// Targets files (guide_model.h): strict parsing with yaml-cpp, every number kept with its
// "FILE:LINE". yaml-cpp throws; every exception is caught here and becomes INVALID_ARGUMENT.
#include <fnmatch.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "synthesis/analysis/guide_model.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::synthesis {

// Generated from default-targets.yaml (CMakeLists.txt).
extern const unsigned char kDefaultTargetsYaml[];
extern const std::size_t kDefaultTargetsYamlSize;

namespace {

constexpr std::string_view kDefaultTargetsPath = "default-targets.yaml";

// A parse error: carried up as an exception inside this file only, turned into a Status at the edge.
struct TargetsError {
  std::string message;
};

class Parser {
 public:
  explicit Parser(std::string path) : path_(std::move(path)) {}

  Targets Parse(std::string_view text) {
    YAML::Node root = YAML::Load(std::string(text));
    Targets t;
    t.path = path_;
    // Absent: 24 hours, cited as the file itself (no line holds it).
    t.hours_per_day = TargetNumber{24, path_};
    if (!root.IsDefined() || root.IsNull()) Fail(root, "tasks", "required: the file is empty");
    if (!root.IsMap()) Fail(root, "(top level)", "expected a mapping");
    CheckKeys(root, "", {"hours_per_day", "tasks", "classes"});
    if (YAML::Node n = root["hours_per_day"]) {
      t.hours_per_day = Number(n, "hours_per_day");
      if (t.hours_per_day.value <= 0 || t.hours_per_day.value > 24) {
        Fail(n, "hours_per_day", "must be more than 0 and at most 24");
      }
    }
    YAML::Node tasks = root["tasks"];
    if (!tasks || tasks.IsNull()) Fail(root, "tasks", "required: at least one entry");
    if (!tasks.IsSequence()) Fail(tasks, "tasks", "expected a list");
    if (tasks.size() == 0) Fail(tasks, "tasks", "required: at least one entry");
    for (size_t i = 0; i < tasks.size(); ++i) t.tasks.push_back(Task(tasks[i], absl::StrCat("tasks[", i, "]")));
    if (YAML::Node classes = root["classes"]; classes && !classes.IsNull()) {
      if (!classes.IsSequence()) Fail(classes, "classes", "expected a list");
      std::set<std::string> names;
      for (size_t i = 0; i < classes.size(); ++i) {
        std::string field = absl::StrCat("classes[", i, "]");
        t.classes.push_back(Class(classes[i], field));
        if (!names.insert(t.classes.back().name).second) {
          Fail(classes[i]["name"], field + ".name", "duplicate class \"" + t.classes.back().name + "\"");
        }
      }
    }
    return t;
  }

 private:
  [[noreturn]] void Fail(const YAML::Node& node, const std::string& field, const std::string& reason) const {
    // A missing key has no mark, so callers pass its parent mapping; an empty document has none at
    // all and is reported at line 1.
    int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
    throw TargetsError{absl::StrCat(path_, ":", line, ": field ", field, ": ", reason)};
  }

  std::string Where(const YAML::Node& node) const { return absl::StrCat(path_, ":", node.Mark().line + 1); }

  void CheckKeys(const YAML::Node& map, const std::string& prefix, const std::set<std::string>& allowed) const {
    for (auto it = map.begin(); it != map.end(); ++it) {
      std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
      if (!allowed.count(key)) Fail(it->first, prefix + key, "unknown key");
    }
  }

  std::string Text(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar() || node.Scalar().empty()) Fail(node, field, "expected a non-empty text");
    return node.Scalar();
  }

  TargetNumber Number(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) Fail(node, field, "expected a number");
    const std::string& s = node.Scalar();
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
      Fail(node, field, "expected a number, got \"" + s + "\"");
    }
    if (v < 0) Fail(node, field, "must not be negative");
    return TargetNumber{v, Where(node)};
  }

  bool Bool(const YAML::Node& node, const std::string& field) const {
    if (node.IsScalar() && node.Scalar() == "true") return true;
    if (node.IsScalar() && node.Scalar() == "false") return false;
    Fail(node, field, "expected true or false");
  }

  // A required key of `map`; its absence is reported at the map's line.
  YAML::Node Required(const YAML::Node& map, const std::string& key, const std::string& field) const {
    YAML::Node n = map[key];
    if (!n || n.IsNull()) Fail(map, field + "." + key, "required");
    return n;
  }

  TaskTargets Task(const YAML::Node& node, const std::string& field) const {
    if (!node.IsMap()) Fail(node, field, "expected a mapping");
    CheckKeys(node, field + ".", {"match", "item", "uses"});
    TaskTargets t;
    t.where = Where(node);
    t.match = Text(Required(node, "match", field), field + ".match");
    YAML::Node item = Required(node, "item", field);
    t.item = Text(item, field + ".item");
    if (t.item != "image" && t.item != "token" && t.item != "request") {
      Fail(item, field + ".item", "expected image, token or request, got \"" + t.item + "\"");
    }
    YAML::Node uses = Required(node, "uses", field);
    if (!uses.IsSequence() || uses.size() == 0) Fail(uses, field + ".uses", "expected a list of at least one use");
    std::set<std::string> names;
    for (size_t i = 0; i < uses.size(); ++i) {
      std::string use_field = absl::StrCat(field, ".uses[", i, "]");
      t.uses.push_back(Use(uses[i], use_field));
      if (!names.insert(t.uses.back().name).second) {
        Fail(uses[i]["name"], use_field + ".name", "duplicate use \"" + t.uses.back().name + "\"");
      }
    }
    return t;
  }

  UseTarget Use(const YAML::Node& node, const std::string& field) const {
    if (!node.IsMap()) Fail(node, field, "expected a mapping");
    CheckKeys(node, field + ".", {"name", "max_seconds_per_item", "min_items_per_second", "interactive"});
    UseTarget u;
    u.name = Text(Required(node, "name", field), field + ".name");
    if (YAML::Node n = node["max_seconds_per_item"]) {
      u.max_seconds_per_item = Number(n, field + ".max_seconds_per_item");
      if (u.max_seconds_per_item->value == 0) Fail(n, field + ".max_seconds_per_item", "must be more than 0");
    }
    if (YAML::Node n = node["min_items_per_second"]) {
      u.min_items_per_second = Number(n, field + ".min_items_per_second");
      if (u.min_items_per_second->value == 0) Fail(n, field + ".min_items_per_second", "must be more than 0");
    }
    // One figure per use, so a verdict cites exactly one target.
    if (!u.max_seconds_per_item && !u.min_items_per_second) {
      Fail(node, field, "set max_seconds_per_item or min_items_per_second");
    }
    if (u.max_seconds_per_item && u.min_items_per_second) {
      Fail(node, field, "set only one of max_seconds_per_item and min_items_per_second");
    }
    if (YAML::Node n = node["interactive"]) u.interactive = Bool(n, field + ".interactive");
    return u;
  }

  ClassTargets Class(const YAML::Node& node, const std::string& field) const {
    if (!node.IsMap()) Fail(node, field, "expected a mapping");
    CheckKeys(node, field + ".", {"name", "dedicated_gpu", "price_per_hour", "currency"});
    ClassTargets c;
    c.name = Text(Required(node, "name", field), field + ".name");
    if (YAML::Node n = node["dedicated_gpu"]) c.dedicated_gpu = Bool(n, field + ".dedicated_gpu");
    if (YAML::Node n = node["price_per_hour"]) c.price_per_hour = Number(n, field + ".price_per_hour");
    if (YAML::Node n = node["currency"]) c.currency = Text(n, field + ".currency");
    if (c.price_per_hour && c.currency.empty()) Fail(node, field + ".currency", "required with price_per_hour");
    if (!c.price_per_hour && !c.currency.empty()) Fail(node, field + ".price_per_hour", "required with currency");
    return c;
  }

  std::string path_;
};

}  // namespace

absl::StatusOr<Targets> ParseTargets(std::string_view yaml_text, const std::string& path) {
  try {
    return Parser(path).Parse(yaml_text);
  } catch (const TargetsError& e) {
    return absl::InvalidArgumentError(e.message);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", e.mark.line + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
}

const Targets& DefaultTargets() {
  static const Targets* targets = [] {
    std::string_view text(reinterpret_cast<const char*>(kDefaultTargetsYaml), kDefaultTargetsYamlSize);
    absl::StatusOr<Targets> parsed = ParseTargets(text, std::string(kDefaultTargetsPath));
    // The file is part of the build and tested (guide_model_test): a failure here is a build defect.
    if (!parsed.ok()) std::abort();
    return new Targets(*std::move(parsed));
  }();
  return *targets;
}

const TaskTargets* TargetsFor(const Targets& targets, const std::string& task) {
  for (const TaskTargets& t : targets.tasks) {
    if (fnmatch(t.match.c_str(), task.c_str(), 0) == 0) return &t;
  }
  return nullptr;
}

}  // namespace benchfleet::synthesis
