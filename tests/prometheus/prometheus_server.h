// A real Prometheus server (Debian's /usr/bin/prometheus) for the live test, and the few calls
// of its HTTP API the test makes: instant queries, active alerts, rule evaluation times. The
// process is killed by the destructor. Not thread-safe.
#ifndef BENCHFLEET_TESTS_PROMETHEUS_PROMETHEUS_SERVER_H_
#define BENCHFLEET_TESTS_PROMETHEUS_PROMETHEUS_SERVER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tests/support/subprocess.h"

namespace benchfleet::testing {

// The answer to one /api/v1/query.
struct QueryResult {
  bool ok = false;        // status "success"
  std::string error;      // errorType: error, when not ok (or the HTTP failure)
  std::string type;       // resultType: vector, matrix, scalar, string
  nlohmann::json result;  // data.result
  // Series (vector, matrix) or 1 (scalar, string): 0 means "no data".
  size_t size() const;
  // The value of the first sample of a vector, or of a scalar; nullopt when there is none.
  std::optional<double> first_value() const;
};

// One entry of /api/v1/alerts.
struct ActiveAlert {
  std::string name;
  std::string state;  // pending, firing
  std::map<std::string, std::string> labels;
  std::string value;
};

class PrometheusServer {
 public:
  // Returns the path of the prometheus binary: $BENCHFLEET_PROMETHEUS, else /usr/bin/prometheus.
  static std::string BinaryPath();

  // Starts prometheus on a free loopback port with this configuration, its TSDB and log in
  // work_dir, and waits until /-/ready answers 200. False (and the log in *error) otherwise.
  bool Start(const std::string& config_path, const std::string& work_dir, std::string* error);
  ~PrometheusServer();

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const;

  QueryResult Query(const std::string& expr);
  // The active (pending or firing) alerts; nullopt when the API does not answer.
  std::optional<std::vector<ActiveAlert>> Alerts();
  // The earliest lastEvaluation over every rule group; nullopt before each group was evaluated.
  std::optional<absl::Time> OldestRuleEvaluation();
  // Values of a label over every stored series (/api/v1/label/NAME/values).
  std::vector<std::string> LabelValues(const std::string& label);
  // Scrape health of each target: its address (as configured) -> "up", "unknown" (not scraped yet)
  // or "down: <the scrape's error>".
  std::map<std::string, std::string> TargetHealth();

 private:
  std::optional<nlohmann::json> GetJson(const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
                                        std::string* error);

  int port_ = 0;
  std::string log_path_;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_PROMETHEUS_PROMETHEUS_SERVER_H_
