# Check suites for examples/cg: the Matrix Market reader and the CG solver / parex-cg CLI.
# The SuiteSparse matrices live beside the clone (../shared/data/matrices); the tests skip
# them with a message when the folder is absent. They are never copied into the project.
set(PX_CG_DIR ${PROJECT_SOURCE_DIR}/examples/cg)
set(PX_CG_MATRICES ${PROJECT_SOURCE_DIR}/../shared/data/matrices)

px_add_check_test(check_mmio SOURCES check_mmio.c ${PX_CG_DIR}/mmio.c
                  ENV PX_CG_MATRICES=${PX_CG_MATRICES} TIMEOUT 120)
target_include_directories(check_mmio PRIVATE ${PX_CG_DIR})

# The CLI half of check_cg runs the parex-cg binary; without examples it skips that half.
set(PX_CG_ENV PX_CG_MATRICES=${PX_CG_MATRICES})
if(PX_BUILD_EXAMPLES)
  list(APPEND PX_CG_ENV PX_CG_BIN=$<TARGET_FILE:parex-cg>)
endif()
px_add_check_test(check_cg SOURCES check_cg.c ${PX_CG_DIR}/mmio.c ${PX_CG_DIR}/cg.c
                  THREADS 1 2 LABELS concurrency ENV ${PX_CG_ENV} TIMEOUT 300)
target_include_directories(check_cg PRIVATE ${PX_CG_DIR})
if(PX_BUILD_EXAMPLES)
  add_dependencies(check_cg parex-cg)
endif()
