# test_cluster_ha: against a real ZooKeeper server, the `zookeeper` fixture of
# tests/CMakeLists.txt (scripts/zookeeper), whose address it reads from CLINK_ZOOKEEPER_QUORUM.
gtest_discover_tests(test_cluster_ha WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60
                     PROPERTIES FIXTURES_REQUIRED zookeeper
                     ENVIRONMENT CLINK_ZOOKEEPER_QUORUM=127.0.0.1:${CLINK_TEST_ZOOKEEPER_PORT})
