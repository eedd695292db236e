// Batch<T> codecs for the record types JobGraphSpec operators exchange. Values use the
// state encoding (StateCodec: varints, length-prefixed strings); event times and source
// partitions are written only when some record of the batch has one.
#include <string>

#include "clink/api/spec_types.hpp"
#include "clink/cluster/shuffle/batch_codec.hpp"
#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::cluster {
namespace {

template <class T>
struct WireCodec : StateCodec<T> {};

template <>
struct WireCodec<Event> {
  static void encode(const Event& e, std::string& out) {
    StateCodec<std::string>::encode(e.key, out);
    StateCodec<std::int64_t>::encode(e.value, out);
  }
  static Event decode(std::string_view& in) {
    Event e;
    e.key = StateCodec<std::string>::decode(in);
    e.value = StateCodec<std::int64_t>::decode(in);
    return e;
  }
};

template <>
struct WireCodec<DeadLetter> {
  static void encode(const DeadLetter& d, std::string& out) {
    StateCodec<std::string>::encode(d.source, out);
    StateCodec<std::string>::encode(d.file, out);
    StateCodec<std::int64_t>::encode(d.line, out);
    StateCodec<std::string>::encode(d.reason, out);
    StateCodec<std::string>::encode(d.raw, out);
  }
  static DeadLetter decode(std::string_view& in) {
    DeadLetter d;
    d.source = StateCodec<std::string>::decode(in);
    d.file = StateCodec<std::string>::decode(in);
    d.line = StateCodec<std::int64_t>::decode(in);
    d.reason = StateCodec<std::string>::decode(in);
    d.raw = StateCodec<std::string>::decode(in);
    return d;
  }
};

constexpr char kHasEventTimes = 1;
constexpr char kHasPartitions = 2;

// varint rows | u8 flags | per record: value [zigzag event time] [zigzag partition]
template <class T>
class TypedEncoder final : public BatchEncoder {
 public:
  void encode(const BatchBase& base, std::string& out) override {
    const auto& records = batch_cast<T>(base).records;
    char flags = 0;
    for (const auto& r : records) {
      if (r.event_time != kNoEventTime) flags |= kHasEventTimes;
      if (r.partition != kNoPartition) flags |= kHasPartitions;
    }
    put_varint(records.size(), out);
    out.push_back(flags);
    for (const auto& r : records) {
      WireCodec<T>::encode(r.value, out);
      if (flags & kHasEventTimes) put_varint(zigzag(r.event_time), out);
      if (flags & kHasPartitions) put_varint(zigzag(r.partition), out);
    }
  }
};

template <class T>
class TypedDecoder final : public BatchDecoder {
 public:
  BatchPtr decode(std::string_view in) override {
    const std::uint64_t rows = get_varint(in);
    if (in.empty()) throw ClinkError("truncated batch: no flags byte");
    if (rows > in.size()) throw ClinkError("batch claims " + std::to_string(rows) + " records in " +
                                           std::to_string(in.size()) + " bytes");
    const char flags = in.front();
    in.remove_prefix(1);
    auto batch = std::make_unique<Batch<T>>();
    batch->records.reserve(rows);
    for (std::uint64_t i = 0; i < rows; ++i) {
      Record<T> r{WireCodec<T>::decode(in)};
      if (flags & kHasEventTimes) r.event_time = unzigzag(get_varint(in));
      if (flags & kHasPartitions) r.partition = static_cast<PartitionId>(unzigzag(get_varint(in)));
      batch->records.push_back(std::move(r));
    }
    if (!in.empty()) throw ClinkError(std::to_string(in.size()) + " bytes left after the batch's last record");
    return batch;
  }
};

}  // namespace

void register_spec_batch_codecs() {
  for (const char* name : {"string", "int64", "event", "word_count", "window_count", "dead_letter"}) {
    dispatch_spec_type(name, [&]<class T>() {
      register_batch_codec(BatchCodec{std::string("batch<") + name + ">", typeid(Batch<T>),
                                      [] { return std::make_unique<TypedEncoder<T>>(); },
                                      [] { return std::make_unique<TypedDecoder<T>>(); }});
    });
  }
}

}  // namespace clink::cluster
