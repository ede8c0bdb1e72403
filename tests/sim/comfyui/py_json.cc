#include "tests/sim/comfyui/py_json.h"

namespace benchfleet::sim::comfyui {
namespace {

std::string Scalar(const Json& j) {
  // nlohmann writes floats the way Python's repr does for the values ComfyUI uses (1.0, 0.5).
  return j.dump(-1, ' ', /*ensure_ascii=*/true);
}

}  // namespace

std::string PyDumps(const Json& j) {
  if (j.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) s += ", ";
      first = false;
      s += Scalar(Json(it.key())) + ": " + PyDumps(it.value());
    }
    return s + "}";
  }
  if (j.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < j.size(); i++) {
      if (i) s += ", ";
      s += PyDumps(j[i]);
    }
    return s + "]";
  }
  return Scalar(j);
}

std::string PyReprString(const std::string& s) {
  const bool use_double = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = use_double ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == q) out += std::string("\\") + q;
    else out += c;
  }
  return out + q;
}

std::string PyRepr(const Json& j) {
  if (j.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) s += ", ";
      first = false;
      s += PyReprString(it.key()) + ": " + PyRepr(it.value());
    }
    return s + "}";
  }
  if (j.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < j.size(); i++) {
      if (i) s += ", ";
      s += PyRepr(j[i]);
    }
    return s + "]";
  }
  if (j.is_string()) return PyReprString(j.get<std::string>());
  if (j.is_null()) return "None";
  if (j.is_boolean()) return j.get<bool>() ? "True" : "False";
  return Scalar(j);
}

}  // namespace benchfleet::sim::comfyui
