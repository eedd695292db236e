#include "clink/connectors/sql/sql_snapshot_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "clink/connectors/sql/sql_connector_params.hpp"
#include "clink/connectors/sql/sql_filesystem_sink.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::sql {

namespace fs = std::filesystem;

namespace {

// The netted table: key -> (partition directory, JSON line, count). Upsert: the key is the
// primary key's values and the count 1; retract: the key is the directory and the line.
constexpr const char* kTableState = "sql-snapshot-sink-table";
// Partition directories written before: one that loses its last row gets an empty file.
constexpr const char* kDirsState = "sql-snapshot-sink-dirs";

// Writes `content` to `path` atomically: a hidden sibling, synced, renamed over it.
void replace_file(const std::string& path, const std::string& content) {
  fs::path p(path);
  fs::create_directories(p.parent_path());
  const std::string tmp = (p.parent_path() / ("." + p.filename().string() + ".inprogress")).string();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw ClinkError("sql_snapshot_sink: cannot write " + tmp);
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw ClinkError("sql_snapshot_sink: write to " + tmp + " failed");
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw ClinkError("sql_snapshot_sink: cannot rename " + tmp + " to " + path + ": " + ec.message());
}

struct Entry {
  std::string dir;
  std::string line;
  std::int64_t count = 0;
};

class SnapshotWriter final : public TransactionalSinkWriter<ColumnBatch> {
 public:
  SnapshotWriter(const SnapshotSinkConfig& c, SchemaPtr file_schema, int subtask)
      : c_(c), json_(std::move(file_schema), c.json), file_("part-" + std::to_string(subtask) + ".json") {
    std::vector<bool> is_partition(c_.schema->size(), false);
    for (std::size_t i : c_.partition_by) is_partition[i] = true;
    for (std::size_t i = 0; i < c_.schema->size(); ++i)
      if (!is_partition[i]) file_columns_.push_back(i);
  }

  void open(RuntimeContext& ctx) override {
    state_ = &ctx.operator_state();
    for (const auto& item : state_->list(kTableState)) {
      std::string_view in(item);
      std::string key = StateCodec<std::string>::decode(in);
      Entry e;
      e.dir = StateCodec<std::string>::decode(in);
      e.line = StateCodec<std::string>::decode(in);
      e.count = StateCodec<std::int64_t>::decode(in);
      table_.emplace(std::move(key), std::move(e));
    }
    for (const auto& d : state_->list(kDirsState)) dirs_.insert(d);
  }
  void begin_transaction(std::int64_t) override {}

  void write(const ColumnBatch& batch) override {
    cols_.clear();
    for (std::size_t i : file_columns_) cols_.push_back(&batch.column(i));
    const auto& kinds = batch.row_kinds();
    for (std::size_t r = 0; r < batch.size(); ++r) {
      const RowKind kind = kinds[r];
      const bool upsert = !c_.primary_key.empty();
      if (upsert && kind == RowKind::kUpdateBefore) continue;  // the +U that follows replaces the row
      std::string dir = partition_dir(batch, r);
      line_.clear();
      json_.encode(cols_.data(), r, line_);
      std::string key;
      if (upsert) {
        for (std::size_t k : c_.primary_key) {
          const Column& col = batch.column(k);
          if (col.is_null(r)) key += '\x01';
          else append_cell_string(col, r, *TimeZone::utc(), true, key);
          key += '\x1f';
        }
      } else {
        key = dir + '\n' + line_;
      }
      const bool add = kind == RowKind::kInsert || kind == RowKind::kUpdateAfter;
      if (upsert) {
        if (add) table_[key] = Entry{std::move(dir), line_, 1};
        else table_.erase(key);
      } else if (add) {
        auto& e = table_[key];
        if (e.count++ == 0) {
          e.dir = std::move(dir);
          e.line = line_;
        }
      } else if (auto it = table_.find(key); it != table_.end() && --it->second.count <= 0) {
        table_.erase(it);
      }
    }
  }

