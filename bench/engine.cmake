# Engine per-op overhead against libgomp tasks with depend clauses and StarPU on the same
# DAGs, in the same run (bench/RESULTS.md, ## Engine).
# Run: build-*/bench/bench_engine [--ops 200000] [--rs-ops 50000] [--reps 5] [--workers 2]
pkg_check_modules(STARPU IMPORTED_TARGET starpu-1.3)
if(OpenMP_C_FOUND AND STARPU_FOUND)
  add_executable(bench_engine bench_engine.c)
  target_link_libraries(bench_engine PRIVATE parex OpenMP::OpenMP_C PkgConfig::STARPU)
  target_compile_options(bench_engine PRIVATE ${PX_C_WARNINGS} -O2 -Wno-unused-variable
                         -Wno-unused-but-set-variable)
else()
  message(STATUS "parex: OpenMP or StarPU (starpu-1.3) missing, bench_engine not built")
endif()
