#include "tests/support/pg_test_db.h"

#include <cstdlib>
#include <pqxx/pqxx>

#include "absl/strings/str_replace.h"
#include "benchfleet/v1/record.pb.h"
#include "common/hashing.h"
#include "common/proto_json.h"

namespace benchfleet::testing {
namespace {

// Replaces the database name (the path) of a libpq URL.
std::string WithDatabase(const std::string& url, const std::string& db) {
  // postgresql://user@host:port/dbname?params
  size_t scheme = url.find("://");
  size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  size_t query = url.find('?');
  std::string base = slash == std::string::npos ? url.substr(0, query) : url.substr(0, slash);
  std::string params = query == std::string::npos ? "" : url.substr(query);
  return base + "/" + db + params;
}

}  // namespace

std::string TestServerUrl() {
  const char* url = std::getenv("BENCHFLEET_TEST_DATABASE_URL");
  return url == nullptr ? "" : url;
}

PgTestDb::PgTestDb() : admin_url_(TestServerUrl()) {
  if (admin_url_.empty()) return;
  std::string id = NewUuid();
  name_ = "bf_test_" + id.substr(0, 8) + id.substr(9, 4);
  pqxx::connection c(admin_url_);
  pqxx::nontransaction tx(c);
  tx.exec("CREATE DATABASE " + name_);
  url_ = WithDatabase(admin_url_, name_);
}

PgTestDb::~PgTestDb() {
  if (name_.empty()) return;
  try {
    pqxx::connection c(admin_url_);
    pqxx::nontransaction tx(c);
    tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (const std::exception&) {
    // The server may already be gone at the end of an interrupted suite; scripts/test removes it.
  }
}

std::string PgTestDb::QueryValue(const std::string& sql) const {
  pqxx::connection c(url_);
  pqxx::nontransaction tx(c);
  pqxx::result r = tx.exec(sql);
  if (r.empty() || r[0].empty() || r[0][0].is_null()) return "";
  return r[0][0].c_str();
}

int PgTestDb::FillRecordJson() const {
  pqxx::connection c(url_);
  pqxx::work tx(c);
  const pqxx::result rows = tx.exec("SELECT run_id::text, record_pb FROM runs WHERE record IS NULL");
  for (const auto& row : rows) {
    const pqxx::binarystring bytes(row[1]);
    v1::RunRecord record;
    if (!record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      throw std::runtime_error("run " + std::string(row[0].c_str()) + ": record_pb is not a RunRecord");
    }
    absl::StatusOr<std::string> json = MessageToJson(record);
    if (!json.ok()) throw std::runtime_error(std::string(json.status().message()));
    tx.exec_params("UPDATE runs SET record = $1::jsonb WHERE run_id = $2::uuid",
                   absl::StrReplaceAll(*json, {{"\\u0000", "\\ufffd"}}), row[0].c_str());
  }
  tx.commit();
  return static_cast<int>(rows.size());
}

}  // namespace benchfleet::testing
