#include "common/coordinator_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>

#include "absl/strings/ascii.h"

namespace benchfleet {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitCommas(std::string_view s) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t comma = s.find(',', start);
    parts.push_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

// True for localhost, an IPv4 literal in 127.0.0.0/8 and the IPv6 literal ::1.
bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4;
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

bool IsPort(std::string_view text) {
  return !text.empty() && text.size() <= 5 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6 address: whether its host is loopback.
bool IsLoopbackHostPort(std::string_view address) {
  if (address.empty()) return false;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = address.substr(close + 1);
    if (!rest.empty() && !(rest.front() == ':' && IsPort(rest.substr(1)))) return false;
    return IsLoopbackHost(std::string(address.substr(1, close - 1)));
  }
  const size_t colon = address.find(':');
  if (colon != std::string_view::npos && address.find(':', colon + 1) != std::string_view::npos) {
    return IsLoopbackHost(std::string(address));  // a bare IPv6 address has no port
  }
  if (colon == std::string_view::npos) return IsLoopbackHost(std::string(address));
  return IsPort(address.substr(colon + 1)) && IsLoopbackHost(std::string(address.substr(0, colon)));
}

// One gRPC target (no list of ours): whether every address it names is loopback.
bool IsLoopbackSingleTarget(std::string_view target) {
  for (std::string_view scheme : {"ipv4:", "ipv6:"}) {
    if (target.starts_with(scheme)) {
      const std::vector<std::string_view> addresses = SplitCommas(target.substr(scheme.size()));
      return std::all_of(addresses.begin(), addresses.end(), IsLoopbackHostPort);
    }
  }
  if (target.starts_with("dns:///")) return IsLoopbackHostPort(target.substr(7));
  if (target.starts_with("dns://")) return false;  // another DNS server says what the name is
  if (target.starts_with("dns:")) return IsLoopbackHostPort(target.substr(4));
  return IsLoopbackHostPort(target);
}

}  // namespace

std::vector<std::string> SplitCoordinatorAddresses(std::string_view addresses) {
  const std::string_view trimmed = Trim(addresses);
  if (trimmed.starts_with("ipv4:") || trimmed.starts_with("ipv6:")) return {std::string(trimmed)};
  std::vector<std::string> out;
  for (std::string_view part : SplitCommas(trimmed)) {
    part = Trim(part);
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

bool IsLoopbackTarget(const std::string& target) {
  const std::vector<std::string> addresses = SplitCoordinatorAddresses(target);
  return !addresses.empty() && std::all_of(addresses.begin(), addresses.end(), [](const std::string& address) {
    return IsLoopbackSingleTarget(address);
  });
}

}  // namespace benchfleet
