# Locates OpenBLAS (CBLAS + LAPACK) and LAPACKE for the Cholesky example, its tests and its
# benchmark; included from each of those places, found once. Defines PkgConfig::PXCHOL_BLAS
# (global) and sets PXCHOL_BLAS_FOUND. The OpenBLAS library is linked directly (not the
# libblas.so.3 alternative) because the example calls openblas_set_num_threads.
if(NOT TARGET PkgConfig::PXCHOL_BLAS)
  pkg_check_modules(PXCHOL_BLAS QUIET IMPORTED_TARGET GLOBAL openblas lapacke)
endif()
if(TARGET PkgConfig::PXCHOL_BLAS)
  set(PXCHOL_BLAS_FOUND 1)
else()
  set(PXCHOL_BLAS_FOUND 0)
endif()
# Sources shared by parex-cholesky, check_cholesky and bench_cholesky (compiled into each, so
# every program links exactly one copy of parex, shared or static).
set(PXCHOL_SOURCES
    ${PROJECT_SOURCE_DIR}/examples/cholesky/chol.c
    ${PROJECT_SOURCE_DIR}/examples/cholesky/chol_cli.c
    ${PROJECT_SOURCE_DIR}/examples/cholesky/chol_repeat.c
    ${PROJECT_SOURCE_DIR}/examples/cg/mmio.c)
set(PXCHOL_INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/examples/cholesky ${PROJECT_SOURCE_DIR}/examples/cg)
