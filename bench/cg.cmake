# CG benchmark: parex-cg against a plain OpenMP CSR CG and STREAM triad (bench/RESULTS.md, ## CG).
# Run: build-*/bench/bench_cg [--threads 2] [--reps 3] [--grid 64] [--matrices DIR]
if(OpenMP_C_FOUND AND PX_BUILD_EXAMPLES)
  add_executable(bench_cg_omp bench_cg_omp.c ${PROJECT_SOURCE_DIR}/examples/cg/mmio.c)
  target_include_directories(bench_cg_omp PRIVATE ${PROJECT_SOURCE_DIR}/examples/cg)
  target_link_libraries(bench_cg_omp PRIVATE OpenMP::OpenMP_C m)
  target_compile_options(bench_cg_omp PRIVATE ${PX_C_WARNINGS})

  add_executable(bench_cg bench_cg.c)
  target_compile_options(bench_cg PRIVATE ${PX_C_WARNINGS})
  target_compile_definitions(bench_cg PRIVATE
    PX_CG_BIN="$<TARGET_FILE:parex-cg>"
    PX_CG_OMP_BIN="$<TARGET_FILE:bench_cg_omp>"
    PX_CG_MATRICES="${PROJECT_SOURCE_DIR}/../shared/data/matrices")
  target_link_libraries(bench_cg PRIVATE m)
  add_dependencies(bench_cg parex-cg bench_cg_omp)
endif()
