#include "coordinator/store/pg_errors.h"

#include <pqxx/except>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace benchfleet::coordinator {

bool IsContentError(std::string_view sqlstate) {
  if (sqlstate == "23505") return false;  // unique_violation: a duplicate, handled apart
  return sqlstate.starts_with("22") || sqlstate.starts_with("23") ||
         sqlstate.starts_with("54");
}

absl::Status PgStatus(std::string_view sqlstate, std::string_view what, std::string_view detail) {
  // Debian's Abseil has its own string_view: go through std::string.
  std::string message = absl::StrCat(std::string(what), ": ",
                                     absl::StripAsciiWhitespace(std::string(detail)));
  if (sqlstate.empty() || sqlstate.starts_with("08") || sqlstate.starts_with("53") ||
      sqlstate.starts_with("57P") || sqlstate == "55000" || sqlstate == "55006") {
    return absl::UnavailableError(message);
  }
  if (sqlstate.starts_with("40")) return absl::AbortedError(message);
  if (IsContentError(sqlstate) || sqlstate == "23505") {
    return absl::InvalidArgumentError(message);
  }
  return absl::InternalError(absl::StrCat(message, " (SQLSTATE ", std::string(sqlstate), ")"));
}

absl::Status PqxxStatus(const std::exception& e, std::string_view what) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
      dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    return PgStatus("", what, e.what());
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    // libpqxx reports a lost connection during a statement as an sql_error without SQLSTATE.
    return PgStatus(sql->sqlstate().empty() ? "XX000" : sql->sqlstate(), what, e.what());
  }
  return absl::InternalError(absl::StrCat(std::string(what), ": ", e.what()));
}

}  // namespace benchfleet::coordinator
