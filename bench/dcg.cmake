# Distributed CG (issue 15): the bulk-synchronous MPI+OpenMP CG that parex's distributed
# parex-cg is measured against, and the MPI ping-pong / allreduce latencies behind the
# performance model (bench/cg_model.py). Run: bench/run_dcg.sh BUILD_DIR (bench/RESULTS.md).
find_package(MPI COMPONENTS C)
if(MPI_C_FOUND AND OpenMP_C_FOUND)
  add_executable(bench_cg_bsp bench_cg_bsp.c)
  target_link_libraries(bench_cg_bsp PRIVATE MPI::MPI_C OpenMP::OpenMP_C m)
  target_compile_options(bench_cg_bsp PRIVATE ${PX_C_WARNINGS} -Wconversion)

  add_executable(bench_pingpong bench_pingpong.c)
  target_link_libraries(bench_pingpong PRIVATE MPI::MPI_C m)
  target_compile_options(bench_pingpong PRIVATE ${PX_C_WARNINGS} -Wconversion)
else()
  message(STATUS "parex bench: MPI or OpenMP not found, bench_cg_bsp and bench_pingpong are not built")
endif()
