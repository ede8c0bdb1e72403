#include "synthesis/readers/database_reader.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/proto_json.h"

namespace benchfleet::synthesis {
namespace {

// What the messages call a record read from the database (Skipped::path).
constexpr char kDatabaseSource[] = "database";

absl::Time StartOf(const v1::RunRecord& record) {
  return absl::FromUnixSeconds(record.start_time().seconds()) +
         absl::Nanoseconds(record.start_time().nanos());
}

std::string FormatUtc(absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", t, absl::UTCTimeZone()); }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void SortRecordsOldestFirst(std::vector<v1::RunRecord>* records) {
  struct Key {
    bool has_start;
    int64_t seconds;
    int32_t nanos;
    std::string run_id;
  };
  std::vector<Key> keys;
  keys.reserve(records->size());
  for (const v1::RunRecord& r : *records) {
    keys.push_back({r.has_start_time(), r.start_time().seconds(), r.start_time().nanos(),
                    absl::AsciiStrToLower(r.run_id())});
  }
  std::vector<size_t> order(records->size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Key& x = keys[a];
    const Key& y = keys[b];
    return std::tie(x.has_start, x.seconds, x.nanos, x.run_id) < std::tie(y.has_start, y.seconds, y.nanos, y.run_id);
  });
  std::vector<v1::RunRecord> sorted;
  sorted.reserve(records->size());
  for (size_t i : order) sorted.push_back(std::move((*records)[i]));
  *records = std::move(sorted);
}

namespace {

// Turns what libpqxx threw into a Status. The messages are libpq's, which name the host and port
// but never the connection string.
absl::Status StatusOf(const std::exception& e, const char* what) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot reach the database while ", what, ": ", e.what()));
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e); sql != nullptr) {
    return absl::InternalError(absl::StrCat("the database failed while ", what, " (SQLSTATE ", sql->sqlstate(),
                                            "): ", e.what()));
  }
  return absl::InternalError(absl::StrCat("the database failed while ", what, ": ", e.what()));
}

// Parses one row of RecordsCopySql's COPY, "record_pb<TAB>record" with exactly one of them NULL,
// into `record`; `line` is used as scratch. The binary copy (a bytea in hex, "\\x..." in COPY
// text) parses in about a microsecond; rows stored before migration 0003 have only the JSON.
absl::Status ParseRecordRow(std::string* line, v1::RunRecord* record) {
  std::string& s = *line;
  const size_t tab = s.find('\t');
  if (tab == std::string::npos) return absl::InvalidArgumentError("expected two columns (record_pb, record)");
  if (std::string_view(s.data(), tab) != "\\N") {
    if (tab < 3 || s.compare(0, 3, "\\\\x") != 0 || (tab - 3) % 2 != 0) {
      return absl::InvalidArgumentError("record_pb is not a bytea in hex");
    }
    const size_t n = (tab - 3) / 2;
    for (size_t i = 0; i < n; ++i) {  // in place: byte i is written behind the digits it reads
      const int hi = HexValue(s[3 + 2 * i]), lo = HexValue(s[4 + 2 * i]);
      if (hi < 0 || lo < 0) return absl::InvalidArgumentError("record_pb is not a bytea in hex");
      s[i] = static_cast<char>(hi * 16 + lo);
    }
    if (!record->ParseFromArray(s.data(), static_cast<int>(n))) {
      return absl::InvalidArgumentError("record_pb is not a RunRecord");
    }
    return absl::OkStatus();
  }
  s.erase(0, tab + 1);
  UnescapeCopyText(&s);
  return JsonToMessage(s, record, /*ignore_unknown_fields=*/true);
}

