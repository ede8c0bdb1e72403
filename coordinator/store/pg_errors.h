// Turns PostgreSQL failures (libpqxx exceptions, SQLSTATE codes) into absl::Status with
// context, so nothing thrown by libpqxx leaves store/. Also hides the password of a database
// URL before it reaches a message or a log. Pure functions; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_ERRORS_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_ERRORS_H_

#include <exception>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/database_url.h"

namespace benchfleet::coordinator {

// Returns the status for a failure with SQLSTATE `sqlstate` ("" when the connection failed):
// UNAVAILABLE for connection loss, shutdown and exhausted resources (worth retrying),
// ABORTED for serialization failures and deadlocks, INVALID_ARGUMENT for data the database
// refused, INTERNAL otherwise. The message is "<what>: <detail>".
absl::Status PgStatus(std::string_view sqlstate, std::string_view what, std::string_view detail);

// Returns the status for an exception libpqxx threw while doing `what`.
absl::Status PqxxStatus(const std::exception& e, std::string_view what);

// True when a failure with this SQLSTATE is about the record's content (data exceptions,
// integrity violations other than a duplicate key, program limits such as a too-large value):
// redoing the same rows cannot succeed, so they are stored one by one to find the bad one.
bool IsContentError(std::string_view sqlstate);

// The store's callers redact URLs with common/database_url.h.
using ::benchfleet::DatabaseUrlHasPassword;
using ::benchfleet::RedactDatabaseUrl;

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_ERRORS_H_
