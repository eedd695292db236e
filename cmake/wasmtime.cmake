# Wasmtime's C API for the WebAssembly UDFs (src/sql/function/wasm). ON by default: the
# library is built once per machine from crates.io with cargo (scripts/wasmtime) into
# ~/.cache/clink/wasmtime-<version>, which every build directory and clone reuses.
# OFF: CREATE FUNCTION ... LANGUAGE WASM fails saying the build has no wasm.
option(CLINK_WITH_WASM "WebAssembly UDFs (Wasmtime from crates.io, built with cargo)" ON)

file(GLOB CLINK_WASM_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/sql/function/wasm/wasm_runtime*.cpp)
if(CLINK_WITH_WASM)
  execute_process(COMMAND ${PROJECT_SOURCE_DIR}/scripts/wasmtime --print-dir
                  OUTPUT_VARIABLE CLINK_WASMTIME_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT EXISTS ${CLINK_WASMTIME_DIR}/lib/libwasmtime.a)
    message(STATUS "Building Wasmtime's C API into ${CLINK_WASMTIME_DIR} (once per machine; cargo)")
  endif()
  execute_process(COMMAND ${PROJECT_SOURCE_DIR}/scripts/wasmtime RESULT_VARIABLE wasmtime_rc)
  if(NOT wasmtime_rc EQUAL 0)
    message(FATAL_ERROR "scripts/wasmtime failed (needs cargo: rustup); or configure with -DCLINK_WITH_WASM=OFF")
  endif()
  # Only the files that call Wasmtime see its headers and the define: the rest of
  # clink_lib keeps its compile commands (and its ccache hits).
  # -isystem: Wasmtime's C headers use anonymous structs, which -Wpedantic rejects in C++.
  set_source_files_properties(${CLINK_WASM_SOURCES} PROPERTIES
                              COMPILE_OPTIONS "-isystem;${CLINK_WASMTIME_DIR}/include"
                              COMPILE_DEFINITIONS "CLINK_WITH_WASM=1;WASM_API_EXTERN=;WASI_API_EXTERN=")
  target_link_libraries(clink_lib PRIVATE ${CLINK_WASMTIME_DIR}/lib/libwasmtime.a ${CMAKE_DL_LIBS} m)
endif()
