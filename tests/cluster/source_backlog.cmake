# test_cluster_source_backlog: its Kafka test reads from the broker of the `kafka` fixture
# of tests/CMakeLists.txt (scripts/kafka), whose address it reads from CLINK_KAFKA_BOOTSTRAP.
gtest_discover_tests(test_cluster_source_backlog WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60
                     PROPERTIES FIXTURES_REQUIRED kafka
                     ENVIRONMENT CLINK_KAFKA_BOOTSTRAP=127.0.0.1:${CLINK_TEST_KAFKA_PORT})
