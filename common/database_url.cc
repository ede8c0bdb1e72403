#include "common/database_url.h"

namespace benchfleet {

std::string RedactDatabaseUrl(std::string_view url) {
  std::string out(url);
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    // postgresql://user:password@host/...: the password sits between the first ':' after the
    // scheme and the last '@' of the authority.
    const size_t authority = scheme + 3;
    const size_t end = out.find_first_of("/?", authority);
    const size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
    if (at != std::string::npos && at > authority) {
      const size_t colon = out.find(':', authority);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // password=... as a keyword (spaces around '=' allowed) or a URL parameter.
  for (size_t pos = out.find("password"); pos != std::string::npos; pos = out.find("password", pos + 1)) {
    size_t value = pos + 8;
    while (value < out.size() && out[value] == ' ') ++value;
    if (value >= out.size() || out[value] != '=') continue;
    ++value;
    while (value < out.size() && out[value] == ' ') ++value;
    size_t end = value;
    if (end < out.size() && out[end] == '\'') {
      end = out.find('\'', end + 1);
      end = end == std::string::npos ? out.size() : end + 1;
    } else {
      end = out.find_first_of(" &", value);
      if (end == std::string::npos) end = out.size();
    }
    out.replace(value, end - value, "***");
  }
  return out;
}

bool DatabaseUrlHasPassword(std::string_view url) { return RedactDatabaseUrl(url) != url; }

}  // namespace benchfleet
