#include "clink/registry/builtin_registry.hpp"

#include "clink/connectors/jdbc/register_jdbc_connectors.hpp"
#include "clink/connectors/jdbc/register_postgres_cdc.hpp"
#include "clink/connectors/kafka/register_kafka_connectors.hpp"
#include "clink/connectors/ml/register_ml_models.hpp"
#include "clink/connectors/nexmark/nexmark_spec.hpp"
#include "clink/connectors/register_connectors.hpp"
#include "clink/connectors/sql/register_sql_connectors.hpp"
#include "clink/operators/register_operators.hpp"
#include "clink/sql/ops/register_sql_operators.hpp"

namespace clink {

const OperatorRegistry& builtin_registry() {
  static const OperatorRegistry registry = [] {
    OperatorRegistry r;
    register_builtin_connectors(r);
    register_nexmark_connector(r);
    sql::register_sql_connectors(r);
    sql::register_kafka_connectors(r);
    sql::register_jdbc_connectors(r);
    sql::register_postgres_cdc_connector(r);
    sql::register_ml_models();
    register_kafka_stream_connectors(r);
    register_builtin_operators(r);
    sql::register_sql_operators(r);
    return r;
  }();
  return registry;
}

}  // namespace clink
