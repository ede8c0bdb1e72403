#include "agent/backends/workflow/container_image.h"

#include <set>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace benchfleet::agent::workflow {
namespace {

// The runtimes' global flags that take no value (docker: -D, --debug, --tls, --tlsverify).
const std::set<std::string_view>& GlobalFlags() {
  static const auto* flags = new std::set<std::string_view>{"-D", "--debug", "--tls", "--tlsverify", "--remote"};
  return *flags;
}

// The flags of `docker run` / `podman run` that take no value; every other option does (unless
// written --name=value).
const std::set<std::string_view>& RunFlags() {
  static const auto* flags = new std::set<std::string_view>{
      "--rm",        "--detach",         "--interactive",     "--tty",       "--privileged",   "--init",
      "--publish-all", "--read-only",    "--no-healthcheck",  "--oom-kill-disable", "--quiet",
      "--disable-content-trust", "--replace", "--rmi",        "--help"};
  return *flags;
}

// Short run flags that take no value, also combined (-it, -dit).
constexpr std::string_view kShortRunFlags = "dtiPq";

// Returns how many arguments the option at argv[i] uses beyond itself: 0 or 1.
size_t ValueCount(const std::string& option, const std::set<std::string_view>& long_flags,
                  std::string_view short_flags) {
  if (option.find('=') != std::string::npos) return 0;
  if (option.rfind("--", 0) == 0) return long_flags.count(option) ? 0 : 1;
  const std::string_view letters = std::string_view(option).substr(1);
  if (letters.empty()) return 0;
  size_t bool_prefix = 0;
  while (bool_prefix < letters.size() && short_flags.find(letters[bool_prefix]) != std::string_view::npos) {
    ++bool_prefix;
  }
  if (bool_prefix == letters.size()) return 0;  // -it
  if (bool_prefix + 1 == letters.size()) return 1;  // -e VALUE, -ie VALUE
  return 0;  // -eKEY=VALUE, -m4g: the value is attached
}

std::string FirstLine(const std::string& output) {
  const absl::string_view text = absl::StripAsciiWhitespace(output);
  return std::string(text.substr(0, text.find('\n')));
}

// Returns the trimmed one-line answer of a successful run, else why there is none.
absl::StatusOr<std::string> Answer(CommandRunner* runner, const std::vector<std::string>& argv,
                                   absl::Duration timeout) {
  absl::StatusOr<CommandOutput> out = runner->Run(argv, timeout);
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) return absl::UnavailableError(DescribeFailure(argv, *out));
  const std::string line = FirstLine(out->stdout_text);
  // A Go template field the runtime lacks prints "<no value>".
  if (line.empty() || line == "<no value>") {
    return absl::UnavailableError(
        absl::StrCat(absl::StrJoin(argv, " "), " printed ", line.empty() ? "nothing" : "'<no value>'"));
  }
  return line;
}

}  // namespace

std::optional<ContainerRun> ParseContainerRun(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  const std::string& program = argv[0];
  const std::string name = program.substr(program.rfind('/') == std::string::npos ? 0 : program.rfind('/') + 1);
  if (name != "docker" && name != "podman") return std::nullopt;
  size_t i = 1;
  while (i < argv.size() && absl::StartsWith(argv[i], "-")) {
    i += 1 + ValueCount(argv[i], GlobalFlags(), "D");
  }
  if (i < argv.size() && argv[i] == "container") ++i;
  if (i >= argv.size() || argv[i] != "run") return std::nullopt;
  ++i;
  while (i < argv.size() && absl::StartsWith(argv[i], "-") && argv[i] != "-") {
    if (argv[i] == "--") {
      ++i;
      break;
    }
    i += 1 + ValueCount(argv[i], RunFlags(), kShortRunFlags);
  }
  if (i >= argv.size()) return std::nullopt;  // no image: not a run the runtime would start
  ContainerRun run;
  run.runtime = name;
  run.program = program;
  run.image = absl::StrContains(argv[i], '{') ? "" : argv[i];
  return run;
}

ContainerFacts ReadContainerFacts(CommandRunner* runner, const ContainerRun& run, absl::Duration timeout) {
  ContainerFacts facts;
  facts.conditions["runtime"] = run.runtime;
  const std::string version_format = run.runtime == "podman" ? "{{.Client.Version}}" : "{{.Server.Version}}";
  absl::StatusOr<std::string> version = Answer(runner, {run.program, "version", "--format", version_format}, timeout);
  if (version.ok()) {
    facts.conditions["runtime_version"] = *version;
  } else {
    facts.missing["runtime_version_error"] = std::string(version.status().message());
  }

  if (run.image.empty()) {
    facts.missing["image_digest_error"] = "the command's image is a placeholder: the agent cannot name it before the run";
    return facts;
  }
  facts.conditions["image"] = run.image;
  absl::StatusOr<std::string> inspected = Answer(
      runner, {run.program, "image", "inspect", "--format", "{{.Id}}{{range .RepoDigests}} {{.}}{{end}}", run.image},
      timeout);
  if (!inspected.ok()) {
    facts.missing["image_digest_error"] = std::string(inspected.status().message());
    return facts;
  }
  std::vector<std::string> words = absl::StrSplit(*inspected, ' ', absl::SkipEmpty());
  if (words.empty() || !absl::StartsWith(words[0], "sha256:")) {
    facts.missing["image_digest_error"] =
        absl::StrCat(run.program, " image inspect ", run.image, ": not an image id: '", *inspected, "'");
    return facts;
  }
  facts.conditions["image_id"] = words[0];
  facts.conditions["image_digest"] = words[0];
  for (size_t w = 1; w < words.size(); ++w) {
    if (absl::StrContains(words[w], "@sha256:")) {
      facts.conditions["image_digest"] = words[w];
      break;
    }
  }
  return facts;
}

}  // namespace benchfleet::agent::workflow