// Parses the COPY lines into records on worker threads while the caller keeps reading them: the
// JSON parse (protobuf's JsonStringToMessage, ~35 us for a 1.2 kB record here) costs about ten
// times the COPY itself, so it is what the reader spreads. Rows keep their order. Used by one
// thread; the destructor (also on an exception) stops and joins the workers.
class RecordParser {
 public:
  explicit RecordParser(int threads) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
  }
  ~RecordParser() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  RecordParser(const RecordParser&) = delete;
  RecordParser& operator=(const RecordParser&) = delete;

  // Takes the next row (escaped as COPY sends it).
  void Add(std::string line) {
    if (current_ == nullptr) {
      batches_.push_back(std::make_unique<Batch>());
      current_ = batches_.back().get();
      current_->first_row = rows_ + 1;
      current_->lines.reserve(kBatchRows);
    }
    current_->lines.push_back(std::move(line));
    ++rows_;
    if (current_->lines.size() == kBatchRows) Submit();
  }

  // Waits for every row and appends the records and the skipped rows, in row order, to `result`.
  void Finish(ReadResult* result) {
    if (current_ != nullptr) Submit();
    if (!workers_.empty()) {
      std::unique_lock<std::mutex> lock(mu_);
      done_cv_.wait(lock, [&] { return pending_ == 0; });
    }
    size_t count = result->records.size();
    for (const auto& batch : batches_) count += batch->records.size();
    result->records.reserve(count);
    for (auto& batch : batches_) {
      std::move(batch->records.begin(), batch->records.end(), std::back_inserter(result->records));
      std::move(batch->skipped.begin(), batch->skipped.end(), std::back_inserter(result->skipped));
    }
    batches_.clear();
  }

 private:
  static constexpr size_t kBatchRows = 512;

  struct Batch {
    uint32_t first_row = 1;
    std::vector<std::string> lines;
    std::vector<v1::RunRecord> records;
    std::vector<Skipped> skipped;
  };

  static void Parse(Batch* batch) {
    batch->records.reserve(batch->lines.size());
    for (size_t i = 0; i < batch->lines.size(); ++i) {
      v1::RunRecord record;
      absl::Status parsed = ParseRecordRow(&batch->lines[i], &record);
      if (parsed.ok()) {
        batch->records.push_back(std::move(record));
      } else {
        batch->skipped.push_back({kDatabaseSource, batch->first_row + static_cast<uint32_t>(i),
                                  absl::StrCat("unreadable record: ", parsed.message())});
      }
    }
    batch->lines = {};
  }

  void Submit() {
    Batch* batch = current_;
    current_ = nullptr;
    if (workers_.empty()) {
      Parse(batch);
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    // At most a few batches wait, so the lines never pile up when the parse falls behind.
    done_cv_.wait(lock, [&] { return queue_.size() < 2 * workers_.size(); });
    queue_.push_back(batch);
    ++pending_;
    work_cv_.notify_one();
  }

  void Work() {
    while (true) {
      Batch* batch = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;  // closing
        batch = queue_.front();
        queue_.pop_front();
      }
      done_cv_.notify_all();  // room in the queue
      Parse(batch);
      {
        std::lock_guard<std::mutex> lock(mu_);
        --pending_;
      }
      done_cv_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::vector<std::unique_ptr<Batch>> batches_;  // in row order; owned here, parsed by workers
  Batch* current_ = nullptr;                     // being filled by Add
  uint32_t rows_ = 0;

  std::mutex mu_;
  std::condition_variable work_cv_;  // a batch is queued, or closing
  std::condition_variable done_cv_;  // a batch left the queue or was parsed
  std::deque<Batch*> queue_;         // guarded by mu_
  size_t pending_ = 0;               // queued or being parsed; guarded by mu_
  bool closing_ = false;             // guarded by mu_
};

// One parsing thread per core, up to 8 (the caller's thread reads the COPY meanwhile); none on a
// single core, where the caller parses.
int ParserThreads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores <= 1 ? 0 : static_cast<int>(std::min(cores, 8u));
}

}  // namespace

bool RecordMatches(const RecordFilter& filter, const v1::RunRecord& record) {
  if (!filter.tasks.empty() &&
      std::find(filter.tasks.begin(), filter.tasks.end(), record.task()) == filter.tasks.end()) {
    return false;
  }
  if (filter.since.has_value() && (!record.has_start_time() || StartOf(record) < *filter.since)) return false;
  return true;
}

std::string RecordsCopySql(const std::vector<std::string>& quoted_tasks, const std::optional<absl::Time>& since) {
  std::vector<std::string> where;
  if (!quoted_tasks.empty()) where.push_back(absl::StrCat("task IN (", absl::StrJoin(quoted_tasks, ", "), ")"));
  if (since.has_value()) where.push_back(absl::StrCat("start_time >= '", FormatUtc(*since), "'::timestamptz"));
  // record_pb when the store wrote one (migration 0003), else the JSON: each row carries one.
  return absl::StrCat("COPY (SELECT record_pb, CASE WHEN record_pb IS NULL THEN record END FROM runs",
                      where.empty() ? "" : " WHERE ",
                      absl::StrJoin(where, " AND "), ") TO STDOUT");
}

