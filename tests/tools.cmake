# Check suites of the Kokkos Tools interface and the kernel timer (core/tools*.c,
# core/kernel_timer.c). The recording tool libraries are built here as plain shared modules
# that include no parex header and link nothing of parex, like third-party Kokkos tools.
foreach(variant kptest_tool kptest_partial_tool kptest_empty_tool)
  add_library(${variant} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/tools/kptest_tool.c)
  target_include_directories(${variant} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tools)
  target_compile_options(${variant} PRIVATE ${PX_C_WARNINGS})
  target_link_libraries(${variant} PRIVATE Threads::Threads)
endforeach()
target_compile_definitions(kptest_partial_tool PRIVATE KPT_PARTIAL=1)
target_compile_definitions(kptest_empty_tool PRIVATE KPT_EMPTY=1)

# Dispatch (check_tools) with 1 rank and more ranks than the CI's two cores; loading
# (check_tools_load, core/tools_load.c) once.
px_add_check_test(check_tools SOURCES check_tools.c THREADS 1 3 LABELS concurrency TIMEOUT 120
                  FORK_EACH_TEST)
px_add_check_test(check_tools_load SOURCES check_tools_load.c LABELS core TIMEOUT 120
                  FORK_EACH_TEST)
foreach(suite check_tools check_tools_load)
  target_include_directories(${suite} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tools)
  target_compile_definitions(${suite} PRIVATE
    KPTEST_TOOL_PATH="$<TARGET_FILE:kptest_tool>"
    KPTEST_PARTIAL_PATH="$<TARGET_FILE:kptest_partial_tool>"
    KPTEST_EMPTY_PATH="$<TARGET_FILE:kptest_empty_tool>")
  add_dependencies(${suite} kptest_tool kptest_partial_tool kptest_empty_tool)
endforeach()

# A tool built against Kokkos' own C interface header instead of our declarations, when one
# is installed (Debian: libtrilinos-kokkos-dev, /usr/include/trilinos/impl). Each kokkosp_*
# definition is type-checked against Kokkos' typedefs at compile time. Set
# PX_KOKKOS_C_INTERFACE_DIR to the folder holding Kokkos_Profiling_C_Interface.h to use
# another copy.
find_path(PX_KOKKOS_C_INTERFACE_DIR Kokkos_Profiling_C_Interface.h
          PATH_SUFFIXES trilinos/impl kokkos/impl impl)
if(PX_KOKKOS_C_INTERFACE_DIR)
  add_library(kokkos_header_tool MODULE ${CMAKE_CURRENT_SOURCE_DIR}/tools/kokkos_header_tool.c)
  target_include_directories(kokkos_header_tool SYSTEM PRIVATE ${PX_KOKKOS_C_INTERFACE_DIR})
  target_compile_options(kokkos_header_tool PRIVATE ${PX_C_WARNINGS})
  target_compile_definitions(check_tools PRIVATE
    KPTEST_KOKKOS_HEADER_TOOL_PATH="$<TARGET_FILE:kokkos_header_tool>")
  add_dependencies(check_tools kokkos_header_tool)
else()
  message(STATUS "parex: Kokkos_Profiling_C_Interface.h not found; the tool built against "
                 "Kokkos' own header is skipped (set PX_KOKKOS_C_INTERFACE_DIR)")
endif()

# Engine ops reach tools through pxi_tools_begin_engine_op (core/engine/push.c): sections from
# workers, regions from the pusher. The engine test is built whenever the engine reports them.
file(GLOB _px_engine_sources ${PROJECT_SOURCE_DIR}/core/engine/*.c)
set(_px_engine_regions OFF)
foreach(f IN LISTS _px_engine_sources)
  file(STRINGS ${f} _hit REGEX "pxi_tools_begin_engine_op")
  if(_hit)
    set(_px_engine_regions ON)
  endif()
endforeach()
if(_px_engine_regions)
  target_compile_definitions(check_tools PRIVATE PX_TEST_ENGINE_REGIONS=1)
else()
  message(STATUS "parex: the engine does not report ops to tools; "
                 "test_engine_ops_on_workers_are_sections_and_regions_stay_lifo is not built")
endif()
