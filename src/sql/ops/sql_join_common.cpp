#include "sql_join_common.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/sql/ops/row_key.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/plan_structs.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {

std::vector<std::string> JoinSpec::param_names(std::initializer_list<const char*> own) {
  std::vector<std::string> names = {"join_type", "left_keys", "right_keys", "filter_nulls", "condition"};
  names.insert(names.end(), own.begin(), own.end());
  return names;
}

std::size_t JoinSpec::time_column(const SqlOpParams& p, int side, const char* name) const {
  const std::string param = std::string("param '") + name + "'";
  const std::size_t c = p.column(p.require(name), *this->side[side], param);
  const auto& t = this->side[side]->type(c);
  if (!t.is(TypeKind::kTimestamp) && !t.is(TypeKind::kTimestampLtz))
    p.fail(param + " must be a TIMESTAMP column, got " + t.to_string());
  return c;
}

JoinSpec JoinSpec::parse(const SqlOpParams& p, SemiAnti semi_anti) {
  JoinSpec s;
  s.where = p.where();
  s.out_schema = p.output_schema();
  s.side[0] = p.input_schema(0);
  s.side[1] = p.input_schema(1);
  s.session = session_from_params(p);
  std::string type = p.get_string("join_type", semi_anti == SemiAnti::kOnly ? "semi" : "inner");
  if (semi_anti == SemiAnti::kOnly && type != "semi" && type != "anti")
    p.fail("param 'join_type' must be semi or anti, got '" + type + "'");
  if (semi_anti != SemiAnti::kNo && (type == "semi" || type == "anti")) {
    s.semi_anti = true;
    s.anti = type == "anti";
  } else if (type == "left") s.outer[0] = true;
  else if (type == "right") s.outer[1] = true;
  else if (type == "full") s.outer[0] = s.outer[1] = true;
  else if (type != "inner") p.fail("param 'join_type' must be one of inner, left, right, full, got '" + type + "'");
  s.keys[0] = p.columns("left_keys", *s.side[0]);
  s.keys[1] = p.columns("right_keys", *s.side[1]);
  if (s.keys[0].size() != s.keys[1].size())
    p.fail("params 'left_keys' and 'right_keys' must pair up, got " + std::to_string(s.keys[0].size()) + " and " +
           std::to_string(s.keys[1].size()) + " columns");
  s.filter_nulls.assign(s.keys[0].size(), true);
  if (p.has("filter_nulls")) {
    const auto& f = p.params().at("filter_nulls");
    if (!f.is_array() || f.size() != s.keys[0].size())
      p.fail("param 'filter_nulls' must be one boolean per key, got " + f.dump());
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (!f[i].is_boolean()) p.fail("param 'filter_nulls'[" + std::to_string(i) + "] must be true or false");
      s.filter_nulls[i] = f[i].get<bool>();
    }
  }
  for (std::size_t k = 0; k < s.keys[0].size(); ++k) {
    const auto& a = s.side[0]->type(s.keys[0][k]);
    const auto& b = s.side[1]->type(s.keys[1][k]);
    if (!join_key_types_compatible(a, b))
      p.fail("join key " + std::to_string(k) + ": left column '" + s.side[0]->name(s.keys[0][k]) + "' is " +
             a.to_string() + ", right column '" + s.side[1]->name(s.keys[1][k]) + "' is " + b.to_string() +
             " (keys must have one type so equal values route and match alike)");
  }
  // The output: left ++ right, the null-padded side nullable.
  std::vector<RowField> both;
  for (int side = 0; side < 2; ++side)
    for (const auto& f : s.side[side]->fields()) {
      bool padded = s.outer[1 - side];
      both.push_back({f.name, padded ? f.type.with_nullable(true) : f.type});
      if (!key_type_decodable(f.type))
        p.fail("input " + std::to_string(side) + " column '" + f.name + "' of type " + f.type.to_string() +
               " cannot be kept in join state (nested types are not supported in joins)");
    }
  s.pair_schema = std::make_shared<const Schema>(both);
  if (s.semi_anti) check_output_types(*s.out_schema, s.side[0]->fields(), p);
  else check_output_types(*s.out_schema, both, p);
  if (p.has("condition")) {
    try {
      s.condition = expr_from_json(p.params().at("condition"), Schema(both));
    } catch (const std::exception& e) {
      p.fail(std::string("param 'condition': ") + e.what());
    }
    if (!s.condition->type.is(TypeKind::kBoolean))
      p.fail("param 'condition' is " + s.condition->type.to_string() + ", not BOOLEAN");
  }
  return s;
}

