# Views: allocation, layouts and strides, mirrors, deep copies, subviews, element access (also
# bounds-checked with PX_DEBUG_CHECK). Zeroing runs in parallel on threads: 1 thread and more
# threads than cores.
px_add_check_test(check_view SOURCES check_view.c view_debug.c LABELS core THREADS 1 3)
# Tools events carry the view's label: checked with the recording test tool of tests/tools.cmake
# when that module is built.
if(TARGET kptest_tool)
  target_include_directories(check_view PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tools)
  target_compile_definitions(check_view PRIVATE KPTEST_TOOL_PATH="$<TARGET_FILE:kptest_tool>")
  target_link_libraries(check_view PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(check_view kptest_tool)
endif()
