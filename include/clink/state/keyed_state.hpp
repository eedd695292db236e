#pragma once
// Typed keyed state (Flink's ValueState, ListState, MapState, ReducingState,
// AggregatingState), written once over the byte-level KeyedStateBackend. Every state
// reads and writes the entry of the backend's current key and namespace, which the
// keyed operator sets per record and per timer.
//
//   auto& count = store.get_state(ValueStateDescriptor<std::int64_t>{"count"});
//   count.update(count.value().value_or(0) + 1);
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/state/state_ttl.hpp"

namespace clink {

// ---- descriptors ----

template <class T>
struct ValueStateDescriptor {
  std::string name;
  StateTtlConfig ttl{};
};

template <class T>
struct ListStateDescriptor {
  std::string name;
  StateTtlConfig ttl{};
};

// User keys are encoded with KeyCodec, so iteration order is user-key order.
template <class UK, class UV>
struct MapStateDescriptor {
  std::string name;
  StateTtlConfig ttl{};
};

template <class T>
struct ReducingStateDescriptor {
  std::string name;
  std::function<T(const T&, const T&)> reduce;
  StateTtlConfig ttl{};
};

// Flink's AggregateFunction: create_accumulator, add(value, acc), get_result(acc);
// merge(a, b) is optional (merging windows need it).
template <class IN, class ACC, class OUT>
struct AggregatingStateDescriptor {
  std::string name;
  std::function<ACC()> create_accumulator;
  std::function<ACC(const IN&, ACC)> add;
  std::function<OUT(const ACC&)> get_result;
  StateTtlConfig ttl{};
  std::function<ACC(ACC, ACC)> merge{};
};

namespace state_detail {

// What every typed state shares: the backend, the state id, TTL handling of one stored
// value (8-byte timestamp prefix) and a reusable buffer.
class TypedStateBase : public KeyedStateBackend::TypedState {
 protected:
  TypedStateBase(KeyedStateBackend& backend, const std::string& name, StateKind kind, const StateTtlConfig& ttl)
      : backend_(backend), id_(backend.register_state(name, kind, ttl.enabled() ? ttl.ttl_ms : 0)), ttl_(ttl) {}

  std::int64_t now() const { return backend_.clock().now_ms(); }
  bool ttl_on() const { return ttl_.enabled(); }
  bool update_on_read() const { return ttl_.update_type == TtlUpdateType::kOnReadAndWrite; }
  bool return_expired() const { return ttl_.visibility == TtlStateVisibility::kReturnExpiredIfNotCleanedUp; }

  // Starts a value in buf_: the timestamp when TTL is on.
  std::string& begin_value() {
    buf_.clear();
    if (ttl_on()) put_ttl_timestamp(now(), buf_);
    return buf_;
  }

  // Reads the current (key, namespace) value into buf_ and returns its payload, applying
  // TTL: an expired value is removed and returned only if visibility allows; a read
  // refreshes the timestamp with kOnReadAndWrite.
  std::optional<std::string_view> read_value() {
    if (!backend_.get(id_, buf_)) return std::nullopt;
    std::string_view in(buf_);
    if (!ttl_on()) return in;
    std::int64_t ts = get_ttl_timestamp(in);
    std::int64_t t = now();
    if (ttl_expired(ts, ttl_.ttl_ms, t)) {
      backend_.remove(id_);
      if (!return_expired()) return std::nullopt;
      return in;
    }
    if (update_on_read()) {
      set_ttl_timestamp(buf_, t);
      backend_.put(id_, buf_);
      in = std::string_view(buf_).substr(kTtlTimestampBytes);
    }
    return in;
  }

  KeyedStateBackend& backend_;
  StateId id_;
  StateTtlConfig ttl_;
  std::string buf_;
};

}  // namespace state_detail

// ---- ValueState ----

template <class T>
class ValueState final : public state_detail::TypedStateBase {
 public:
  ValueState(KeyedStateBackend& backend, const ValueStateDescriptor<T>& d)
      : TypedStateBase(backend, d.name, StateKind::kValue, d.ttl) {}