  // The committable: (file, content) for every partition written so far, the netted
  // table's state alongside it.
  std::string pre_commit() override {
    std::map<std::string, std::string> files;
    for (const auto& d : dirs_) files[d];
    for (const auto& [key, e] : table_) {
      std::string& content = files[e.dir];
      for (std::int64_t i = 0; i < e.count; ++i) {
        content += e.line;
        content += '\n';
      }
    }
    if (files.empty()) files[c_.path];  // an empty table is an empty file
    std::string out;
    StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(files.size()), out);
    for (const auto& [dir, content] : files) {
      dirs_.insert(dir);
      StateCodec<std::string>::encode(dir + "/" + file_, out);
      StateCodec<std::string>::encode(content, out);
    }
    auto& list = state_->list(kTableState);
    list.clear();
    for (const auto& [key, e] : table_) {
      std::string item;
      StateCodec<std::string>::encode(key, item);
      StateCodec<std::string>::encode(e.dir, item);
      StateCodec<std::string>::encode(e.line, item);
      StateCodec<std::int64_t>::encode(e.count, item);
      list.push_back(std::move(item));
    }
    state_->list(kDirsState).assign(dirs_.begin(), dirs_.end());
    return out;
  }

  void commit(const std::string& committable) override {
    std::string_view in(committable);
    const auto n = StateCodec<std::int64_t>::decode(in);
    for (std::int64_t i = 0; i < n; ++i) {
      std::string path = StateCodec<std::string>::decode(in);
      std::string content = StateCodec<std::string>::decode(in);
      replace_file(path, content);
    }
  }

 private:
  std::string partition_dir(const ColumnBatch& batch, std::size_t row) {
    std::string dir = c_.path;
    for (std::size_t i : c_.partition_by) {
      const Column& col = batch.column(i);
      dir += '/';
      dir += c_.schema->name(i);
      dir += '=';
      value_.clear();
      if (!col.is_null(row)) append_cell_string(col, row, *TimeZone::utc(), false, value_);
      dir += value_.empty() ? c_.default_partition_name : escape_partition_value(value_);
    }
    return dir;
  }

  const SnapshotSinkConfig& c_;
  JsonRowEncoder json_;
  std::string file_;
  std::vector<std::size_t> file_columns_;
  std::vector<const Column*> cols_;
  std::map<std::string, Entry> table_;
  std::set<std::string> dirs_;
  std::string line_, value_;
  OperatorStateStore* state_ = nullptr;
};

OperatorBuilder make_snapshot_sink(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_snapshot_sink", {"schema", "input_schemas", "partition_by", "primary_key"});
  if (ctx.input_types.size() != 1 || ctx.input_types[0] != kSqlRowType)
    p.fail(std::string("input record type must be ") + kSqlRowType);
  SnapshotSinkConfig c;
  c.schema = p.schema();
  p.check_options({"path", "format", "partition.default-name"},
                  [](const std::string& k) { return k.rfind("json.", 0) == 0; });
  if (p.option_or("format", "json") != "json") p.fail("option 'format' must be json, got '" + *p.option("format") + "'");
  auto path = p.option("path");
  if (!path) p.fail("missing required option 'path'");
  c.path = *path;
  if (c.path.rfind("file://", 0) == 0) c.path.erase(0, 7);
  while (c.path.size() > 1 && c.path.back() == '/') c.path.pop_back();
  c.default_partition_name = p.option_or("partition.default-name", c.default_partition_name);
  c.partition_by = p.indices("partition_by", c.schema->size());
  c.primary_key = p.indices("primary_key", c.schema->size());
  try {
    c.json = JsonFormatOptions::from(p.options());
  } catch (const ClinkError& e) {
    p.fail(e.what());
  }
  std::shared_ptr<const TransactionalSink<ColumnBatch>> sink = std::make_shared<SnapshotSqlSink>(std::move(c));
  return [sink] { return std::make_unique<TwoPhaseCommitSinkOperator<ColumnBatch>>(sink); };
}

}  // namespace

SnapshotSqlSink::SnapshotSqlSink(SnapshotSinkConfig config) : config_(std::move(config)) {
  std::vector<RowField> fields;
  std::set<std::size_t> parts(config_.partition_by.begin(), config_.partition_by.end());
  for (std::size_t i = 0; i < config_.schema->size(); ++i)
    if (!parts.count(i)) fields.push_back(config_.schema->field(i));
  file_schema_ = make_schema(std::move(fields));
}

std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> SnapshotSqlSink::create_writer(int subtask, int) const {
  return std::make_unique<SnapshotWriter>(config_, file_schema_, subtask);
}

void register_snapshot_sink(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{.name = "sql_snapshot_sink",
                            .description = "exactly-once SQL table sink keeping the netted table (upsert by "
                                           "primary_key, else retract) as one json file per partition, replaced "
                                           "atomically at each completed checkpoint and at end of input",
                            .num_inputs = 1,
                            .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
                            .make = make_snapshot_sink});
}

}  // namespace clink::sql
