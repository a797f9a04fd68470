# Host f64 atomic add: CAS loop (px_atomic_add_f64) vs C11 _Atomic double += (issue 14). GCC's
# floating `_Atomic +=` calls libatomic (__atomic_feraiseexcept), hence -latomic here only.
add_executable(bench_atomic bench_atomic.c)
target_link_libraries(bench_atomic PRIVATE parex Threads::Threads atomic)
target_compile_options(bench_atomic PRIVATE -O3)
