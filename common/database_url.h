// Keeps a database URL's password out of logs, errors and process listings: every program that
// takes a PostgreSQL URL (the coordinator, `benchfleet guide`) redacts it before printing it and
// refuses one with a password on the command line. Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_DATABASE_URL_H_
#define BENCHFLEET_COMMON_DATABASE_URL_H_

#include <string>
#include <string_view>

namespace benchfleet {

// Returns the URL (postgresql://user:PASSWORD@host/db) or keyword form (password=PASSWORD)
// with the password replaced by "***".
std::string RedactDatabaseUrl(std::string_view url);

// True when the URL holds a password (a secret that must not come from the command line).
bool DatabaseUrlHasPassword(std::string_view url);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_DATABASE_URL_H_
