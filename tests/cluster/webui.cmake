# test_cluster_webui: drives the web UI in a real headless Chromium (Debian's chromium and
# chromium-driver, installed by scripts/setup --services) through Selenium (in the venv
# tests/flink/setup makes); screenshots go to <build>/test-artifacts/webui/.
target_compile_definitions(test_cluster_webui PRIVATE CLINK_WEBUI_ARTIFACTS="${CMAKE_BINARY_DIR}/test-artifacts/webui")
gtest_discover_tests(test_cluster_webui WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60
                     PROPERTIES TIMEOUT 300)
