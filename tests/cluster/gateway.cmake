# test_cluster_gateway: REST calls straight to the gateway (cpp-httplib, for DELETE) and
# Flink's own sql-client.sh in gateway mode (the PyFlink venv of tests/flink/setup, with
# the flink-sql-gateway jar it adds).
target_link_libraries(test_cluster_gateway PRIVATE PkgConfig::HTTPLIB)
gtest_discover_tests(test_cluster_gateway WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60)
