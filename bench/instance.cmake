# Launch latency on Threads instances: placed launchers, and the hand-off to an instance's own
# rank-0 thread (bench/bench_instance.c). Run: PX_NUM_THREADS=2 build-*/bench/bench_instance
# [--rounds 15] [--launches 2000].
if(PX_ENABLE_THREADS)
  add_executable(bench_instance bench_instance.c)
  target_link_libraries(bench_instance PRIVATE parex_static)
  target_include_directories(bench_instance PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(bench_instance PRIVATE ${PX_C_WARNINGS} -O2)
endif()
