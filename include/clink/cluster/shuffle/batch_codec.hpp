#pragma once
// How a type-erased batch crosses the network: a codec per concrete batch type
// (std::type_index), known on both sides by its name. A channel makes one encoder and
// one decoder per codec it sees, so a codec may keep per-channel state (the SQL codec
// sends a batch's schema once, when it differs from the last one sent on the channel).
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>

#include "clink/core/record.hpp"

namespace clink::cluster {

// The sending side of one codec on one channel.
class BatchEncoder {
 public:
  virtual ~BatchEncoder() = default;
  // Appends to `out` what the decoder must learn before `batch` (e.g. its schema) and
  // returns true, or returns false when it already knows it.
  virtual bool encode_meta(const BatchBase& batch, std::string& out) {
    (void)batch;
    (void)out;
    return false;
  }
  // Appends `batch`'s encoding to `out` (reuses its capacity: no allocation per batch
  // once the buffer has grown).
  virtual void encode(const BatchBase& batch, std::string& out) = 0;
};

// The receiving side of one codec on one channel. Throws ClinkError on bad input.
class BatchDecoder {
 public:
  virtual ~BatchDecoder() = default;
  virtual void decode_meta(std::string_view bytes);  // default: this codec sends none
  virtual BatchPtr decode(std::string_view bytes) = 0;
};

struct BatchCodec {
  std::string name;  // what the receiver looks the codec up by, e.g. "sql_row", "batch<string>"
  std::type_index type = typeid(void);  // BatchBase::type() of the batches it encodes
  std::function<std::unique_ptr<BatchEncoder>()> make_encoder;
  std::function<std::unique_ptr<BatchDecoder>()> make_decoder;
};

// The process-wide registry. Registering a name or type again replaces nothing: the
// same (name, type) pair is a no-op, a clash throws ClinkError naming both.
void register_batch_codec(BatchCodec codec);
// nullptr when none is registered.
const BatchCodec* find_batch_codec(std::type_index type);
const BatchCodec* find_batch_codec(std::string_view name);

// Batch<T> of the JobGraphSpec record types (string, int64, event, word_count,
// window_count, dead_letter), named "batch<type>".
void register_spec_batch_codecs();
// The SQL ColumnBatch ("sql_row"), with its schema sent once per channel.
void register_column_batch_codec();
// Both; idempotent. ShuffleServer and connect_channel call it, so a worker needs
// nothing else for the built-in types.
void register_builtin_batch_codecs();

}  // namespace clink::cluster
