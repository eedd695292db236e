#include "clink/connectors/sql/sql_filesystem_sink.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <cctype>

#include "clink/connectors/file_sink.hpp"
#include "clink/connectors/sql/filesystem_partitions.hpp"
#include "clink/connectors/staged_file.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/time/window_arithmetic.hpp"

namespace clink::sql {

namespace fs = std::filesystem;

namespace {

// Union state: staging files pre-committed but not yet committed at the checkpoint,
// so a restored run removes only the staging files of the failed attempt.
constexpr const char* kPreCommittedState = "sql-file-sink-pre-committed";
// Overwrite: the files that were in the target when the job started and are not yet
// replaced.
constexpr const char* kReplaceState = "sql-file-sink-replace";
// Partition commit: "C <creation ms> <dir>" for partitions whose data a checkpoint made
// visible and that wait for their trigger, "K <creation ms> <dir>" for the others seen.
constexpr const char* kPartitionState = "sql-file-sink-partitions";
constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

bool hidden(const fs::path& p) {
  auto name = p.filename().string();
  return !name.empty() && (name[0] == '.' || name[0] == '_');
}

// Visible files below `dir` (recursively, hidden names and directories skipped).
std::vector<std::string> visible_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (hidden(it->path())) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) out.push_back(it->path().string());
  }
  return out;
}

class FilesystemSinkWriter final : public TransactionalSinkWriter<ColumnBatch> {
 public:
  FilesystemSinkWriter(const FilesystemSinkConfig& c, SchemaPtr file_schema, int subtask, int parallelism)
      : c_(c), subtask_(subtask), parallelism_(parallelism), ext_(c.format == RowFormat::kJson ? "json" : "csv") {
    if (c_.format == RowFormat::kJson) json_.emplace(file_schema, c_.json);
    else csv_.emplace(file_schema, c_.csv);
    std::vector<bool> is_partition(c_.schema->size(), false);
    for (std::size_t i : c_.partition_by) is_partition[i] = true;
    for (std::size_t i = 0; i < c_.schema->size(); ++i)
      if (!is_partition[i]) file_columns_.push_back(i);
  }

  void open(RuntimeContext& ctx) override {
    ctx_ = &ctx;
    state_ = &ctx.operator_state();
    for (const auto& entry : state_->list(kPartitionState)) {
      std::size_t a = entry.find(' '), b = entry.find(' ', a + 1);
      std::string dir = entry.substr(b + 1);
      partitions_[dir] = std::stoll(entry.substr(a + 1, b - a - 1));
      if (entry[0] == 'C') candidates_.insert(dir);
    }
    if (c_.overwrite && parallelism_ > 1)
      throw ClinkError("sql_filesystem_sink '" + c_.path + "': overwrite needs the sink at parallelism 1, got " +
                       std::to_string(parallelism_));
    std::error_code ec;
    fs::create_directories(c_.path, ec);
    if (ec) throw ClinkError("sql_filesystem_sink: cannot create directory " + c_.path + ": " + ec.message());
    auto& pre = state_->list(kPreCommittedState, Redistribution::kUnion);
    std::set<std::string> keep(pre.begin(), pre.end());
    pre.clear();
    remove_stale_staging_files(keep);
    part_base_ = next_free_part_number();
    if (c_.overwrite) {
      auto& replace = state_->list(kReplaceState);
      if (!ctx.is_restored()) replace = visible_files(c_.path);
      replace_.assign(replace.begin(), replace.end());
    }
  }

  void begin_transaction(std::int64_t transaction_id) override {
    abort();
    part_ = part_base_ + FilePartWriter::part_number(transaction_id, subtask_);
    rolls_.clear();
  }

  void on_watermark(EventTime wm) override { watermark_ = std::max(watermark_, wm); }
  void end_of_input() override { ending_ = true; }

