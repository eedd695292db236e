# test_cluster_materialized: coordinator and worker processes; its HA test runs against the
# real ZooKeeper server of the `zookeeper` fixture (tests/CMakeLists.txt, scripts/zookeeper).
gtest_discover_tests(test_cluster_materialized WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60
                     PROPERTIES FIXTURES_REQUIRED zookeeper
                     ENVIRONMENT CLINK_ZOOKEEPER_QUORUM=127.0.0.1:${CLINK_TEST_ZOOKEEPER_PORT})
