#pragma once
// How a Kafka table's rows map onto records: the key's and the value's format and the
// columns each holds (Flink's key.format / key.fields / value.format /
// value.fields-include), the same for the source and the sink.
#include <cstddef>
#include <string>
#include <vector>

#include "clink/formats/record_format.hpp"

namespace clink::sql {

struct KafkaMessageFormats {
  std::string key_format;  // empty: no key fields
  FormatOptions key_options;
  std::vector<std::size_t> key_columns;  // the row's columns the key holds, in the key format's field order
  SchemaPtr key_fields;                  // their names without key.fields-prefix
  std::string value_format;
  FormatOptions value_options;
  std::vector<std::size_t> value_columns;
  SchemaPtr value_fields;
};

}  // namespace clink::sql
