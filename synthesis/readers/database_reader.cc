#include "synthesis/readers/database_reader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>
#include <tuple>
#include <utility>

#include <pqxx/pqxx>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/proto_json.h"
#include "common/proto_time.h"
#include "common/record_validation.h"
#include "coordinator/store/reader_queries.h"
#include "coordinator/store/verdict_queries.h"
#include "google/protobuf/arena.h"

namespace benchfleet::synthesis {
namespace {

// What the messages call a record read from the database (Skipped::path).
constexpr char kDatabaseSource[] = "database";


constexpr int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A record's (or row's) place in SortRecordsOldestFirst's order, read once: the sort compares
// these, and reads the run id only to break a tie on start_time (compared in place,
// case-insensitively). No lower-cased copy of every run id, no pointer chase per comparison.
// Names the record or the row (and its store) it is the key of.
struct OldestFirstKey {
  bool has_start;
  int64_t seconds;
  int32_t nanos;
  v1::RunRecord* record = nullptr;
  RunRow* row = nullptr;
  RunRowStore* store = nullptr;  // the row's

  std::string_view run_id() const { return row != nullptr ? row->run_id : std::string_view(record->run_id()); }
};

OldestFirstKey KeyOf(v1::RunRecord* r) {
  return {r->has_start_time(), r->start_time().seconds(), r->start_time().nanos(), r};
}

OldestFirstKey KeyOf(RunRow* r, RunRowStore* store) {
  return {r->has_start_time, r->start_seconds, r->start_nanos, nullptr, r, store};
}

bool OldestFirst(const OldestFirstKey& x, const OldestFirstKey& y) {
  if (std::tie(x.has_start, x.seconds, x.nanos) != std::tie(y.has_start, y.seconds, y.nanos)) {
    return std::tie(x.has_start, x.seconds, x.nanos) < std::tie(y.has_start, y.seconds, y.nanos);
  }
  const std::string_view a = x.run_id();
  const std::string_view b = y.run_id();
  // As std::string compares: bytes as unsigned char.
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char c, char d) {
    return static_cast<unsigned char>(absl::ascii_tolower(static_cast<unsigned char>(c))) <
           static_cast<unsigned char>(absl::ascii_tolower(static_cast<unsigned char>(d)));
  });
}

void SortOldestFirst(std::vector<OldestFirstKey>* keys) {
  if (!std::is_sorted(keys->begin(), keys->end(), OldestFirst)) std::sort(keys->begin(), keys->end(), OldestFirst);
}

}  // namespace

