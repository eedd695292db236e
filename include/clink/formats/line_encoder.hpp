#pragma once
// Writing one record as one line: its text form or its JSON form.
#include <string>

#include "clink/core/error.hpp"
#include "clink/core/format_value.hpp"
#include "clink/core/type_name.hpp"
#include "clink/formats/json_codec.hpp"
#include "clink/formats/line_format.hpp"

namespace clink {

template <class T>
class LineEncoder {
 public:
  // Throws ClinkError if T has no encoding in `format`, so a misconfigured sink fails
  // when it is built rather than on the first record.
  explicit LineEncoder(LineFormat format) : format_(format) {
    if constexpr (!JsonEncodable<T>) {
      if (format == LineFormat::kJson) throw ClinkError("no JSON encoder for record type " + type_name<T>());
    }
  }
  // Appends the record and a '\n' to `out`.
  void encode(const T& value, std::string& out) const {
    if constexpr (JsonEncodable<T>) {
      if (format_ == LineFormat::kJson) {
        encode_json(value, out);
        out.push_back('\n');
        return;
      }
    }
    format_value(value, out);
    out.push_back('\n');
  }
  LineFormat format() const { return format_; }

 private:
  LineFormat format_;
};

}  // namespace clink
