# Launch latency with and without Kokkos Tools libraries and the kernel timer (core/tools.c).
# The tool libraries come from the test tree (tests/tools.cmake) when tests are built;
# otherwise pass their paths on the command line.
add_executable(bench_tools bench_tools.c)
target_link_libraries(bench_tools PRIVATE parex)
target_compile_options(bench_tools PRIVATE -O2)
if(TARGET kptest_tool AND TARGET kptest_empty_tool)
  target_compile_definitions(bench_tools PRIVATE
    BENCH_TOOL_PATH="$<TARGET_FILE:kptest_tool>"
    BENCH_EMPTY_TOOL_PATH="$<TARGET_FILE:kptest_empty_tool>")
  add_dependencies(bench_tools kptest_tool kptest_empty_tool)
endif()