  void write(const ColumnBatch& batch) override {
    const auto& kinds = batch.row_kinds();
    for (std::size_t r = 0; r < batch.size(); ++r)
      if (kinds[r] != RowKind::kInsert)
        throw ClinkError("sql_filesystem_sink '" + c_.path + "' is insert-only and got a " +
                         std::string(row_kind_short_string(kinds[r])) + " row: " + format_row(batch, r, *TimeZone::utc()));
    cols_.clear();
    for (std::size_t i : file_columns_) cols_.push_back(&batch.column(i));
    now_ = ctx_->timer_service().current_processing_time();
    if (now_ - last_check_ >= c_.rolling.check_interval_ms) roll_by_time();
    for (std::size_t r = 0; r < batch.size(); ++r) {
      auto it = file_for(batch, r);
      OpenFile& f = it->second;
      const std::size_t before = f.buffer.size();
      if (json_) json_->encode(cols_.data(), r, f.buffer);
      else csv_->encode(cols_.data(), r, f.buffer);
      f.buffer += '\n';
      f.bytes += static_cast<std::int64_t>(f.buffer.size() - before);
      f.last_write = now_;
      if (f.bytes >= c_.rolling.file_size) {
        roll(it);
      } else if (f.buffer.size() >= kFlushBytes) {
        f.file->append(f.buffer);
        f.buffer.clear();
      }
    }
  }

