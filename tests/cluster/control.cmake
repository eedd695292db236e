# test_cluster_control: white-box tests of src/cluster/control (its private headers, the
# generated protobuf messages and, for a raw client, the generated gRPC stub).
target_include_directories(test_cluster_control PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(test_cluster_control PRIVATE clink_control)
gtest_discover_tests(test_cluster_control WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60)
