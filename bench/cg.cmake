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

# Where the distributed CG's interior pieces start (bench/RESULTS.md, session 16): the
# compensated SpMV of examples/cg in one call and in pieces. It links parex-cg's own kernel
# objects, compiled as parex-cg's are (by nvcc when the Cuda space is built).
# Run: PX_NUM_THREADS=1 taskset -c 0 build-*/bench/bench_cg_pieces --grid 48 --rounds 300
if(PX_BUILD_EXAMPLES)
  add_executable(bench_cg_pieces bench_cg_pieces.c $<TARGET_OBJECTS:parex_cg_obj>)
  target_include_directories(bench_cg_pieces PRIVATE ${PROJECT_SOURCE_DIR}/examples/cg)
  target_link_libraries(bench_cg_pieces PRIVATE Parex::parex m)
  target_compile_options(bench_cg_pieces PRIVATE ${PX_C_WARNINGS})
  if(PX_HAVE_CUDA)
    set_target_properties(bench_cg_pieces PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  endif()
endif()

# Whether glibc's placement of a CSR matrix (brk heap, one mmap an array, the heap's layout in
# one mmap) changes the SpMV loop's speed (bench/RESULTS.md, session 20). Glibc and Linux only.
# Run: taskset -c 0 build-*/bench/spmv_placement [N [ROUNDS [REPS]]]   (root: page frames too)
include(CheckSymbolExists)
check_symbol_exists(M_MMAP_THRESHOLD "malloc.h" PX_HAVE_M_MMAP_THRESHOLD)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND PX_HAVE_M_MMAP_THRESHOLD)
  add_executable(spmv_placement spmv_placement.c)
  target_compile_options(spmv_placement PRIVATE ${PX_C_WARNINGS})
endif()