std::int64_t time_attribute_ms(const JoinSpec& spec, int side, const ColumnBatch& batch, std::size_t r,
                               std::size_t column) {
  const Column& c = batch.column(column);
  if (c.is_null(r))
    throw ClinkError(spec.where + ": the time attribute '" + spec.side[side]->name(column) + "' is NULL");
  const std::int64_t us = c.values<std::int64_t>()[r];
  return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

bool has_null_key(const ColumnBatch& batch, std::size_t r, const std::vector<std::size_t>& keys,
                  const std::vector<bool>& filter_nulls) {
  for (std::size_t k = 0; k < keys.size(); ++k)
    if (filter_nulls[k] && batch.column(keys[k]).is_null(r)) return true;
  return false;
}

namespace {

void add_columns(const Expr& e, std::set<std::size_t>& out) {
  if (e.kind == ExprKind::kColumnRef) out.insert(e.column_index);
  for (const auto& a : e.args) add_columns(*a, out);
}

}  // namespace

JoinedRows::JoinedRows(const JoinSpec& spec) : spec_(spec), pairs_(spec.pair_schema) {
  if (!spec.condition) return;
  residual_.emplace(spec.condition, spec.session);
  std::set<std::size_t> used;
  add_columns(*spec.condition, used);
  residual_columns_.assign(used.begin(), used.end());
}

// Only the columns the residual reads are gathered for it (a pair's other columns, long
// strings among them, were copied twice: here and again when emitted); none without one.
void JoinedRows::evaluate(int own_side, const ColumnBatch& own, const ColumnBatch& other) {
  gather_emitted_pairs();
  own_side_ = own_side;
  side_batch_[own_side] = &own;
  side_batch_[1 - own_side] = &other;
  const std::size_t n = own_idx_.size();
  all_match_ = !residual_ || n == 0;
  if (all_match_) return;
  pairs_.clear();
  const std::size_t nl = spec_.side[0]->size();
  const auto* left_idx = own_side == 0 ? own_idx_.data() : other_idx_.data();
  const auto* right_idx = own_side == 0 ? other_idx_.data() : own_idx_.data();
  for (std::size_t c : residual_columns_) {
    if (c < nl) pairs_.column(c).append_gather(side_batch_[0]->column(c), left_idx, n);
    else pairs_.column(c).append_gather(side_batch_[1]->column(c - nl), right_idx, n);
  }
  pairs_.row_kinds().assign(n, RowKind::kInsert);
  pairs_.event_times().assign(n, kNoEventTime);
  residual_->select_mask(pairs_, mask_);
}

void JoinedRows::ensure_out() {
  if (!out_) out_ = std::make_unique<ColumnBatch>(spec_.out_schema, 64);
}

void JoinedRows::gather_emitted_pairs() {
  const std::size_t n = emitted_[0].size();
  if (n == 0) return;
  const std::size_t nl = spec_.side[0]->size();
  for (std::size_t c = 0; c < out_->num_columns(); ++c) {
    if (c < nl) out_->column(c).append_gather(side_batch_[0]->column(c), emitted_[0].data(), n);
    else out_->column(c).append_gather(side_batch_[1]->column(c - nl), emitted_[1].data(), n);
  }
  emitted_[0].clear();
  emitted_[1].clear();
}

void JoinedRows::emit_padded(int side, const ColumnBatch& batch, std::size_t row, RowKind kind, EventTime t) {
  ensure_out();
  gather_emitted_pairs();
  const std::size_t nl = spec_.side[0]->size();
  const std::size_t from = side == 0 ? 0 : nl;
  const std::size_t to = side == 0 ? nl : out_->num_columns();
  for (std::size_t c = 0; c < out_->num_columns(); ++c) {
    if (c >= from && c < to) out_->column(c).append_range(batch.column(c - from), row, row + 1);
    else out_->column(c).append_null();
  }
  out_->row_kinds().push_back(kind);
  out_->event_times().push_back(t);
}

void JoinedRows::flush(Output& output) {
  if (out_) gather_emitted_pairs();
  if (out_ && out_->size() > 0) output.emit(std::move(out_));
  out_.reset();
}

}  // namespace clink::sql