void UnescapeCopyText(std::string* line) {
  std::string& s = *line;
  size_t in = s.find('\\');
  if (in == std::string::npos) return;
  size_t out = in;
  while (in < s.size()) {
    char c = s[in++];
    if (c != '\\' || in >= s.size()) {
      s[out++] = c;
      continue;
    }
    char e = s[in++];
    switch (e) {
      case 'b': s[out++] = '\b'; break;
      case 'f': s[out++] = '\f'; break;
      case 'n': s[out++] = '\n'; break;
      case 'r': s[out++] = '\r'; break;
      case 't': s[out++] = '\t'; break;
      case 'v': s[out++] = '\v'; break;
      case 'x': {
        int value = 0;
        int digits = 0;
        while (digits < 2 && in < s.size() && HexValue(s[in]) >= 0) value = value * 16 + HexValue(s[in++]), ++digits;
        s[out++] = digits == 0 ? 'x' : static_cast<char>(value);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int value = e - '0';
          for (int digits = 1; digits < 3 && in < s.size() && s[in] >= '0' && s[in] <= '7'; ++digits) {
            value = value * 8 + (s[in++] - '0');
          }
          s[out++] = static_cast<char>(value);
        } else {
          s[out++] = e;  // "\\" and any other escaped character stand for themselves
        }
    }
  }
  s.resize(out);
}

absl::StatusOr<ReadResult> ReadRecordsFromDatabase(const std::string& url, const RecordFilter& filter) {
  ReadResult result;
  const char* step = "connecting";
  try {
    pqxx::connection conn(url);
    // One snapshot for the runs and their conditions.
    step = "starting a read-only transaction";
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn);
    std::vector<std::string> quoted_tasks;
    for (const std::string& task : filter.tasks) quoted_tasks.push_back(tx.quote(task));
    const std::string copy_sql = RecordsCopySql(quoted_tasks, filter.since);

    step = "reading the runs";
    {
      // libpqxx 6.4's stream_from puts its "table" verbatim after COPY, so a parenthesized query
      // streams like a table; the statement is RecordsCopySql's without its "COPY " and " TO STDOUT".
      const std::string query = copy_sql.substr(5, copy_sql.size() - 5 - 10);
      pqxx::stream_from stream(tx, query);
      RecordParser parser(ParserThreads());
      std::string line;
      while (stream.get_raw_line(line)) parser.Add(std::move(line));
      parser.Finish(&result);
      stream.complete();
    }

    // Operators' and the scheduler's annotations (INVALIDATED, REGRESSION) become flags of their
    // runs, so the guide shows them and excludes invalidated runs. A database made before the
    // fleet migration has no run_annotations table.
    step = "reading the run annotations";
    if (!result.records.empty() &&
        tx.exec("SELECT to_regclass('run_annotations') IS NOT NULL")[0][0].as<bool>()) {
      const pqxx::result rows =
          tx.exec("SELECT run_id::text, code, reason FROM run_annotations ORDER BY run_id, created, code");
      // Most databases hold none: index the records only when there is something to attach.
      std::map<std::string, v1::RunRecord*> by_id;
      if (!rows.empty()) {
        for (v1::RunRecord& r : result.records) by_id[absl::AsciiStrToLower(r.run_id())] = &r;
      }
      for (const auto& row : rows) {
        const auto it = by_id.find(row[0].c_str());
        if (it == by_id.end()) continue;
        v1::Flag* flag = it->second->add_flags();
        flag->set_code(row[1].c_str());
        flag->set_reason(row[2].c_str());
      }
    }

    std::set<std::string> fingerprints;
    for (const v1::RunRecord& r : result.records) {
      if (!r.conditions_fingerprint().empty()) fingerprints.insert(r.conditions_fingerprint());
    }
    if (!fingerprints.empty()) {
      step = "reading the conditions";
      const std::string wanted = nlohmann::json(fingerprints).dump();
      pqxx::result rows = tx.exec_params(
          "SELECT fingerprint, conditions::text FROM conditions "
          "WHERE fingerprint IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY fingerprint",
          wanted);
      for (const auto& row : rows) {
        v1::MachineConditions conditions;
        const std::string fingerprint = row[0].c_str();
        absl::Status parsed = JsonToMessage(row[1].c_str(), &conditions, /*ignore_unknown_fields=*/true);
        if (!parsed.ok()) {
          result.skipped.push_back(
              {kDatabaseSource, 0, absl::StrCat("conditions ", fingerprint, " unreadable: ", parsed.message())});
          continue;
        }
        if (conditions.fingerprint().empty()) conditions.set_fingerprint(fingerprint);
        result.conditions.emplace(fingerprint, std::move(conditions));
      }
    }
    tx.commit();
  } catch (const std::exception& e) {
    return StatusOf(e, step);
  }
  SortRecordsOldestFirst(&result.records);
  return result;
}

}  // namespace benchfleet::synthesis
