# test_cluster_config: also reads the deploy/ manifests with yaml-cpp.
target_link_libraries(test_cluster_config PRIVATE yaml-cpp)
gtest_discover_tests(test_cluster_config WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60)
