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
                  ${PX_CG_DIR}/cg_dd.c
                  THREADS 1 2 LABELS concurrency TEAM_CONCURRENCY ENV ${PX_CG_ENV} TIMEOUT 300)
target_include_directories(check_cg PRIVATE ${PX_CG_DIR})
if(PX_BUILD_EXAMPLES)
  add_dependencies(check_cg parex-cg)
endif()

# Distributed parex-cg (mpirun -np P; examples/cg/dcg.c and partition.c): check_dcg runs the
# binary under mpirun with 1-4 ranks x 1 or 2 threads per rank and compares each run
# with the same problem on one process. Ranks beyond the 2 cores of CI are oversubscribed on
# purpose. Its "engine" tcase (graph and push, the pipelined CG, sampled clocks, a rank's
# failure reaching the others) is what the other engine kinds run, and all that the sanitizer
# builds run (2 ranks x 2 threads), with Open MPI's own leaks and races
# suppressed (px_mpi_test_env): the "distributed" tcase takes about 25 s a run
# uninstrumented, the "engine" one 17 s (40-60 s under a sanitizer).
if(PX_HAVE_MPI AND PX_BUILD_EXAMPLES)
  add_executable(check_dcg check_dcg.c)
  target_link_libraries(check_dcg PRIVATE px_test_support m)
  add_dependencies(check_dcg parex-cg)
  # dcg_fail_rank: an MPI program whose last rank fails alone inside dcg_solve (a truncated
  # halo message); check_dcg runs it under mpirun and expects MPI_Abort, not a hang.
  add_executable(dcg_fail_rank dcg_fail_rank.c $<TARGET_OBJECTS:parex_cg_obj>
                 $<TARGET_OBJECTS:parex_dcg_obj>)
  target_link_libraries(dcg_fail_rank PRIVATE Parex::parex parex_cg_partition m)
  target_compile_options(dcg_fail_rank PRIVATE ${PX_C_WARNINGS})
  if(PX_HAVE_CUDA)
    set_target_properties(dcg_fail_rank PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  endif()
  add_dependencies(check_dcg dcg_fail_rank)
  # odls_base_sigkill_timeout 0: when a rank exits non-zero (the usage errors, --max-iters,
  # the failures these tests provoke) Open MPI's mpirun otherwise waits 1 s before it kills
  # the job's other ranks, even ones already gone: a second or two of every such run, half of
  # the suite's time.
  set(_px_dcg_env PX_CG_BIN=$<TARGET_FILE:parex-cg> PX_DCG_FAIL_BIN=$<TARGET_FILE:dcg_fail_rank>
      PX_MPIRUN=${MPIEXEC_EXECUTABLE} PX_CG_MATRICES=${PX_CG_MATRICES} PX_DEFAULT_SPACE=threads
      OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_odls_base_sigkill_timeout=0
      CK_TIMEOUT_MULTIPLIER=${PX_TEST_TIMEOUT_MULT})
  # check_dcg.c under a sanitizer: one clock-sampling variant of four. The one configuration
  # (2 x 2) runs no usage error (checks_usage: one-thread ranks).
  if(NOT PX_SANITIZE STREQUAL "none")
    list(APPEND _px_dcg_env PX_DCG_SANITIZER=1)
  endif()
  # px_dcg_test(<name> <ranks> <threads> <labels> <timeout> [VAR=value...])
  function(px_dcg_test name np t labels timeout)
    add_test(NAME ${name} COMMAND check_dcg)
    # COST: ctest -j starts the longest tests first on a fresh tree (no timings recorded yet),
    # so that none of these starts last and leaves the other core idle (CI time, session 26).
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout} COST 40
      ENVIRONMENT "PX_DCG_NP=${np};PX_NUM_THREADS=${t};${_px_dcg_env};${ARGN}")
    px_mpi_test_env(${name})
  endfunction()
  if(NOT PX_SANITIZE STREQUAL "none")
    # Two-thread ranks: the engine's workers beside the waiter and the MPI progress thread.
    # (TSan also ran 3 one-thread ranks until session 27, 29 s of CI's test time: the waiter
    # holding the lanes and MPI progress is what check_mpi's and parex-heat's one-thread runs
    # on 1-4 ranks and check_graph_mpi's oversubscribed ones race-check.)
    px_dcg_test(check_dcg_engine_np2_t2 2 2 "mpi;examples;concurrency" 600 CK_RUN_CASE=engine)
  else()
    # Every tcase on 2 ranks of one thread; 4 of two (8 threads on CI's 2 cores) all but the
    # "engine" one, whose paths the 2-rank runs of every engine kind take, and the pipelined
    # CG's "numerics". (1 x 2 and 4 x 1 ran until session 25: each added a minute of CI and
    # nothing the others lack.)
    px_dcg_test(check_dcg_np2_t1 2 1 "mpi;examples" 180)
    px_dcg_test(check_dcg_np4_t2 4 2 "mpi;examples" 180 "CK_EXCLUDE_TAGS=engine numerics")
    # One rank: the "grid" tcase (a partition of one part, a rank without neighbours); the
    # solver's variants there are the code the runs above take, less the messages. 2 ranks of
    # two threads: the "engine" tcase, as the other engine kinds below (its
    # "distributed" tcase ran the 4 x 2 configuration's two-thread ranks again). Alone on this
    # VM, 1 x 1, 2 x 2 and 4 x 2 took 15.7, 18.0 and 29.8 s with every tcase; 2.7, 6.7 and 20.4
    # s so (CI time, session 27).
    px_dcg_test(check_dcg_np1_t1 1 1 "mpi;examples" 180 CK_RUN_CASE=grid)
    px_dcg_test(check_dcg_np2_t2 2 2 "mpi;examples" 180 CK_RUN_CASE=engine)
    # Three ranks: a 3x1x1 process grid, whose middle rank has two neighbours, and METIS's
    # three parts: the "grid" tcase, what depends on the split (the solver's variants run the
    # same code on 2 and 4 ranks; each run is mostly mpirun's start-up: CI time, session 26).
    px_dcg_test(check_dcg_np3_t1 3 1 "mpi;examples" 180 CK_RUN_CASE=grid)
    # The other engine kinds (naive: ops run on their pusher or the MPI progress thread).
    foreach(kind naive pooled)
      px_dcg_test(check_dcg_np2_t2_${kind} 2 2 "mpi;examples" 180 PX_ENGINE=${kind}
                  CK_RUN_CASE=engine)
    endforeach()
    # 4 unbound ranks x 2 threads on the 2-core CI (core/oversub.h): detected, bounded in time.
    add_test(NAME check_dcg_oversub_np4_t2
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/dcg_oversub.sh ${MPIEXEC_EXECUTABLE}
                     $<TARGET_FILE:parex-cg>)
    set_tests_properties(check_dcg_oversub_np4_t2 PROPERTIES LABELS "mpi;examples" TIMEOUT 90
      ENVIRONMENT "PX_NUM_THREADS=2;PX_LOG_LEVEL=info;OMPI_MCA_rmaps_base_oversubscribe=1")
  endif()
endif()
# The partition and halo maps themselves (examples/cg/partition.c; bench/ uses them too): a
# plain MPI program, as check_mpi, on 1-4 ranks; also under the sanitizers (px_mpi_test_env).
if(PX_HAVE_MPI AND PX_BUILD_EXAMPLES)
  add_executable(check_partition check_partition.c)
  target_link_libraries(check_partition PRIVATE parex_cg_partition)
  target_compile_options(check_partition PRIVATE ${PX_C_WARNINGS})
  foreach(np 1 2 3 4)
    add_test(NAME check_partition_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe
                     ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:check_partition>)
    set_tests_properties(check_partition_np${np} PROPERTIES LABELS "mpi;examples" TIMEOUT 60
      ENVIRONMENT "OMPI_MCA_rmaps_base_oversubscribe=1"
      PASS_REGULAR_EXPRESSION "check_partition: ${np} ranks, 0 failed checks")
    px_mpi_test_env(check_partition_np${np})
  endforeach()
endif()
