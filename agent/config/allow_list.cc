#include "agent/config/allow_list.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/string_views.h"

namespace benchfleet::agent {
namespace {

struct Url {
  std::string scheme;     // lower case
  std::string host_port;  // lower case, with the scheme's default port made explicit
  std::string path;       // canonical, "/" at least
};

// Parses scheme://[user@]host[:port][/path][?query][#fragment]; nullopt when it is not one.
std::optional<Url> ParseUrl(std::string_view text) {
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return std::nullopt;
  Url url;
  url.scheme = absl::AsciiStrToLower(ToAbsl(text.substr(0, scheme_end)));
  std::string_view rest = text.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find_first_of("?#"));
  const size_t path_start = rest.find('/');
  std::string_view authority = rest.substr(0, path_start);
  // The host is what follows any user info: "http://allowed@evil/" goes to evil.
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  if (authority.empty()) return std::nullopt;
  url.host_port = absl::AsciiStrToLower(ToAbsl(authority));
  // A port is a ':' after the host; an IPv6 host ("[::1]") has colons of its own.
  const size_t bracket = url.host_port.rfind(']');
  if (url.host_port.find(':', bracket == std::string::npos ? 0 : bracket) == std::string::npos) {
    if (url.scheme == "http" || url.scheme == "ws") absl::StrAppend(&url.host_port, ":80");
    if (url.scheme == "https" || url.scheme == "wss") absl::StrAppend(&url.host_port, ":443");
  }
  url.path = CanonicalPath(path_start == std::string_view::npos ? "/" : rest.substr(path_start));
  return url;
}

// True when path is base or inside it (both canonical).
bool IsUnder(const std::string& path, const std::string& base) {
  if (base == "/") return true;
  return path == base || (path.size() > base.size() && path.compare(0, base.size(), base) == 0 &&
                          path[base.size()] == '/');
}

}  // namespace

std::string CanonicalPath(std::string_view path) {
  if (path.empty() || path[0] != '/') return "";
  std::vector<std::string_view> parts;
  for (absl::string_view part : absl::StrSplit(ToAbsl(path), '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();  // "/.." is "/", as the kernel has it
      continue;
    }
    parts.push_back(ToStd(part));
  }
  std::string out;
  for (std::string_view part : parts) absl::StrAppend(&out, "/", ToAbsl(part));
  return out.empty() ? "/" : out;
}

AllowList::AllowList(AllowConfig allow, std::string config_path)
    : allow_(std::move(allow)), config_path_(std::move(config_path)) {}

absl::Status AllowList::Deny(std::string_view what, std::string_view setting) const {
  const std::string where = config_path_.empty()
                                ? absl::StrCat(ToAbsl(setting), "; this agent runs without a config file")
                                : absl::StrCat(ToAbsl(setting), " in ", config_path_);
  return absl::PermissionDeniedError(
      absl::StrCat(ToAbsl(what), " is not in this agent's allow-list (", where, ")"));
}

absl::Status AllowList::CheckBackend(std::string_view backend) const {
  for (const std::string& allowed : allow_.backends) {
    if (allowed == backend) return absl::OkStatus();
  }
  return Deny(absl::StrCat("backend ", ToAbsl(backend)), "allow.backends");
}

absl::Status AllowList::CheckExecutable(std::string_view path) const {
  const std::string canonical = CanonicalPath(path);
  if (canonical.empty()) {
    return absl::PermissionDeniedError(absl::StrCat("executable ", ToAbsl(path),
                                                    " is not an absolute path; the allow-list holds absolute paths only"));
  }
  for (const std::string& allowed : allow_.executables) {
    if (CanonicalPath(allowed) == canonical) return absl::OkStatus();
  }
  return Deny(absl::StrCat("executable ", ToAbsl(path)), "allow.executables");
}

absl::Status AllowList::CheckModelPath(std::string_view path) const {
  const std::string canonical = CanonicalPath(path);
  if (canonical.empty()) {
    return absl::PermissionDeniedError(absl::StrCat("model path ", ToAbsl(path),
                                                    " is not an absolute path; the allow-list holds absolute paths only"));
  }
  for (const std::string& dir : allow_.model_dirs) {
    if (IsUnder(canonical, CanonicalPath(dir))) return absl::OkStatus();
  }
  return Deny(absl::StrCat("model path ", ToAbsl(path)), "allow.model_dirs");
}

absl::Status AllowList::CheckInputFile(std::string_view path) const {
  const std::string canonical = CanonicalPath(path);
  if (canonical.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "workflow path ", ToAbsl(path), " is not an absolute path; the allow-list holds absolute paths only"));
  }
  for (const std::string& dir : allow_.workflow_dirs) {
    if (IsUnder(canonical, CanonicalPath(dir))) return absl::OkStatus();
  }
  return Deny(absl::StrCat("workflow path ", ToAbsl(path)), "allow.workflow_dirs");
}

absl::Status AllowList::CheckUrl(std::string_view url) const {
  const std::optional<Url> parsed = ParseUrl(url);
  if (!parsed) {
    return absl::PermissionDeniedError(absl::StrCat("url ", ToAbsl(url), " is not a URL of the form scheme://host[:port]/path"));
  }
  for (const std::string& entry : allow_.urls) {
    const std::optional<Url> allowed = ParseUrl(entry);
    if (allowed && allowed->scheme == parsed->scheme && allowed->host_port == parsed->host_port &&
        IsUnder(parsed->path, allowed->path)) {
      return absl::OkStatus();
    }
  }
  return Deny(absl::StrCat("url ", ToAbsl(url)), "allow.urls");
}

absl::StatusOr<CommandTemplate> AllowList::FindCommand(std::string_view name) const {
  auto it = allow_.commands.find(std::string(name));
  if (it == allow_.commands.end()) return Deny(absl::StrCat("command ", ToAbsl(name)), "allow.commands");
  return it->second;
}

absl::Status AllowList::WithAllowed(const absl::Status& refusal) const {
  if (refusal.code() != absl::StatusCode::kPermissionDenied) return refusal;
  if (refusal.message().find("(allow.commands") != absl::string_view::npos) {
    std::vector<std::string> names;
    for (const auto& [name, command] : allow_.commands) names.push_back(name);
    return absl::PermissionDeniedError(absl::StrCat(
        refusal.message(), "; allow.commands",
        names.empty() ? " is empty: this agent allows none" : absl::StrCat(" lists: ", absl::StrJoin(names, ", "))));
  }
  const std::pair<const char*, const std::vector<std::string>*> settings[] = {
      {"allow.backends", &allow_.backends},
      {"allow.executables", &allow_.executables},
      {"allow.model_dirs", &allow_.model_dirs},
      {"allow.urls", &allow_.urls},
      {"allow.workflow_dirs", &allow_.workflow_dirs},
  };
  for (const auto& [setting, values] : settings) {
    if (refusal.message().find(absl::StrCat("(", setting)) == absl::string_view::npos) continue;
    return absl::PermissionDeniedError(absl::StrCat(
        refusal.message(), "; ", setting,
        values->empty() ? " is empty: this agent allows none" : absl::StrCat(" lists: ", absl::StrJoin(*values, ", "))));
  }
  return refusal;
}

}  // namespace benchfleet::agent
