#include "coordinator/store/pg_copy_connection.h"

#include <libpq-fe.h>

namespace benchfleet::coordinator {
namespace {

// Notices (e.g. "relation already exists, skipping") are not errors; libpq would print them.
void IgnoreNotice(void*, const char*) {}

// Fills `out` from a failed result; a lost connection has no SQLSTATE.
void SetError(PGconn* conn, const PGresult* result, PgOutcome* out) {
  out->ok = false;
  const char* state = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  out->sqlstate = state == nullptr || PQstatus(conn) == CONNECTION_BAD ? "" : state;
  // The primary message alone: the full text repeats "ERROR:" and adds COPY context lines.
  const char* message =
      result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
  out->message = message == nullptr || *message == '\0' ? PQerrorMessage(conn) : message;
  while (!out->message.empty() && (out->message.back() == '\n' || out->message.back() == ' ')) {
    out->message.pop_back();
  }
}

// Reads the results of the statement just sent; the last failure (if any) wins.
PgOutcome DrainResults(PGconn* conn) {
  PgOutcome out;
  while (PGresult* result = PQgetResult(conn)) {
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_TUPLES_OK) {
      for (int row = 0; row < PQntuples(result); ++row) {
        out.first_column.emplace_back(PQgetvalue(result, row, 0),
                                      static_cast<size_t>(PQgetlength(result, row, 0)));
      }
    } else if (status != PGRES_COMMAND_OK) {
      SetError(conn, result, &out);
    }
    PQclear(result);
  }
  if (out.ok && PQstatus(conn) == CONNECTION_BAD) SetError(conn, nullptr, &out);
  return out;
}

}  // namespace

PgCopyConnection::PgCopyConnection(std::string database_url) : url_(std::move(database_url)) {}

PgCopyConnection::~PgCopyConnection() { Reset(); }

void PgCopyConnection::Reset() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

PgOutcome PgCopyConnection::Failure(const char* fallback_message) {
  PgOutcome out;
  out.ok = false;
  const char* message = conn_ == nullptr ? nullptr : PQerrorMessage(conn_);
  out.message = message == nullptr || *message == '\0' ? fallback_message : message;
  while (!out.message.empty() && out.message.back() == '\n') out.message.pop_back();
  return out;
}

PgOutcome PgCopyConnection::EnsureConnected() {
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) return PgOutcome{};
  Reset();
  conn_ = PQconnectdb(url_.c_str());
  if (conn_ == nullptr) return Failure("out of memory opening a connection");
  if (PQstatus(conn_) != CONNECTION_OK) {
    PgOutcome out = Failure("cannot connect");
    Reset();
    return out;
  }
  PQsetNoticeProcessor(conn_, IgnoreNotice, nullptr);
  return PgOutcome{};
}

PgOutcome PgCopyConnection::Exec(const std::string& sql) {
  if (PgOutcome c = EnsureConnected(); !c.ok) return c;
  if (PQsendQuery(conn_, sql.c_str()) != 1) {
    PgOutcome out;
    SetError(conn_, nullptr, &out);
    return out;
  }
  return DrainResults(conn_);
}

PgOutcome PgCopyConnection::Copy(const std::string& copy_sql,
                                 absl::Span<const std::string_view> chunks) {
  if (PgOutcome c = EnsureConnected(); !c.ok) return c;
  PGresult* start = PQexec(conn_, copy_sql.c_str());
  if (PQresultStatus(start) != PGRES_COPY_IN) {
    PgOutcome out;
    SetError(conn_, start, &out);
    PQclear(start);
    DrainResults(conn_);
    return out;
  }
  PQclear(start);
  bool sent = true;
  for (std::string_view chunk : chunks) {
    if (PQputCopyData(conn_, chunk.data(), static_cast<int>(chunk.size())) != 1) {
      sent = false;
      break;
    }
  }
  // A failed send leaves the connection broken; ending the COPY then reports why.
  if (PQputCopyEnd(conn_, sent ? nullptr : "sending the rows failed") != 1) {
    PgOutcome out;
    SetError(conn_, nullptr, &out);
    return out;
  }
  return DrainResults(conn_);
}

}  // namespace benchfleet::coordinator
