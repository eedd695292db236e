#include "clink/connectors/sql/sql_filesystem_sink.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "clink/connectors/file_sink.hpp"
#include "clink/connectors/staged_file.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/sql/time_zone.hpp"
#include "clink/sql/value_format.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::sql {

namespace fs = std::filesystem;

namespace {

// Union state: staging files pre-committed but not yet committed at the checkpoint,
// so a restored run removes only the staging files of the failed attempt.
constexpr const char* kPreCommittedState = "sql-file-sink-pre-committed";
// Overwrite: the files that were in the target when the job started and are not yet
// replaced.
constexpr const char* kReplaceState = "sql-file-sink-replace";
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
    state_ = &ctx.operator_state();
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
  }

  void write(const ColumnBatch& batch) override {
    const auto& kinds = batch.row_kinds();
    for (std::size_t r = 0; r < batch.size(); ++r)
      if (kinds[r] != RowKind::kInsert)
        throw ClinkError("sql_filesystem_sink '" + c_.path + "' is insert-only and got a " +
                         std::string(row_kind_short_string(kinds[r])) + " row: " + format_row(batch, r, *TimeZone::utc()));
    cols_.clear();
    for (std::size_t i : file_columns_) cols_.push_back(&batch.column(i));
    for (std::size_t r = 0; r < batch.size(); ++r) {
      OpenFile& f = file_for(batch, r);
      if (json_) json_->encode(cols_.data(), r, f.buffer);
      else csv_->encode(cols_.data(), r, f.buffer);
      f.buffer += '\n';
      if (f.buffer.size() >= kFlushBytes) {
        f.file->append(f.buffer);
        f.buffer.clear();
      }
    }
  }

  // Committable: the (staging, final) pairs, then the files this commit replaces.
  std::string pre_commit() override {
    std::string out;
    StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(files_.size()), out);
    std::vector<std::string> replaced;
    for (auto& [dir, f] : files_) {
      if (!f.buffer.empty()) f.file->append(f.buffer);
      f.file->persist();
      StateCodec<std::string>::encode(f.file->staging_path(), out);
      StateCodec<std::string>::encode(f.file->final_path(), out);
      pre_committed_.insert(f.file->staging_path());
      if (c_.overwrite) take_replaced(dir, replaced);
    }
    StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(replaced.size()), out);
    for (const auto& p : replaced) StateCodec<std::string>::encode(p, out);
    files_.clear();
    state_->list(kPreCommittedState, Redistribution::kUnion).assign(pre_committed_.begin(), pre_committed_.end());
    if (c_.overwrite) state_->list(kReplaceState).assign(replace_.begin(), replace_.end());
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
  }

  void abort() override {
    for (auto& [dir, f] : files_) f.file->abort();
    files_.clear();
  }
  void close() override { abort(); }

 private:
  struct OpenFile {
    std::unique_ptr<StagedFile> file;
    std::string buffer;
  };

  OpenFile& file_for(const ColumnBatch& batch, std::size_t row) {
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
    if (it != files_.end()) return it->second;
    OpenFile f;
    f.file = std::make_unique<StagedFile>(dir_ + "/part-" + std::to_string(subtask_) + "-" + std::to_string(part_) +
                                          "." + ext_);
    return files_.emplace(dir_, std::move(f)).first->second;
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
      if (stop != digits && *stop == '.') next = std::max<std::int64_t>(next, n + 1);
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
  int subtask_, parallelism_;
  std::string ext_;
  std::optional<JsonRowEncoder> json_;
  std::optional<CsvRowEncoder> csv_;
  std::vector<std::size_t> file_columns_;
  std::vector<const Column*> cols_;
  OperatorStateStore* state_ = nullptr;
  std::int64_t part_ = 0;
  std::int64_t part_base_ = 0;
  std::map<std::string, OpenFile> files_;  // by partition directory
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
