# Scheduling overhead as a fraction of 1, 10 and 100 us ops (issue 16): parex push, parex graph
# and libgomp depend here; Taskflow's side is bench_overhead_taskflow (bench/taskflow.cmake).
# Run: build-*/bench/bench_overhead [--impl all] [--work-us 1,10,100] [--target-s 0.3] [--reps 3]
if(OpenMP_C_FOUND)
  add_executable(bench_overhead bench_overhead.c)
  target_link_libraries(bench_overhead PRIVATE parex OpenMP::OpenMP_C)
  target_compile_options(bench_overhead PRIVATE ${PX_C_WARNINGS} -O2
                         $<$<BOOL:${PX_WERROR}>:-Werror>)
else()
  message(STATUS "parex: OpenMP missing, bench_overhead not built")
endif()
