# Counter-based random numbers (issue 14): uniform doubles per second, parex's px_rng in a
# PX_REDUCE vs Random123's Philox called from an OpenMP loop (the same generator) and
# Kokkos::Random_XorShift64_Pool (bench/kokkos/bench_rng_kokkos.cpp, built with the other
# Kokkos contenders by the external projects of bench/mdrange.cmake when Kokkos is installed).
# Run: bench/run_rng.sh BUILD_DIR [ROUNDS]   (one contender per process, order alternated)
if(OpenMP_C_FOUND)
  add_executable(bench_rng bench_rng.c)
  target_link_libraries(bench_rng PRIVATE parex OpenMP::OpenMP_C m)
  target_compile_options(bench_rng PRIVATE ${PX_C_WARNINGS} -O3 -march=native)
endif()
