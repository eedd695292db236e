#include "clink/sql/ops/sql_aggregates.hpp"

#include <cstring>
#include <new>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"

namespace clink::sql {

using nlohmann::json;

namespace {

constexpr std::size_t kAlign = AggregateFunction::kAccumulatorAlign;
std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

void* allocate_block(std::size_t size) { return ::operator new(size, std::align_val_t{kAlign}); }
void free_block(void* p) { ::operator delete(p, std::align_val_t{kAlign}); }

bool filter_passes(const Column* f, std::uint32_t row) {
  return f == nullptr || (f->is_valid(row) && f->values<std::uint8_t>()[row] != 0);
}

}  // namespace

// ---- AggState

void AggState::reset() {
  if (std::string* r = raw()) {
    delete r;
  } else if (heap_) {
    set_->destroy_block(heap_);
    free_block(heap_);
  }
  heap_ = nullptr;
  set_ = nullptr;
}

void AggState::take(AggState& o) noexcept {
  set_ = o.set_;
  heap_ = o.heap_;
  if (!heap_ && set_) std::memcpy(inline_, o.inline_, kInline);
  o.set_ = nullptr;
  o.heap_ = nullptr;
}

AggState::AggState(const AggState& o) { *this = o; }

AggState& AggState::operator=(const AggState& o) {
  if (this == &o) return *this;
  reset();
  if (const std::string* r = o.raw()) {
    heap_ = new std::string(*r);
    return *this;
  }
  if (!o.set_) return *this;
  if (o.set_->trivial_) {
    *this = o.set_->allocate();
    std::memcpy(block(), o.block(), o.set_->block_size_);
  } else {
    // Accumulators owning memory (multisets, strings) copy through their state encoding.
    std::string bytes;
    o.set_->serialize(o, bytes);
    std::string_view in(bytes);
    *this = o.set_->deserialize(in);
  }
  return *this;
}

// ---- AggregateSet

AggregateSet::AggregateSet(std::vector<RuntimeAggregate> calls, bool counts_rows)
    : calls_(std::move(calls)), counts_rows_(counts_rows) {
  std::size_t at = counts_rows ? sizeof(std::int64_t) : 0;
  for (auto& c : calls_) {
    at = align_up(at);
    c.offset = at;
    at += c.fn->accumulator_size();
    trivial_ = trivial_ && c.fn->trivially_copyable();
    mergeable_ = mergeable_ && c.fn->supports_merge();
  }
  block_size_ = at;
  if (trivial_) {
    prototype_ = allocate_block(block_size_ == 0 ? kAlign : block_size_);
    auto* b = static_cast<unsigned char*>(prototype_);
    if (counts_rows) *reinterpret_cast<std::int64_t*>(b) = 0;
    for (const auto& c : calls_) c.fn->create(b + c.offset);
  }
}

AggregateSet::~AggregateSet() {
  if (prototype_) free_block(prototype_);
}

const RuntimeAggregate* AggregateSet::first_unmergeable() const {
  for (const auto& c : calls_)
    if (!c.fn->supports_merge()) return &c;
  return nullptr;
}

std::vector<RuntimeAggregate> AggregateSet::parse(const json& aggs, const Schema& input, const SqlOpParams& p,
                                                  bool retracting, const FunctionRegistry& registry) {
  if (!aggs.is_array()) p.fail("param 'aggregates' must be an array, got " + aggs.dump());
  std::vector<RuntimeAggregate> out;
  for (std::size_t i = 0; i < aggs.size(); ++i) {
    const json& a = aggs[i];
    const std::string what = "param 'aggregates'[" + std::to_string(i) + "]";
    if (!a.is_object() || !a.contains("function") || !a.at("function").is_string())
      p.fail(what + " needs a string 'function', got " + a.dump());
    for (const auto& [k, v] : a.items())
      if (k != "function" && k != "args" && k != "distinct" && k != "filter" && k != "type")
        p.fail(what + ": unknown field '" + k + "' (known: function, args, distinct, filter, type)");
    RuntimeAggregate c;
    c.function = upper_ascii(a.at("function").get<std::string>());
    json args = a.value("args", json::array());
    if (!args.is_array()) p.fail(what + ": 'args' must be an array of columns, got " + args.dump());
    std::vector<LogicalType> arg_types;
    for (std::size_t j = 0; j < args.size(); ++j) {
      c.args.push_back(p.column(args[j], input, what + " argument " + std::to_string(j)));
      arg_types.push_back(input.type(c.args.back()));
    }
    if (a.contains("distinct")) {
      if (!a.at("distinct").is_boolean()) p.fail(what + ": 'distinct' must be true or false");
      c.distinct = a.at("distinct").get<bool>();
    }
    if (a.contains("filter") && !a.at("filter").is_null()) {
      c.filter = p.column(a.at("filter"), input, what + " filter");
      if (!input.type(*c.filter).is(TypeKind::kBoolean))
        p.fail(what + ": the filter column " + std::to_string(*c.filter) + " is " + input.type(*c.filter).to_string() +
               ", not BOOLEAN");
    }
    if (!registry.has_aggregate(c.function))
      p.fail(what + ": unknown aggregate function '" + c.function +
             "' (not registered in this process: register user aggregates in FunctionRegistry::process())");
    std::unique_ptr<AggregateFunction> fn;
    try {
      fn = registry.make_aggregate(c.function, arg_types, AggregateOptions{c.distinct, retracting});
    } catch (const std::exception& e) {
      p.fail(what + ": " + e.what());
    }
    std::vector<LogicalType> declared = fn->argument_types();
    for (std::size_t j = 0; j < declared.size() && j < arg_types.size(); ++j)
      if (!declared[j].same_ignoring_nullability(arg_types[j]))
        p.fail(what + ": argument " + std::to_string(j) + " of " + c.function + " is " + arg_types[j].to_string() +
               ", the function takes " + declared[j].to_string() + " (the planner casts to it)");
    if (retracting && !fn->supports_retraction())
      p.fail(what + ": " + c.function + " cannot retract, and this aggregation consumes retractions");
    c.result_type = fn->result_type();
    if (a.contains("type") && !a.at("type").is_null()) {
      LogicalType t;
      try {
        t = parse_logical_type(a.at("type").get<std::string>());
      } catch (const std::exception& e) {
        p.fail(what + ": bad 'type': " + e.what());
      }
      if (!t.same_ignoring_nullability(c.result_type))
        p.fail(what + ": declared type " + t.to_string() + " differs from the type of " + c.function + ", " +
               c.result_type.to_string());
      c.result_type = t;
    }
    c.fn = std::move(fn);
    out.push_back(std::move(c));
  }
  return out;
}

AggState AggregateSet::allocate() const {
  AggState s;
  s.set_ = this;
  if (!trivial_ || block_size_ > AggState::kInline) s.heap_ = allocate_block(block_size_ == 0 ? kAlign : block_size_);
  return s;
}

AggState AggregateSet::create() const {
  AggState s = allocate();
  init_block(s.block());
  return s;
}

void AggregateSet::init_block(void* block) const {
  if (trivial_) {
    std::memcpy(block, prototype_, block_size_);
    return;
  }
  auto* b = static_cast<unsigned char*>(block);
  if (counts_rows_) *reinterpret_cast<std::int64_t*>(b) = 0;
  for (const auto& c : calls_) c.fn->create(b + c.offset);
}

void AggregateSet::recreate(AggState& s) const {
  if (s.set_ != this) {  // empty, restored bytes or another set's
    s = create();
    return;
  }
  destroy_block(s.block());
  init_block(s.block());
}

void AggregateSet::destroy_block(void* block) const {
  if (trivial_) return;
  for (const auto& c : calls_) c.fn->destroy(static_cast<unsigned char*>(block) + c.offset);
}

void AggregateSet::ready(AggState& s) const {
  std::unique_ptr<std::string> raw(s.raw());
  if (!raw) return;
  s.heap_ = nullptr;
  std::string_view in(*raw);
  s = deserialize(in);
  if (!in.empty()) throw ClinkError("aggregate state: " + std::to_string(in.size()) + " trailing bytes");
}

void AggregateSet::bind(const ColumnBatch& batch, AggregateInput& in) const {
  in.batch = &batch;
  in.args.resize(calls_.size());
  in.filters.resize(calls_.size());
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    in.args[i].clear();
    for (auto a : calls_[i].args) in.args[i].push_back(&batch.column(a));
    in.filters[i] = calls_[i].filter ? &batch.column(*calls_[i].filter) : nullptr;
  }
}

