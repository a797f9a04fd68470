# FEM assembly, ~10^6 triangles: parex atomic / duplicated / colored / AUTO vs OpenMP atomic
# and Kokkos ScatterView (issue 14; bench/README.md).
# Run: bench/run_fem.sh BUILD_DIR [ROUNDS]   (one contender per process, order rotated)
#
# bench_fem (C) compiles examples/fem's mesh and assembly and examples/cg's matrix helpers
# into itself (as C, whatever the examples' build does), so it needs no example built.
if(OpenMP_C_FOUND)
  set(_px_fem_dir ${PROJECT_SOURCE_DIR}/examples/fem)
  add_executable(bench_fem bench_fem.c ${_px_fem_dir}/mesh.c ${_px_fem_dir}/fem.c
                 ${PROJECT_SOURCE_DIR}/examples/cg/cg.c)
  target_include_directories(bench_fem PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${_px_fem_dir}
                             ${PROJECT_SOURCE_DIR}/examples/cg)
  target_link_libraries(bench_fem PRIVATE parex OpenMP::OpenMP_C m)
  target_compile_options(bench_fem PRIVATE ${PX_C_WARNINGS} -O3 -march=native)
endif()
# bench_fem_kokkos (C++, Kokkos ScatterView) is built with bench/kokkos/ by bench/mdrange.cmake
# (one external project per Kokkos backend, next to bench_mdrange_kokkos).
