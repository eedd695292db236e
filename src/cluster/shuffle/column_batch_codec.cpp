// The SQL ColumnBatch on the wire: column_serde's binary encoding per batch, and the
// schema (as the planner-operator contract's JSON) in a metadata frame once per channel,
// again only when a batch's schema differs from the last one sent.
#include <nlohmann/json.hpp>

#include "clink/cluster/shuffle/batch_codec.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/column_serde.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"

namespace clink::cluster {
namespace {

class ColumnBatchEncoder final : public BatchEncoder {
 public:
  bool encode_meta(const BatchBase& base, std::string& out) override {
    const sql::SchemaPtr& schema = sql::column_batch_cast(base).schema();
    if (schema == last_) return false;
    const bool same = last_ && *last_ == *schema;
    last_ = schema;  // a new pointer to an equal schema: compare pointers from now on
    if (same) return false;
    out += sql::schema_to_json(*schema).dump();
    return true;
  }
  void encode(const BatchBase& base, std::string& out) override { sql::serialize_batch(sql::column_batch_cast(base), out); }

 private:
  sql::SchemaPtr last_;
};

class ColumnBatchDecoder final : public BatchDecoder {
 public:
  void decode_meta(std::string_view bytes) override {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(bytes);
    } catch (const nlohmann::json::exception& e) {
      throw ClinkError(std::string("bad schema frame: ") + e.what());
    }
    schema_ = sql::schema_from_json(j, "schema frame");
  }
  BatchPtr decode(std::string_view bytes) override {
    if (!schema_) throw ClinkError("a sql_row batch arrived before its schema");
    return std::make_unique<sql::ColumnBatch>(sql::deserialize_batch(schema_, bytes));
  }

 private:
  sql::SchemaPtr schema_;
};

}  // namespace

void register_column_batch_codec() {
  register_batch_codec(BatchCodec{sql::kSqlRowType, typeid(sql::ColumnBatch),
                                  [] { return std::make_unique<ColumnBatchEncoder>(); },
                                  [] { return std::make_unique<ColumnBatchDecoder>(); }});
}

}  // namespace clink::cluster
