#include "kafka_client.hpp"

#include "clink/core/error.hpp"

namespace clink::kafka {

KafkaHandle make_kafka_client(rd_kafka_type_t type, const std::map<std::string, std::string>& properties,
                              std::string_view what, const std::function<void(rd_kafka_conf_t*)>& configure) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw ClinkError(std::string(what) + ": option 'properties." + key + "' = '" + value + "': " + err);
    }
  }
  if (configure) configure(conf);
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);  // owns conf on success
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    throw ClinkError(std::string(what) + ": cannot create the Kafka " +
                     (type == RD_KAFKA_PRODUCER ? "producer: " : "consumer: ") + err);
  }
  return KafkaHandle(rk);
}

std::string kafka_error_text(rd_kafka_resp_err_t err) {
  return std::string(rd_kafka_err2name(err)) + " (" + rd_kafka_err2str(err) + ")";
}

}  // namespace clink::kafka
