# Team launches (issue 14; bench/bench_team.c): sparse matrix-vector products (team per row
# block vs range per row vs OpenMP CSR) on bcsstk16 and the HPCG 64^3 matrix, and batched small
# dense matrix-vector products (one team each, scratch-resident) vs OpenMP.
# Run: BUILD/bench/bench_team --kernel spmv|batched [--matrix PATH | --grid 64] [--bs 8|16]
if(OpenMP_C_FOUND)
  add_executable(bench_team bench_team.c ${PROJECT_SOURCE_DIR}/examples/cg/mmio.c)
  target_include_directories(bench_team PRIVATE ${PROJECT_SOURCE_DIR}/examples/cg)
  target_link_libraries(bench_team PRIVATE parex OpenMP::OpenMP_C m)
  target_compile_options(bench_team PRIVATE ${PX_C_WARNINGS} -O3)
  target_compile_definitions(bench_team PRIVATE
    PX_TEAM_MATRICES="${PROJECT_SOURCE_DIR}/../shared/data/matrices")
endif()
