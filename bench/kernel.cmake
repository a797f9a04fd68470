# Single-source macro path against host function kernels (issue: core, PX_FOR vs _fn).
add_executable(bench_kernel bench_kernel.c)
target_link_libraries(bench_kernel PRIVATE parex)
target_compile_options(bench_kernel PRIVATE -O3 -march=native)
