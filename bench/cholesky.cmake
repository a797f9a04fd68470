# Tiled Cholesky on the engine vs OpenBLAS LAPACKE_dpotrf (and StarPU via bench_cholesky.sh).
include(${PROJECT_SOURCE_DIR}/examples/cholesky/blas.cmake)
if(PXCHOL_BLAS_FOUND)
  add_executable(bench_cholesky bench_cholesky.c ${PXCHOL_SOURCES})
  target_include_directories(bench_cholesky PRIVATE ${PXCHOL_INCLUDE_DIRS})
  target_link_libraries(bench_cholesky PRIVATE parex PkgConfig::PXCHOL_BLAS m)
  target_compile_options(bench_cholesky PRIVATE ${PX_C_WARNINGS} -O2)
endif()
# The same DAG and tile kernels on StarPU (libstarpu-dev), the like-for-like runtime baseline.
pkg_check_modules(PXCHOL_STARPU QUIET IMPORTED_TARGET starpu-1.3)
if(PXCHOL_BLAS_FOUND AND PXCHOL_STARPU_FOUND)
  add_executable(bench_cholesky_starpu bench_cholesky_starpu.c ${PXCHOL_SOURCES})
  target_include_directories(bench_cholesky_starpu PRIVATE ${PXCHOL_INCLUDE_DIRS})
  target_link_libraries(bench_cholesky_starpu PRIVATE parex PkgConfig::PXCHOL_BLAS
                        PkgConfig::PXCHOL_STARPU m)
  target_compile_options(bench_cholesky_starpu PRIVATE ${PX_C_WARNINGS} -O2)
endif()