  // Committable: the (staging, final) pairs, the files this commit replaces, then the
  // partition directories written and the watermark (for the partition commit).
  std::string pre_commit() override {
    while (!files_.empty()) roll(files_.begin());
    std::string out;
    StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(closed_.size()), out);
    std::vector<std::string> replaced;
    std::set<std::string> dirs;
    for (auto& [dir, file] : closed_) {
      StateCodec<std::string>::encode(file->staging_path(), out);
      StateCodec<std::string>::encode(file->final_path(), out);
      pre_committed_.insert(file->staging_path());
      if (c_.overwrite && dirs.count(dir) == 0) take_replaced(dir, replaced);
      dirs.insert(dir);
    }
    StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(replaced.size()), out);
    for (const auto& p : replaced) StateCodec<std::string>::encode(p, out);
    StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(dirs.size()), out);
    for (const auto& d : dirs) StateCodec<std::string>::encode(d, out);
    StateCodec<std::int64_t>::encode(watermark_, out);
    closed_.clear();
    state_->list(kPreCommittedState, Redistribution::kUnion).assign(pre_committed_.begin(), pre_committed_.end());
    if (c_.overwrite) state_->list(kReplaceState).assign(replace_.begin(), replace_.end());
    if (c_.commit.success_file) {
      auto& parts = state_->list(kPartitionState);
      parts.clear();
      for (const auto& [dir, created] : partitions_)
        parts.push_back(std::string(candidates_.count(dir) ? "C " : "K ") + std::to_string(created) + " " + dir);
    }
    return out;
  }

  void commit(const std::string& committable) override {
    std::string_view in(committable);
    auto n = StateCodec<std::int64_t>::decode(in);
    std::vector<std::pair<std::string, std::string>> moves;
    for (std::int64_t i = 0; i < n; ++i) {
      std::string staging = StateCodec<std::string>::decode(in);
      std::string final_path = StateCodec<std::string>::decode(in);
      moves.emplace_back(std::move(staging), std::move(final_path));
    }
    auto m = StateCodec<std::int64_t>::decode(in);
    for (std::int64_t i = 0; i < m; ++i) {
      std::string old = StateCodec<std::string>::decode(in);
      bool renamed_over = false;  // a new file of the same name replaces it by the rename
      for (const auto& mv : moves) renamed_over = renamed_over || mv.second == old;
      std::error_code ec;
      if (!renamed_over) fs::remove(old, ec);  // idempotent: gone already after a restore
    }
    for (const auto& [staging, final_path] : moves) {
      commit_staged_file(staging, final_path);
      pre_committed_.erase(staging);
    }
    auto d = StateCodec<std::int64_t>::decode(in);
    for (std::int64_t i = 0; i < d; ++i) {
      std::string dir = StateCodec<std::string>::decode(in);
      if (!c_.commit.success_file) continue;
      partitions_.try_emplace(dir, ctx_->timer_service().current_processing_time());
      candidates_.insert(dir);
    }
    commit_partitions(StateCodec<std::int64_t>::decode(in));
  }

  void abort() override {
    for (auto& [dir, f] : files_) f.file->abort();
    files_.clear();
    for (auto& [dir, file] : closed_) file->abort();
    closed_.clear();
  }
  void close() override { abort(); }

 private:
  struct OpenFile {
    std::unique_ptr<StagedFile> file;
    std::string buffer;
    std::int64_t bytes = 0;       // written, buffered included
    std::int64_t opened = 0;      // processing time (ms)
    std::int64_t last_write = 0;  // processing time (ms)
  };
  using FileMap = std::map<std::string, OpenFile>;

  // Closes a part file (durable, still staged): the next row of its partition opens a new
  // one; pre_commit hands the closed files to the commit.
  void roll(FileMap::iterator it) {
    OpenFile& f = it->second;
    if (!f.buffer.empty()) f.file->append(f.buffer);
    f.file->persist();
    closed_.emplace_back(it->first, std::move(f.file));
    files_.erase(it);
  }
  void roll_by_time() {
    last_check_ = now_;
    for (auto it = files_.begin(); it != files_.end();) {
      auto next = std::next(it);
      if (now_ - it->second.opened >= c_.rolling.rollover_interval_ms ||
          now_ - it->second.last_write >= c_.rolling.inactivity_interval_ms)
        roll(it);
      it = next;
    }
  }

  // Partition commit: the candidates whose trigger holds get the success file (at the end
  // of the input, all of them). `watermark` is the one the committed checkpoint saw.
  void commit_partitions(EventTime watermark) {
    if (!c_.commit.success_file) return;
    const std::int64_t now = ctx_->timer_service().current_processing_time();
    for (auto it = candidates_.begin(); it != candidates_.end();) {
      bool ready = ending_ || watermark == kMaxEventTime;
      if (!ready && c_.commit.trigger == PartitionCommitPolicy::Trigger::kProcessTime)
        ready = now >= sat_add(partitions_[*it], c_.commit.delay_ms);
      if (!ready && c_.commit.trigger == PartitionCommitPolicy::Trigger::kPartitionTime)
        ready = watermark > sat_add(partition_time_of(*it), c_.commit.delay_ms);
      if (!ready) {
        ++it;
        continue;
      }
      StagedFile marker(*it + "/" + c_.commit.success_file_name);
      marker.commit();
      partitions_.erase(*it);
      it = candidates_.erase(it);
    }
  }

  // The partition's time from its directory "<path>/<col>=<value>/...".
  std::int64_t partition_time_of(const std::string& dir) const {
    std::vector<std::string> names, values;
    std::string_view rest(dir);
    rest.remove_prefix(std::min(rest.size(), c_.path.size()));
    while (!rest.empty()) {
      if (rest.front() == '/') {
        rest.remove_prefix(1);
        continue;
      }
      std::size_t slash = rest.find('/');
      std::string_view part = rest.substr(0, slash);
      std::size_t eq = part.find('=');
      names.emplace_back(part.substr(0, eq));
      values.push_back(unescape_partition_value(part.substr(eq == std::string_view::npos ? part.size() : eq + 1)));
      rest.remove_prefix(slash == std::string_view::npos ? rest.size() : slash);
    }
    try {
      return c_.commit.partition_time(names, values);
    } catch (const ClinkError& e) {
      throw ClinkError("sql_filesystem_sink '" + c_.path + "': partition " + dir + ": " + e.what());
    }
  }

  FileMap::iterator file_for(const ColumnBatch& batch, std::size_t row) {
    dir_.assign(c_.path);
    for (std::size_t i : c_.partition_by) {
      const Column& col = batch.column(i);
      dir_ += '/';
      dir_ += c_.schema->name(i);
      dir_ += '=';
      if (col.is_null(row)) {
        dir_ += c_.default_partition_name;
      } else {
        value_.clear();
        append_cell_string(col, row, *TimeZone::utc(), false, value_);
        dir_ += value_.empty() ? c_.default_partition_name : escape_partition_value(value_);
      }
    }
    auto it = files_.find(dir_);
    if (it != files_.end()) return it;
    OpenFile f;
    // A rolled partition's further files in this transaction are part-<s>-<n>-<k>.
    const int k = rolls_[dir_]++;
    f.file = std::make_unique<StagedFile>(dir_ + "/part-" + std::to_string(subtask_) + "-" + std::to_string(part_) +
                                          (k > 0 ? "-" + std::to_string(k) : std::string()) + "." + ext_);
    f.opened = f.last_write = now_;
    if (c_.commit.success_file) partitions_.try_emplace(dir_, now_);
    return files_.emplace(dir_, std::move(f)).first;
  }

  // Moves the files of `dir` (a partition, or the whole target) from replace_ to `out`.
  void take_replaced(const std::string& dir, std::vector<std::string>& out) {
    std::string prefix = dir + "/";
    for (auto it = replace_.begin(); it != replace_.end();) {
      bool in_dir = c_.partition_by.empty() ||
                    (it->starts_with(prefix) && it->find('/', prefix.size()) == std::string::npos);
      if (in_dir) {
        out.push_back(*it);
        it = replace_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Part numbers come from transaction ids, which restart with every job: a second
  // INSERT into the same directory numbers its files past every part file of this subtask
  // already there (visible or still staged), so it never overwrites the first one's.
  std::int64_t next_free_part_number() const {
    const std::string prefix = "part-" + std::to_string(subtask_) + "-";
    std::int64_t next = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(c_.path, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.starts_with(".")) name.erase(0, 1);
      if (!name.starts_with(prefix)) continue;
      const char* digits = name.c_str() + prefix.size();
      char* stop = nullptr;
      long long n = std::strtoll(digits, &stop, 10);
      if (stop != digits && (*stop == '.' || *stop == '-')) next = std::max<std::int64_t>(next, n + 1);
    }
    return next;
  }

  // Staging files ".part-<subtask>-<n>.<ext>.inprogress" of this subtask (subtask 0 also
  // takes those of subtasks beyond the parallelism) not kept by the checkpoint.
  void remove_stale_staging_files(const std::set<std::string>& keep) const {
    std::vector<fs::path> stale;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(c_.path, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      std::string suffix = "." + ext_ + ".inprogress";
      if (!name.starts_with(".part-") || !name.ends_with(suffix) || keep.count(it->path().string())) continue;
      int owner = std::atoi(name.c_str() + 6);
      if (owner == subtask_ || (subtask_ == 0 && owner >= parallelism_)) stale.push_back(it->path());
    }
    for (const auto& p : stale) fs::remove(p, ec);
  }

  const FilesystemSinkConfig& c_;
  RuntimeContext* ctx_ = nullptr;
  int subtask_, parallelism_;
  std::string ext_;
  std::optional<JsonRowEncoder> json_;
  std::optional<CsvRowEncoder> csv_;
  std::vector<std::size_t> file_columns_;
  std::vector<const Column*> cols_;
  OperatorStateStore* state_ = nullptr;
  std::int64_t part_ = 0;
  std::int64_t part_base_ = 0;
  FileMap files_;  // the open part file of each partition directory
  std::vector<std::pair<std::string, std::unique_ptr<StagedFile>>> closed_;  // rolled, by directory
  std::map<std::string, int> rolls_;  // part files opened per directory in this transaction
  std::int64_t now_ = 0, last_check_ = 0;
  EventTime watermark_ = kMinEventTime;
  bool ending_ = false;
  std::map<std::string, std::int64_t> partitions_;  // partition directory -> creation (processing time)
  std::set<std::string> candidates_;                // data visible, waiting for the commit trigger
  std::set<std::string> pre_committed_;
  std::vector<std::string> replace_;
  std::string dir_, value_;
};

}  // namespace

FilesystemSqlSink::FilesystemSqlSink(FilesystemSinkConfig config) : config_(std::move(config)) {
  std::vector<bool> is_partition(config_.schema->size(), false);
  for (std::size_t i : config_.partition_by) {
    if (i >= config_.schema->size()) throw ClinkError("partition column " + std::to_string(i) + " is out of range");
    is_partition[i] = true;
  }
  std::vector<RowField> fields;
  for (std::size_t i = 0; i < config_.schema->size(); ++i)
    if (!is_partition[i]) fields.push_back(config_.schema->field(i));
  file_schema_ = make_schema(std::move(fields));
  if (config_.format == RowFormat::kCsv) CsvRowEncoder(file_schema_, config_.csv);  // fails now for MAP columns
}

std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> FilesystemSqlSink::create_writer(int subtask,
                                                                                      int parallelism) const {
  return std::make_unique<FilesystemSinkWriter>(config_, file_schema_, subtask, parallelism);
}

std::string escape_partition_value(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    bool escape = c < 0x20 || c == 0x7f || std::string_view("\"#%'*/:=?\\{[]^").find(ch) != std::string_view::npos;
    if (escape) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace clink::sql