  std::optional<T> value() {
    auto v = read_value();
    if (!v) return std::nullopt;
    return StateCodec<T>::decode(*v);
  }
  void update(const T& v) {
    StateCodec<T>::encode(v, begin_value());
    backend_.put(id_, buf_);
  }
  void clear() { backend_.remove(id_); }
};

// ---- ListState ----

template <class T>
class ListState final : public state_detail::TypedStateBase {
 public:
  ListState(KeyedStateBackend& backend, const ListStateDescriptor<T>& d)
      : TypedStateBase(backend, d.name, StateKind::kList, d.ttl) {}

  // The elements in insertion order; empty when there are none.
  std::vector<T> get() {
    std::vector<T> out;
    if (!backend_.get(id_, buf_)) return out;
    std::string_view in(buf_);
    if (!ttl_on()) {
      while (!in.empty()) out.push_back(StateCodec<T>::decode(in));
      return out;
    }
    // Per-element TTL, as Flink's TtlListState: expired elements are dropped from the
    // stored list; with kOnReadAndWrite the survivors get a fresh timestamp.
    const std::int64_t t = now();
    bool any_expired = false;
    rewrite_.clear();
    while (!in.empty()) {
      std::int64_t ts = get_ttl_timestamp(in);
      std::uint64_t n = get_varint(in);
      if (in.size() < n) throw ClinkError("state: truncated list element");
      std::string_view elem = in.substr(0, n);
      in.remove_prefix(n);
      bool expired = ttl_expired(ts, ttl_.ttl_ms, t);
      if (expired) any_expired = true;
      if (!expired) append_element(elem, update_on_read() ? t : ts, rewrite_);
      if (!expired || return_expired()) {
        std::string_view e = elem;
        out.push_back(StateCodec<T>::decode(e));
      }
    }
    if (rewrite_.empty()) {
      if (any_expired) backend_.remove(id_);
    } else if (any_expired || update_on_read()) {
      backend_.put(id_, rewrite_);
    }
    return out;
  }
  // Appends (no read of the stored list).
  void add(const T& v) {
    buf_.clear();
    encode_element(v, buf_);
    backend_.append(id_, buf_);
  }
  void add_all(const std::vector<T>& vs) {
    if (vs.empty()) return;
    buf_.clear();
    for (const auto& v : vs) encode_element(v, buf_);
    backend_.append(id_, buf_);
  }
  // Replaces the list; an empty list clears it.
  void update(const std::vector<T>& vs) {
    if (vs.empty()) return clear();
    buf_.clear();
    for (const auto& v : vs) encode_element(v, buf_);
    backend_.put(id_, buf_);
  }
  void clear() { backend_.remove(id_); }

 private:
  void encode_element(const T& v, std::string& out) {
    if (!ttl_on()) return StateCodec<T>::encode(v, out);
    elem_.clear();
    StateCodec<T>::encode(v, elem_);
    append_element(elem_, now(), out);
  }
  static void append_element(std::string_view elem, std::int64_t ts, std::string& out) {
    put_ttl_timestamp(ts, out);
    put_varint(elem.size(), out);
    out.append(elem);
  }
  std::string elem_;
  std::string rewrite_;
};

// ---- MapState ----

template <class UK, class UV>
class MapState final : public state_detail::TypedStateBase {
 public:
  MapState(KeyedStateBackend& backend, const MapStateDescriptor<UK, UV>& d)
      : TypedStateBase(backend, d.name, StateKind::kMap, d.ttl) {}

  std::optional<UV> get(const UK& key) {
    encode_user_key(key);
    if (!backend_.map_get(id_, uk_, buf_)) return std::nullopt;
    std::string_view in(buf_);
    if (ttl_on()) {
      std::int64_t ts = get_ttl_timestamp(in);
      std::int64_t t = now();
      if (ttl_expired(ts, ttl_.ttl_ms, t)) {
        backend_.map_remove(id_, uk_);
        if (!return_expired()) return std::nullopt;
      } else if (update_on_read()) {
        set_ttl_timestamp(buf_, t);
        backend_.map_put(id_, uk_, buf_);
        in = std::string_view(buf_).substr(kTtlTimestampBytes);
      }
    }
    return StateCodec<UV>::decode(in);
  }
  void put(const UK& key, const UV& value) {
    encode_user_key(key);
    StateCodec<UV>::encode(value, begin_value());
    backend_.map_put(id_, uk_, buf_);
  }
  void remove(const UK& key) {
    encode_user_key(key);
    backend_.map_remove(id_, uk_);
  }
  bool contains(const UK& key) { return get(key).has_value(); }

