# Threads space against OpenMP (libgomp) at the same thread count (bench/RESULTS.md, ## Threads).
# Run: OMP_PROC_BIND=close OMP_PLACES=cores PX_NUM_THREADS=2 build-*/bench/bench_threads
#      [--rounds 7] [--only NAME] [--spin-sweep] [--dynamic-modes]; bench/run_threads.sh runs
#      1, 2 and 4 threads and plots bench/threads_latency.png and bench/threads_bandwidth.png.
if(PX_ENABLE_THREADS AND OpenMP_C_FOUND)
  add_executable(bench_threads bench_threads.c)
  # Static library: the benchmark selects the dynamic claim mode through an internal knob.
  target_link_libraries(bench_threads PRIVATE parex_static OpenMP::OpenMP_C m)
  target_include_directories(bench_threads PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(bench_threads PRIVATE ${PX_C_WARNINGS} -O3 -march=native)
endif()