void SortRecordsOldestFirst(std::vector<v1::RunRecord>* records) {
  std::vector<v1::RunRecord>& rs = *records;
  std::vector<OldestFirstKey> keys;
  keys.reserve(rs.size());
  for (v1::RunRecord& r : rs) keys.push_back(KeyOf(&r));
  SortOldestFirst(&keys);
  // from[i] is the record that belongs at i: permuted in place by following each cycle once (no
  // second vector of a million records).
  std::vector<size_t> from(rs.size());
  for (size_t i = 0; i < rs.size(); ++i) from[i] = static_cast<size_t>(keys[i].record - rs.data());
  for (size_t i = 0; i < rs.size(); ++i) {
    if (from[i] == i) continue;
    v1::RunRecord held = std::move(rs[i]);
    size_t at = i;
    while (from[at] != i) {
      const size_t next = from[at];
      rs[at] = std::move(rs[next]);
      from[at] = at;
      at = next;
    }
    rs[at] = std::move(held);
    from[at] = at;
  }
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

// The value of each hex digit, -1 for any other byte: one load per digit in the decode of
// record_pb, which is about a kilobyte of hex per row.
constexpr std::array<int8_t, 256> kHexDigits = [] {
  std::array<int8_t, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = static_cast<int8_t>(HexValue(static_cast<char>(c)));
  return t;
}();

// Parses one row of RecordsCopySql's COPY, "record_pb<TAB>record" with exactly one of them NULL,
// into `record`; the row's bytes are used as scratch. The binary copy (a bytea in hex, "\\x..." in
// COPY text) parses in about a microsecond; rows stored before migration 0003 have only the JSON.
absl::Status ParseRecordRow(char* row, size_t size, v1::RunRecord* record) {
  const std::string_view s(row, size);
  const size_t tab = s.find('\t');
  if (tab == std::string_view::npos) return absl::InvalidArgumentError("expected two columns (record_pb, record)");
  if (s.substr(0, tab) != "\\N") {
    if (tab < 3 || s.substr(0, 3) != "\\\\x" || (tab - 3) % 2 != 0) {
      return absl::InvalidArgumentError("record_pb is not a bytea in hex");
    }
    const size_t n = (tab - 3) / 2;
    const auto* digits = reinterpret_cast<const unsigned char*>(row + 3);
    for (size_t i = 0; i < n; ++i) {  // in place: byte i is written behind the digits it reads
      const int hi = kHexDigits[digits[2 * i]], lo = kHexDigits[digits[2 * i + 1]];
      if ((hi | lo) < 0) return absl::InvalidArgumentError("record_pb is not a bytea in hex");
      row[i] = static_cast<char>(hi * 16 + lo);
    }
    if (!record->ParseFromArray(row, static_cast<int>(n))) {
      return absl::InvalidArgumentError("record_pb is not a RunRecord");
    }
    return absl::OkStatus();
  }
  std::string json(s.substr(tab + 1));
  UnescapeCopyText(&json);
  return JsonToMessage(json, record, /*ignore_unknown_fields=*/true);
}

// Parses the COPY lines into records on worker threads while the caller keeps reading them: the
// JSON parse (protobuf's JsonStringToMessage, ~35 us for a 1.2 kB record here) costs about ten
// times the COPY itself, so it is what the reader spreads. Rows keep their order. Used by one
// thread; the destructor (also on an exception) stops and joins the workers.
class RecordParser {
 public:
  // With `as_rows`, each record becomes a RunRow (run_row.h) as soon as it is parsed, and only the
  // row is kept; else the records are kept whole, on arenas.
  RecordParser(int threads, bool as_rows) : as_rows_(as_rows) {
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

  // Takes the next row (escaped as COPY sends it); copied, so the caller may reuse its buffer.
  void Add(std::string_view line) {
    if (current_ == nullptr) {
      batches_.push_back(std::make_unique<Batch>());
      current_ = batches_.back().get();
      current_->first_row = rows_ + 1;
      TakeSpareBuffers(current_);
      current_->ends.reserve(kBatchRows);
      current_->bytes.reserve(kBatchRows * (line.size() + 64));
    }
    current_->bytes.append(line);
    current_->ends.push_back(current_->bytes.size());
    ++rows_;
    if (current_->ends.size() == kBatchRows) Submit();
  }

  // Waits for every row and appends the records, oldest first (SortRecordsOldestFirst), and the
  // skipped rows, in row order, to `result` (empty of records): as rows onto `as_rows` with their
  // stores when the parser makes rows, else copied into result->records. Sorted while still in
  // their batches, so that each record is placed once. Returns the keys of the records (or rows)
  // where they now are, in order (for the annotations, before they are read).
  std::vector<OldestFirstKey> Finish(ReadResult* result, RunRows* as_rows) {
    if (current_ != nullptr) Submit();
    if (!workers_.empty()) {
      std::unique_lock<std::mutex> lock(mu_);
      done_cv_.wait(lock, [&] { return pending_ == 0; });
    }
    std::vector<OldestFirstKey> keys;
    for (auto& batch : batches_) {
      keys.insert(keys.end(), batch->keys.begin(), batch->keys.end());
      std::move(batch->skipped.begin(), batch->skipped.end(), std::back_inserter(result->skipped));
    }
    SortOldestFirst(&keys);
    if (as_rows_) {
      as_rows->rows.reserve(as_rows->rows.size() + keys.size());
      for (const OldestFirstKey& k : keys) as_rows->rows.push_back(k.row);
      // The stores stay as they are (the keys' pointers still change them: the annotations).
      for (auto& batch : batches_) as_rows->stores.push_back(std::move(batch->store));
    } else {
      result->records.reserve(keys.size());
      for (OldestFirstKey& k : keys) k.record = &result->records.emplace_back(*k.record);
    }
    batches_.clear();
    return keys;
  }

 private:
  static constexpr size_t kBatchRows = 512;

  // Arena blocks: a batch's records take about a megabyte; blocks this large come from the
  // allocator a few at a time, not a page at a time (growing a thread's heap by a page per small
  // allocation, an mprotect each, was a third of the decode at a million runs).
  static constexpr size_t kArenaStartBlock = 256 << 10;
  static constexpr size_t kArenaMaxBlock = 2 << 20;

  // The rows of a batch end to end in one buffer (row i ends at ends[i]): one allocation per
  // batch rather than one string per row, and the records parse straight from it onto the
  // batch's arena.
  struct Batch {
    uint32_t first_row = 1;
    std::string bytes;
    std::vector<size_t> ends;
    std::unique_ptr<google::protobuf::Arena> arena;
    std::vector<v1::RunRecord*> records;  // on `arena`
    std::shared_ptr<RunRowStore> store;   // as_rows_: the rows instead of `arena` and `records`
    std::vector<OldestFirstKey> keys;     // of the records or rows, read by the worker while they are in its cache
    std::vector<Skipped> skipped;
  };

  void Parse(Batch* batch) const {
    if (as_rows_) {
      ParseToRows(batch);
    } else {
      ParseToArena(batch);
    }
    batch->bytes.clear();
    batch->ends.clear();
  }

  // Each record parsed into one message, reused (its strings and repeated fields keep their
  // memory from row to row), and made a row.
  static void ParseToRows(Batch* batch) {
    batch->store = std::make_shared<RunRowStore>();
    batch->keys.reserve(batch->ends.size());
    v1::RunRecord record;
    for (size_t i = 0, begin = 0; i < batch->ends.size(); begin = batch->ends[i++]) {
      absl::Status parsed = ParseRecordRow(batch->bytes.data() + begin, batch->ends[i] - begin, &record);
      if (!parsed.ok()) {
        batch->skipped.push_back({kDatabaseSource, batch->first_row + static_cast<uint32_t>(i),
                                  absl::StrCat("unreadable record: ", parsed.message())});
        continue;
      }
      // A row stored before the coordinator checked the bounds (or by another writer).
      if (absl::Status bounds = CheckRecordBounds(record); !bounds.ok()) {
        batch->skipped.push_back(
            {kDatabaseSource, batch->first_row + static_cast<uint32_t>(i), OutOfBoundsReason(bounds)});
        continue;
      }
      batch->keys.push_back(KeyOf(batch->store->Add(record), batch->store.get()));
    }
  }

  static void ParseToArena(Batch* batch) {
    google::protobuf::ArenaOptions options;
    options.start_block_size = kArenaStartBlock;
    options.max_block_size = kArenaMaxBlock;
    batch->arena = std::make_unique<google::protobuf::Arena>(options);
    batch->records.reserve(batch->ends.size());
    v1::RunRecord* record = nullptr;  // a row that failed leaves its (cleared) message for the next
    for (size_t i = 0, begin = 0; i < batch->ends.size(); begin = batch->ends[i++]) {
      if (record == nullptr) record = google::protobuf::Arena::CreateMessage<v1::RunRecord>(batch->arena.get());
      absl::Status parsed = ParseRecordRow(batch->bytes.data() + begin, batch->ends[i] - begin, record);
      absl::Status bounds = parsed.ok() ? CheckRecordBounds(*record) : absl::OkStatus();
      if (parsed.ok() && bounds.ok()) {
        batch->records.push_back(record);
        record = nullptr;
      } else if (parsed.ok()) {
        record->Clear();
        batch->skipped.push_back(
            {kDatabaseSource, batch->first_row + static_cast<uint32_t>(i), OutOfBoundsReason(bounds)});
      } else {
        record->Clear();
        batch->skipped.push_back({kDatabaseSource, batch->first_row + static_cast<uint32_t>(i),
                                  absl::StrCat("unreadable record: ", parsed.message())});
      }
    }
    batch->keys.reserve(batch->records.size());
    for (v1::RunRecord* r : batch->records) batch->keys.push_back(KeyOf(r));
  }

  // A parsed batch's row buffers go back for the next batch to fill: a fresh megabyte per batch
  // was a page fault per 4 kB, thousands of batches over.
  void TakeSpareBuffers(Batch* batch) {
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_.empty()) return;
    batch->bytes = std::move(spare_.back().first);
    batch->ends = std::move(spare_.back().second);
    spare_.pop_back();
  }
  void GiveBackBuffers(Batch* batch) {  // with mu_ held
    spare_.emplace_back(std::move(batch->bytes), std::move(batch->ends));
    batch->bytes = {};
    batch->ends = {};
  }

  void Submit() {
    Batch* batch = current_;
    current_ = nullptr;
    if (workers_.empty()) {
      Parse(batch);
      std::lock_guard<std::mutex> lock(mu_);
      GiveBackBuffers(batch);
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
        GiveBackBuffers(batch);
      }
      done_cv_.notify_all();
    }
  }

  const bool as_rows_;
  std::vector<std::thread> workers_;
  std::vector<std::unique_ptr<Batch>> batches_;  // in row order; owned here, parsed by workers
  Batch* current_ = nullptr;                     // being filled by Add
  uint32_t rows_ = 0;

  std::mutex mu_;
  std::condition_variable work_cv_;  // a batch is queued, or closing
  std::condition_variable done_cv_;  // a batch left the queue or was parsed
  std::deque<Batch*> queue_ ABSL_GUARDED_BY(mu_);
  size_t pending_ ABSL_GUARDED_BY(mu_) = 0;  // queued or being parsed
  // Row buffers of parsed batches, for the next ones (at most as many as batches in flight).
  std::vector<std::pair<std::string, std::vector<size_t>>> spare_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
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
  if (filter.since.has_value() && (!record.has_start_time() || ToTime(record.start_time()) < *filter.since)) return false;
  return true;
}

