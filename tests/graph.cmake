# Check suite of engine graphs (core/engine/graph*.c, parex/graph.h): a launch equals pushing the
# recorded ops one by one (randomized DAG of 10,000 ops over 64 Vars on 1, 2 and 3 CPU workers),
# 1,000 launches interleaved with pushes, failures, misuse statuses and deferred destroy. Runs
# once per engine kind and Threads size, at full size under the sanitizers too (about 4 s per
# run under TSan); PX_TEST_GRAPH_OPS / PX_TEST_GRAPH_LAUNCHES scale it down by hand.
px_add_check_test(check_graph SOURCES check_graph.c check_engine_common.c
                  ENGINES naive pooled per_device THREADS 1 3 LABELS concurrency
                  ENV PX_DEBUG_CHECK=1 TIMEOUT 300)
# MPI ops recorded in graphs (tests/check_graph_mpi.c, a plain MPI program like check_mpi.c):
# each launch posts its own requests; under mpirun with 2 and 3 ranks (oversubscribed on the
# 2-core CI), on the default and the naive engine. Built with MPI, also under the sanitizers
# (px_mpi_test_env, tests/CMakeLists.txt).
if(PX_HAVE_MPI)
  add_executable(check_graph_mpi check_graph_mpi.c)
  target_link_libraries(check_graph_mpi PRIVATE parex MPI::MPI_C)
  target_compile_options(check_graph_mpi PRIVATE ${PX_C_WARNINGS})
  target_compile_definitions(check_graph_mpi PRIVATE _DEFAULT_SOURCE)
  set(_px_graph_mpirun ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe
      ${MPIEXEC_NUMPROC_FLAG})
  foreach(np 2 3)
    add_test(NAME check_graph_mpi_np${np}
             COMMAND ${_px_graph_mpirun} ${np} $<TARGET_FILE:check_graph_mpi>)
    set_tests_properties(check_graph_mpi_np${np} PROPERTIES LABELS "mpi;concurrency" TIMEOUT 120
                         ENVIRONMENT "PX_NUM_THREADS=2;OMPI_MCA_rmaps_base_oversubscribe=1")
  endforeach()
  add_test(NAME check_graph_mpi_np2_naive
           COMMAND ${_px_graph_mpirun} 2 $<TARGET_FILE:check_graph_mpi>)
  set_tests_properties(check_graph_mpi_np2_naive PROPERTIES LABELS "mpi;concurrency" TIMEOUT 120
                       ENVIRONMENT "PX_NUM_THREADS=2;PX_ENGINE=naive;OMPI_MCA_rmaps_base_oversubscribe=1")
  px_mpi_test_env(check_graph_mpi_np2 check_graph_mpi_np3 check_graph_mpi_np2_naive)
endif()
