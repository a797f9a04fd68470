# Default CPU workers of the per_device engine: pipelines of sync ops, of kernel ops on the
# threads space, and mixed, with 1, 2, 4 workers (issue 17, bench/RESULTS.md ## Engine workers).
# Run: build-*/bench/bench_pipeline [--pipelines 4] [--stages 16] [--stage-us 200] [--reps 5]
add_executable(bench_pipeline bench_pipeline.c)
target_link_libraries(bench_pipeline PRIVATE parex)
target_compile_options(bench_pipeline PRIVATE ${PX_C_WARNINGS} -O2)
