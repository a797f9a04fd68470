# Distributed CG (issue 15): the bulk-synchronous MPI+OpenMP CG that parex's distributed
# parex-cg is measured against, and the MPI ping-pong / allreduce latencies behind the
# performance model (bench/cg_model.py). Run: bench/run_dcg.sh BUILD_DIR (bench/RESULTS.md).
if(PX_ENABLE_MPI)
  find_package(MPI COMPONENTS C)
endif()
if(PX_ENABLE_MPI AND MPI_C_FOUND AND OpenMP_C_FOUND)
  # The very partition parex-cg uses (examples/cg/partition.c, target parex_cg_partition,
  # with METIS when found); built here from the same source when the examples are off.
  add_executable(bench_cg_bsp bench_cg_bsp.c ${PROJECT_SOURCE_DIR}/examples/cg/mmio.c)
  target_include_directories(bench_cg_bsp PRIVATE ${PROJECT_SOURCE_DIR}/examples/cg)
  target_link_libraries(bench_cg_bsp PRIVATE MPI::MPI_C OpenMP::OpenMP_C m)
  if(TARGET parex_cg_partition)
    target_link_libraries(bench_cg_bsp PRIVATE parex_cg_partition)
  else()
    target_sources(bench_cg_bsp PRIVATE ${PROJECT_SOURCE_DIR}/examples/cg/partition.c)
    find_path(PX_BENCH_METIS_INCLUDE_DIR metis.h)
    find_library(PX_BENCH_METIS_LIBRARY metis)
    if(PX_BENCH_METIS_INCLUDE_DIR AND PX_BENCH_METIS_LIBRARY)
      target_include_directories(bench_cg_bsp PRIVATE ${PX_BENCH_METIS_INCLUDE_DIR})
      target_link_libraries(bench_cg_bsp PRIVATE ${PX_BENCH_METIS_LIBRARY})
      target_compile_definitions(bench_cg_bsp PRIVATE CGP_HAVE_METIS=1)
    endif()
  endif()
  target_compile_options(bench_cg_bsp PRIVATE ${PX_C_WARNINGS} -Wconversion)

  # The engine's own cost per message and per host round trip (the model's engine term):
  # needs parex built with MPI ops.
  if(PX_HAVE_MPI)
    add_executable(bench_engine_pingpong bench_engine_pingpong.c)
    target_link_libraries(bench_engine_pingpong PRIVATE parex MPI::MPI_C)
    target_compile_options(bench_engine_pingpong PRIVATE ${PX_C_WARNINGS} -Wconversion)
  endif()

  add_executable(bench_pingpong bench_pingpong.c)
  target_link_libraries(bench_pingpong PRIVATE MPI::MPI_C m)
  target_compile_options(bench_pingpong PRIVATE ${PX_C_WARNINGS} -Wconversion)

  # Correctness of the baseline (not its speed): same iterations on P ranks as on one rank of
  # the same global grid, 2..8 ranks (oversubscribed on purpose; CI runs as root).
  if(PX_BUILD_TESTS)
    add_test(NAME check_dcg_bsp
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_dcg.sh $<TARGET_FILE:bench_cg_bsp>
                     $<TARGET_FILE:bench_pingpong> ${MPIEXEC_EXECUTABLE} --allow-run-as-root
                     --oversubscribe --bind-to none ${MPIEXEC_NUMPROC_FLAG})
    set_tests_properties(check_dcg_bsp PROPERTIES LABELS "mpi;bench" TIMEOUT 300 COST 20
                         ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_odls_base_sigkill_timeout=0;DCG_MATRIX=${PROJECT_SOURCE_DIR}/../shared/data/matrices/bcsstk16.mtx")
    if(TARGET bench_engine_pingpong)
      set_property(TEST check_dcg_bsp APPEND PROPERTY ENVIRONMENT
                   "DCG_ENGINE_PINGPONG=$<TARGET_FILE:bench_engine_pingpong>")
    endif()
  endif()
else()
  message(STATUS "parex bench: MPI off or not found, or no OpenMP: bench_cg_bsp and bench_pingpong are not built")
endif()
