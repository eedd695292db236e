// Kafka to Kafka with the C++ DataStream API: reads the lines of a topic (from its start
// to its end now), counts the words, and writes each word's count as JSON to another
// topic in one exactly-once Kafka transaction per checkpoint (here: one, at the end).
//
//   scripts/kafka start
//   build/release/example_kafka_word_count [bootstrap] [input topic] [output topic]
//                                          (default: 127.0.0.1:19092 lines word-counts)
//
// The same job as a JobGraphSpec: examples/kafka_word_count.json.
#include <cstdio>
#include <exception>
#include <string>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/kafka/kafka_sink.hpp"
#include "clink/connectors/kafka/kafka_source.hpp"
#include "clink/operators/builtin_streams.hpp"

int main(int argc, char** argv) {
  const std::string bootstrap = argc > 1 ? argv[1] : "127.0.0.1:19092";
  const std::string input = argc > 2 ? argv[2] : "lines";
  const std::string output = argc > 3 ? argv[3] : "word-counts";
  try {
    clink::StreamExecutionEnvironment env;
    env.set_parallelism(2);

    auto source = clink::KafkaSource<std::string>::builder()
                      .set_bootstrap_servers(bootstrap)
                      .set_topics(input)
                      .set_group_id("example-kafka-word-count")  // offsets committed here, for monitoring
                      .set_starting_offsets(clink::OffsetsInitializer::earliest())
                      .set_bounded(clink::OffsetsInitializer::latest())
                      .set_deserializer(clink::KafkaRecordDeserializationSchema<std::string>::value_only())
                      .build();
    auto lines = env.from_source<std::string>(source, "Kafka Source");
    // Hash-partitioned by the word; each subtask emits its counts at the end of the input.
    auto counts = clink::count(clink::tokenize(lines), clink::CountEmit::kFinal);

    auto sink = clink::KafkaSink<clink::WordCount>::builder()
                    .set_bootstrap_servers(bootstrap)
                    .set_record_serializer(clink::KafkaRecordSerializationSchema<clink::WordCount>::value_only(
                        output, clink::LineFormat::kJson))  // {"word":"a","count":3}
                    .set_delivery_guarantee(clink::DeliveryGuarantee::kExactlyOnce)
                    .set_transactional_id_prefix("example-kafka-word-count")
                    .build();
    counts.sink_to(sink, "Kafka Sink");

    env.execute("kafka_word_count");
    std::printf("counted the words of '%s' into '%s'\n", input.c_str(), output.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
