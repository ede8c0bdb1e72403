// A TCP forwarder between the coordinator and PostgreSQL that a test can cut and restore, so
// "the database went away" is simulated without stopping the shared test server. Test-only;
// thread-safe.
#ifndef BENCHFLEET_TESTS_UNIT_COORDINATOR_TCP_PROXY_H_
#define BENCHFLEET_TESTS_UNIT_COORDINATOR_TCP_PROXY_H_

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace benchfleet::testing {

class TcpProxy {
 public:
  // Listens on 127.0.0.1 (a free port) and forwards to upstream_host:upstream_port.
  TcpProxy(std::string upstream_host, int upstream_port);
  ~TcpProxy();

  int port() const { return port_; }

  // Closes every forwarded connection and refuses new ones until Restore().
  void Cut();
  void Restore();

 private:
  void AcceptLoop();
  void Pump(int client, int upstream);

  const std::string host_;
  const int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> cut_{false};
  std::mutex mu_;
  std::vector<int> open_fds_;         // guarded by mu_
  std::vector<std::thread> pumps_;    // guarded by mu_
  std::thread acceptor_;
};

// Returns `url` (postgresql://user@HOST:PORT/db...) with host and port replaced.
std::string WithHostPort(const std::string& url, const std::string& host, int port);

// Returns the host and port of a postgresql:// URL.
std::pair<std::string, int> HostPort(const std::string& url);

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_UNIT_COORDINATOR_TCP_PROXY_H_