void AggregateSet::add(AggState* const* states, const AggregateInput& in, std::span<const std::uint32_t> rows, int sign,
                       std::vector<void*>& accs) const {
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (states[k]) ready(*states[k]);
  accs.resize(rows.size());
  if (counts_rows_)
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (states[k]) *static_cast<std::int64_t*>(states[k]->block()) += sign;
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    const RuntimeAggregate& c = calls_[i];
    const Column* f = in.filters[i];
    for (std::size_t k = 0; k < rows.size(); ++k)
      accs[k] = states[k] && filter_passes(f, rows[k]) ? static_cast<unsigned char*>(states[k]->block()) + c.offset
                                                       : nullptr;
    if (sign > 0) c.fn->accumulate(accs.data(), in.args[i], rows);
    else c.fn->retract(accs.data(), in.args[i], rows);
  }
}

void AggregateSet::add(AggState& s, const AggregateInput& in, std::uint32_t row, int sign) const {
  ready(s);
  auto* b = static_cast<unsigned char*>(s.block());
  if (counts_rows_) *reinterpret_cast<std::int64_t*>(b) += sign;
  const std::span<const std::uint32_t> rows(&row, 1);
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    if (!filter_passes(in.filters[i], row)) continue;
    void* acc = b + calls_[i].offset;
    if (sign > 0) calls_[i].fn->accumulate(&acc, in.args[i], rows);
    else calls_[i].fn->retract(&acc, in.args[i], rows);
  }
}

