#include "tests/unit/coordinator/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace benchfleet::testing {

TcpProxy::TcpProxy(std::string upstream_host, int upstream_port)
    : host_(std::move(upstream_host)), upstream_port_(upstream_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::listen(listen_fd_, 64);
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  Cut();
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> pumps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pumps.swap(pumps_);
  }
  for (auto& t : pumps) t.join();
}

void TcpProxy::Cut() {
  cut_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
}

void TcpProxy::Restore() { cut_ = false; }

void TcpProxy::AcceptLoop() {
  while (!stopping_) {
    const int client = ::accept(listen_fd_, nullptr, nullptr);
    if (client < 0) {
      if (stopping_) return;
      continue;
    }
    if (cut_) {
      ::close(client);  // the database is "down": the connection ends at once
      continue;
    }
    const int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(upstream_port_));
    ::inet_pton(AF_INET, host_.c_str(), &addr.sin_addr);
    if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(upstream);
      ::close(client);
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(client);
    open_fds_.push_back(upstream);
    pumps_.emplace_back([this, client, upstream] { Pump(client, upstream); });
  }
}

void TcpProxy::Pump(int client, int upstream) {
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  char buf[65536];
  bool open = true;
  while (open) {
    if (::poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2 && open; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = ::recv(fds[i].fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        open = false;
        break;
      }
      const int to = fds[1 - i].fd;
      for (ssize_t sent = 0; sent < n;) {
        const ssize_t w = ::send(to, buf + sent, n - sent, MSG_NOSIGNAL);
        if (w <= 0) {
          open = false;
          break;
        }
        sent += w;
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : {client, upstream}) {
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  }
}

std::pair<std::string, int> HostPort(const std::string& url) {
  const size_t at = url.find('@');
  const size_t start = at == std::string::npos ? url.find("://") + 3 : at + 1;
  const size_t colon = url.find(':', start);
  const size_t slash = url.find('/', start);
  return {url.substr(start, colon - start), std::atoi(url.substr(colon + 1, slash - colon - 1).c_str())};
}

std::string WithHostPort(const std::string& url, const std::string& host, int port) {
  const size_t at = url.find('@');
  const size_t start = at == std::string::npos ? url.find("://") + 3 : at + 1;
  const size_t slash = url.find('/', start);
  return url.substr(0, start) + host + ":" + std::to_string(port) + url.substr(slash);
}

}  // namespace benchfleet::testing