bool RecordMatches(const RecordFilter& filter, const RunRow& row) {
  if (!filter.tasks.empty() && std::find(filter.tasks.begin(), filter.tasks.end(), row.task) == filter.tasks.end()) {
    return false;
  }
  if (filter.since.has_value() &&
      (!row.has_start_time ||
       absl::FromUnixSeconds(row.start_seconds) + absl::Nanoseconds(row.start_nanos) < *filter.since)) {
    return false;
  }
  return true;
}

StoredVerdict ToStoredVerdict(v1::RegressionCheck check) {
  StoredVerdict v;
  v.agent_id = std::move(*check.mutable_agent_id());
  v.task = std::move(*check.mutable_task());
  v.conditions_fingerprint = std::move(*check.mutable_conditions_fingerprint());
  v.verdict = std::move(*check.mutable_verdict());
  return v;
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

absl::StatusOr<ReadResult> ReadRecordsFromDatabase(const std::string& url, const RecordFilter& filter,
                                                   RunRows* as_rows) {
  ReadResult result;
  const char* step = "connecting";
  try {
    pqxx::connection conn(url);
    // One snapshot for the runs and their conditions.
    step = "starting a read-only transaction";
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn);
    std::vector<std::string> quoted_tasks;
    for (const std::string& task : filter.tasks) quoted_tasks.push_back(tx.quote(task));
    const std::string copy_sql = coordinator::RecordsCopySql(quoted_tasks, filter.since);

    step = "reading the runs";
    std::vector<OldestFirstKey> read;  // the records or rows, oldest first, wherever they are kept
    {
      // libpqxx 6.4's stream_from puts its "table" verbatim after COPY, so a parenthesized query
      // streams like a table; the statement is RecordsCopySql's without its "COPY " and " TO STDOUT".
      const std::string query = copy_sql.substr(5, copy_sql.size() - 5 - 10);
      pqxx::stream_from stream(tx, query);
      RecordParser parser(ParserThreads(), as_rows != nullptr);
      std::string line;
      while (stream.get_raw_line(line)) parser.Add(line);
      read = parser.Finish(&result, as_rows);
      stream.complete();
    }

    // Operators' and the scheduler's annotations (INVALIDATED, REGRESSION) become flags of their
    // runs, so the guide shows them and excludes invalidated runs. A database made before the
    // fleet migration has no run_annotations table.
    step = "reading the run annotations";
    if (!read.empty()) {
      const std::vector<coordinator::RunAnnotationRow> annotations = coordinator::SelectRunAnnotations(tx);
      // Most databases hold none: index the records only when there is something to attach.
      std::map<std::string, const OldestFirstKey*> by_id;
      if (!annotations.empty()) {
        for (const OldestFirstKey& k : read) by_id[absl::AsciiStrToLower(std::string(k.run_id()))] = &k;
      }
      for (const coordinator::RunAnnotationRow& a : annotations) {
        const auto it = by_id.find(a.run_id);
        if (it == by_id.end()) continue;
        const OldestFirstKey& k = *it->second;
        if (k.row != nullptr) {
          k.store->AddFlag(k.row, a.code, a.reason);
        } else {
          v1::Flag* flag = k.record->add_flags();
          flag->set_code(a.code);
          flag->set_reason(a.reason);
        }
      }
    }

    step = "reading the regression verdicts";
    v1::ListRegressionChecksResponse checks = coordinator::SelectNewestVerdicts(tx, filter.tasks, filter.since);
    for (const std::string& reason : checks.unreadable()) result.skipped.push_back({kDatabaseSource, 0, reason});
    for (v1::RegressionCheck& check : *checks.mutable_checks()) result.verdicts.push_back(ToStoredVerdict(std::move(check)));

    // Views of the records' own strings, one lookup per record (most records share a few), and
    // of the verdicts' (their machines are named by their conditions when their run is not read).
    // A hash set, sorted once at the end: a tree's string compares at each of a million records
    // were a sixth of the reader's own time.
    absl::flat_hash_set<std::string_view> fingerprints;
    std::string_view previous;
    for (const OldestFirstKey& k : read) {
      const std::string_view fingerprint =
          k.row != nullptr ? k.row->conditions_fingerprint : std::string_view(k.record->conditions_fingerprint());
      if (!fingerprint.empty() && fingerprint != previous) fingerprints.insert(fingerprint);
      previous = fingerprint;
    }
    for (const StoredVerdict& v : result.verdicts) {
      if (!v.conditions_fingerprint.empty()) fingerprints.insert(v.conditions_fingerprint);
    }
    if (!fingerprints.empty()) {
      step = "reading the conditions";
      std::vector<std::string> sorted(fingerprints.begin(), fingerprints.end());
      std::sort(sorted.begin(), sorted.end());
      for (const auto& [fingerprint, json] : coordinator::SelectConditionsJson(tx, sorted)) {
        v1::MachineConditions conditions;
        absl::Status parsed = JsonToMessage(json, &conditions, /*ignore_unknown_fields=*/true);
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
  return result;  // oldest first already (RecordParser::Finish)
}

}  // namespace benchfleet::synthesis