void AggregateSet::add_except_distinct(AggState& s, const AggregateInput& in, std::uint32_t row, int sign) const {
  ready(s);
  auto* b = static_cast<unsigned char*>(s.block());
  if (counts_rows_) *reinterpret_cast<std::int64_t*>(b) += sign;
  for (std::size_t i = 0; i < calls_.size(); ++i)
    if (!calls_[i].distinct) add_call(s, in, i, row, sign);
}

void AggregateSet::add_call(AggState& s, const AggregateInput& in, std::size_t call, std::uint32_t row,
                            int sign) const {
  if (!filter_passes(in.filters[call], row)) return;
  ready(s);
  void* acc = static_cast<unsigned char*>(s.block()) + calls_[call].offset;
  const std::span<const std::uint32_t> rows(&row, 1);
  if (sign > 0) calls_[call].fn->accumulate(&acc, in.args[call], rows);
  else calls_[call].fn->retract(&acc, in.args[call], rows);
}

bool AggregateSet::passes_filter(const AggregateInput& in, std::size_t call, std::uint32_t row) {
  return filter_passes(in.filters[call], row);
}

void AggregateSet::merge(AggState& into, const AggState& from) const {
  ready(into);
  if (from.raw()) {
    AggState copy = from;
    ready(copy);
    return merge(into, copy);
  }
  auto* a = static_cast<unsigned char*>(into.block());
  const auto* b = static_cast<const unsigned char*>(from.block());
  if (counts_rows_) *reinterpret_cast<std::int64_t*>(a) += *reinterpret_cast<const std::int64_t*>(b);
  for (const auto& c : calls_) c.fn->merge(a + c.offset, b + c.offset);
}

std::int64_t AggregateSet::row_count(const AggState& s) const {
  return *static_cast<const std::int64_t*>(s.block());
}

void AggregateSet::append_results(const AggState& s, std::vector<Column>& columns, std::size_t first) const {
  if (s.raw()) {
    AggState copy = s;
    ready(copy);
    return append_results(copy, columns, first);
  }
  const auto* b = static_cast<const unsigned char*>(s.block());
  for (std::size_t i = 0; i < calls_.size(); ++i) calls_[i].fn->get_value(b + calls_[i].offset, columns[first + i]);
}

void AggregateSet::append_results(const AggState& s, ColumnBatch& batch, std::size_t first) const {
  if (s.raw()) {
    AggState copy = s;
    ready(copy);
    return append_results(copy, batch, first);
  }
  const auto* b = static_cast<const unsigned char*>(s.block());
  for (std::size_t i = 0; i < calls_.size(); ++i)
    calls_[i].fn->get_value(b + calls_[i].offset, batch.column(first + i));
}

void AggregateSet::serialize(const AggState& s, std::string& out) const {
  if (const std::string* r = s.raw()) {
    out += *r;
    return;
  }
  const auto* b = static_cast<const unsigned char*>(s.block());
  if (counts_rows_) StateCodec<std::int64_t>::encode(*reinterpret_cast<const std::int64_t*>(b), out);
  for (const auto& c : calls_) c.fn->serialize(b + c.offset, out);
}

AggState AggregateSet::deserialize(std::string_view& in) const {
  AggState s;
  deserialize(in, s);
  return s;
}

void AggregateSet::deserialize(std::string_view& in, AggState& s) const {
  recreate(s);
  auto* b = static_cast<unsigned char*>(s.block());
  if (counts_rows_) *reinterpret_cast<std::int64_t*>(b) = StateCodec<std::int64_t>::decode(in);
  for (const auto& c : calls_) c.fn->deserialize(b + c.offset, in);
}

}  // namespace clink::sql

namespace clink {

void StateCodec<sql::AggState>::encode(const sql::AggState& s, std::string& out) {
  if (const std::string* r = s.raw()) {
    StateCodec<std::string>::encode(*r, out);
    return;
  }
  std::string bytes;
  if (s.set_) s.set_->serialize(s, bytes);
  StateCodec<std::string>::encode(bytes, out);
}

sql::AggState StateCodec<sql::AggState>::decode(std::string_view& in) {
  sql::AggState s;
  s.heap_ = new std::string(StateCodec<std::string>::decode(in));
  return s;
}

}  // namespace clink