  // Every unexpired entry, in user-key order; return false from fn to stop.
  void for_each(const std::function<bool(const UK&, const UV&)>& fn) {
    scan([&](std::string_view k, std::string_view v) {
      UK key = decode_key<UK>(k);
      UV value = StateCodec<UV>::decode(v);
      return fn(key, value);
    });
  }
  std::vector<std::pair<UK, UV>> entries() {
    std::vector<std::pair<UK, UV>> out;
    for_each([&](const UK& k, const UV& v) {
      out.emplace_back(k, v);
      return true;
    });
    return out;
  }
  std::vector<UK> keys() {
    std::vector<UK> out;
    scan([&](std::string_view k, std::string_view) {
      out.push_back(decode_key<UK>(k));
      return true;
    });
    return out;
  }
  std::vector<UV> values() {
    std::vector<UV> out;
    scan([&](std::string_view, std::string_view v) {
      out.push_back(StateCodec<UV>::decode(v));
      return true;
    });
    return out;
  }
  bool is_empty() {
    bool empty = true;
    scan([&](std::string_view, std::string_view) { return empty = false; });
    return empty;
  }
  void clear() { backend_.map_clear(id_); }

 private:
  void encode_user_key(const UK& key) {
    uk_.clear();
    KeyCodec<UK>::encode(key, uk_);
  }
  // Visits (user key bytes, value payload) with TTL applied; expired entries are removed
  // after the scan, refreshed timestamps (kOnReadAndWrite) written back.
  template <class Fn>
  void scan(Fn&& fn) {
    if (!ttl_on()) {
      backend_.map_for_each(id_, [&](std::string_view k, std::string_view v) { return fn(k, v); });
      return;
    }
    const std::int64_t t = now();
    std::vector<std::string> expired;
    std::vector<std::pair<std::string, std::string>> refreshed;
    backend_.map_for_each(id_, [&](std::string_view k, std::string_view v) {
      std::string_view in = v;
      std::int64_t ts = get_ttl_timestamp(in);
      if (ttl_expired(ts, ttl_.ttl_ms, t)) {
        expired.emplace_back(k);
        if (!return_expired()) return true;
      } else if (update_on_read()) {
        std::string nv(v);
        set_ttl_timestamp(nv, t);
        refreshed.emplace_back(std::string(k), std::move(nv));
      }
      return fn(k, in);
    });
    for (const auto& k : expired) backend_.map_remove(id_, k);
    for (const auto& [k, v] : refreshed) backend_.map_put(id_, k, v);
  }
  std::string uk_;
};

// ---- ReducingState ----

template <class T>
class ReducingState final : public state_detail::TypedStateBase {
 public:
  ReducingState(KeyedStateBackend& backend, const ReducingStateDescriptor<T>& d)
      : TypedStateBase(backend, d.name, StateKind::kReducing, d.ttl), reduce_(d.reduce) {
    if (!reduce_) throw ClinkError("reducing state '" + d.name + "' has no reduce function");
  }

  std::optional<T> get() {
    auto v = read_value();
    if (!v) return std::nullopt;
    return StateCodec<T>::decode(*v);
  }
  void add(const T& v) {
    auto cur = get_unexpired();
    T next = cur ? reduce_(*cur, v) : v;
    StateCodec<T>::encode(next, begin_value());
    backend_.put(id_, buf_);
  }
  void clear() { backend_.remove(id_); }

