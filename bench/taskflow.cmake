# Taskflow 4.1.0 on the engine benchmark's DAGs (bench/bench_taskflow.cpp; issue 16). Taskflow is
# header-only: the tarball from ../shared/peers is extracted into the build tree at configure
# time; Taskflow 4 needs C++20. Without a C++20 compiler or the tarball the program is not built.
set(PX_TASKFLOW_TARBALL "${PROJECT_SOURCE_DIR}/../shared/peers/taskflow-4.1.0.tar.gz"
    CACHE FILEPATH "Taskflow source tarball for bench_taskflow")
include(CheckLanguage)
check_language(CXX)
if(NOT CMAKE_CXX_COMPILER OR NOT EXISTS "${PX_TASKFLOW_TARBALL}")
  message(STATUS "parex: no C++ compiler or no ${PX_TASKFLOW_TARBALL}: bench_taskflow not built")
  return()
endif()
enable_language(CXX)
set(PX_TASKFLOW_DIR "${CMAKE_BINARY_DIR}/peers/taskflow-4.1.0")
if(NOT EXISTS "${PX_TASKFLOW_DIR}/taskflow/taskflow/taskflow.hpp")
  file(ARCHIVE_EXTRACT INPUT "${PX_TASKFLOW_TARBALL}" DESTINATION "${PX_TASKFLOW_DIR}")
endif()
find_package(Threads REQUIRED)
add_executable(bench_taskflow bench_taskflow.cpp)
set_target_properties(bench_taskflow PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                                CXX_EXTENSIONS OFF)
# Taskflow's headers are a peer's code: included as system headers, not held to our warnings.
target_include_directories(bench_taskflow SYSTEM PRIVATE "${PX_TASKFLOW_DIR}/taskflow")
target_compile_options(bench_taskflow PRIVATE -O2 -Wall -Wextra)
target_link_libraries(bench_taskflow PRIVATE Threads::Threads)
# Taskflow's side of bench_overhead (ops of 1, 10 and 100 us of work; bench/overhead.cmake).
add_executable(bench_overhead_taskflow bench_overhead_taskflow.cpp)
set_target_properties(bench_overhead_taskflow PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                                         CXX_EXTENSIONS OFF)
target_include_directories(bench_overhead_taskflow SYSTEM PRIVATE "${PX_TASKFLOW_DIR}/taskflow")
target_compile_options(bench_overhead_taskflow PRIVATE -O2 -Wall -Wextra
                       $<$<BOOL:${PX_WERROR}>:-Werror>)
target_link_libraries(bench_overhead_taskflow PRIVATE Threads::Threads)
