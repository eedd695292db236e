#include "clink/metrics/sql_metrics.hpp"

namespace clink::metrics::sql {

Counters& counters() {
  static Counters c;
  return c;
}

}  // namespace clink::metrics::sql