 private:
  // The stored value unless expired (an expired value never feeds a reduction).
  std::optional<T> get_unexpired() {
    if (!backend_.get(id_, buf_)) return std::nullopt;
    std::string_view in(buf_);
    if (ttl_on() && ttl_expired(get_ttl_timestamp(in), ttl_.ttl_ms, now())) return std::nullopt;
    return StateCodec<T>::decode(in);
  }
  std::function<T(const T&, const T&)> reduce_;
};

// ---- AggregatingState ----

template <class IN, class OUT>
class AggregatingState : public state_detail::TypedStateBase {
 public:
  // The result for the current key and namespace; nullopt when nothing was added.
  virtual std::optional<OUT> get() = 0;
  virtual void add(const IN& value) = 0;
  void clear() { backend_.remove(id_); }

 protected:
  using TypedStateBase::TypedStateBase;
};

template <class IN, class ACC, class OUT>
class AggregatingStateImpl final : public AggregatingState<IN, OUT> {
 public:
  AggregatingStateImpl(KeyedStateBackend& backend, const AggregatingStateDescriptor<IN, ACC, OUT>& d)
      : AggregatingState<IN, OUT>(backend, d.name, StateKind::kAggregating, d.ttl), d_(d) {
    if (!d_.create_accumulator || !d_.add || !d_.get_result)
      throw ClinkError("aggregating state '" + d.name + "' needs create_accumulator, add and get_result");
  }
  std::optional<OUT> get() override {
    auto v = this->read_value();
    if (!v) return std::nullopt;
    return d_.get_result(StateCodec<ACC>::decode(*v));
  }
  void add(const IN& value) override {
    ACC acc = accumulator();
    acc = d_.add(value, std::move(acc));
    StateCodec<ACC>::encode(acc, this->begin_value());
    this->backend_.put(this->id_, this->buf_);
  }
  // The stored accumulator (or a new one): for operators merging namespaces.
  ACC accumulator() {
    if (!this->backend_.get(this->id_, this->buf_)) return d_.create_accumulator();
    std::string_view in(this->buf_);
    if (this->ttl_on() && ttl_expired(get_ttl_timestamp(in), this->ttl_.ttl_ms, this->now()))
      return d_.create_accumulator();
    return StateCodec<ACC>::decode(in);
  }

 private:
  AggregatingStateDescriptor<IN, ACC, OUT> d_;
};

// ---- the store ----

// Hands out typed states over a backend. Stateless: the typed states are cached in the
// backend by name, so the returned references live as long as the backend (the
// operator), and asking twice gives the same object. Asking for a name with another
// type is an error.
class KeyedStateStore {
 public:
  explicit KeyedStateStore(KeyedStateBackend& backend) : backend_(&backend) {}

  template <class T>
  ValueState<T>& get_state(const ValueStateDescriptor<T>& d) {
    return get_or_create<ValueState<T>>(d.name, d);
  }
  template <class T>
  ListState<T>& get_list_state(const ListStateDescriptor<T>& d) {
    return get_or_create<ListState<T>>(d.name, d);
  }
  template <class UK, class UV>
  MapState<UK, UV>& get_map_state(const MapStateDescriptor<UK, UV>& d) {
    return get_or_create<MapState<UK, UV>>(d.name, d);
  }
  template <class T>
  ReducingState<T>& get_reducing_state(const ReducingStateDescriptor<T>& d) {
    return get_or_create<ReducingState<T>>(d.name, d);
  }
  template <class IN, class ACC, class OUT>
  AggregatingState<IN, OUT>& get_aggregating_state(const AggregatingStateDescriptor<IN, ACC, OUT>& d) {
    return get_or_create<AggregatingStateImpl<IN, ACC, OUT>>(d.name, d);
  }

  KeyedStateBackend& backend() { return *backend_; }

 private:
  template <class S, class D>
  S& get_or_create(const std::string& name, const D& d) {
    if (auto* existing = backend_->find_typed_state(name)) {
      if (auto* s = dynamic_cast<S*>(existing)) return *s;
      throw ClinkError("state '" + name + "' is already registered with another type");
    }
    return static_cast<S&>(backend_->add_typed_state(name, std::make_unique<S>(*backend_, d)));
  }
  KeyedStateBackend* backend_;
};

}  // namespace clink
