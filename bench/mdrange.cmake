# Multi-dimensional loops against OpenMP and Kokkos MDRange (issue 13; bench/README.md).
# Run: bench/run_mdrange.sh BUILD_DIR [ROUNDS]   (one contender per process, order alternated)
#
# bench_mdrange (C): OpenMP, parex's hand-flattened 1-D launch and, once the library has the
# mdrange API (px_parallel_for_md_fn in include/), parex's MDRange launch (PX_HAVE_MDRANGE).
if(OpenMP_C_FOUND)
  add_executable(bench_mdrange bench_mdrange.c)
  target_link_libraries(bench_mdrange PRIVATE parex OpenMP::OpenMP_C m)
  target_compile_options(bench_mdrange PRIVATE ${PX_C_WARNINGS} -O3 -march=native)
  file(GLOB_RECURSE _px_md_headers ${PROJECT_SOURCE_DIR}/include/*.h)
  set(_px_md_api OFF)
  foreach(h IN LISTS _px_md_headers)
    file(STRINGS ${h} _px_md_hit REGEX "px_parallel_for_md_fn")
    if(_px_md_hit)
      set(_px_md_api ON)
    endif()
  endforeach()
  if(_px_md_api)
    target_compile_definitions(bench_mdrange PRIVATE PX_HAVE_MDRANGE=1)
  endif()
  message(STATUS "parex: bench_mdrange built, parex MDRange contender: ${_px_md_api}")
endif()

# bench_mdrange_kokkos (C++, bench/kokkos/): one build per Kokkos backend, each its own CMake
# project (find_package(Kokkos) holds one Kokkos per project), built as external projects into
# BUILD/bench/kokkos-threads/ and BUILD/bench/kokkos-openmp/. Only when that Kokkos is installed
# (bench/build_peers.sh installs both from ../shared/peers); CI needs no Kokkos.
set(PX_BENCH_KOKKOS_THREADS_DIR "/opt/kokkos-threads" CACHE PATH
    "Kokkos 4.6.99 install with Kokkos::Threads for bench_mdrange_kokkos (skipped if absent)")
set(PX_BENCH_KOKKOS_OPENMP_DIR "/opt/kokkos-openmp" CACHE PATH
    "Kokkos 4.6.99 install with Kokkos::OpenMP for bench_mdrange_kokkos (skipped if absent)")
include(ExternalProject)
foreach(_px_kk_backend threads openmp)
  string(TOUPPER ${_px_kk_backend} _px_kk_up)
  set(_px_kk_dir "${PX_BENCH_KOKKOS_${_px_kk_up}_DIR}")
  if(_px_kk_dir AND (EXISTS "${_px_kk_dir}/lib/cmake/Kokkos/KokkosConfig.cmake"
                     OR EXISTS "${_px_kk_dir}/lib64/cmake/Kokkos/KokkosConfig.cmake"))
    ExternalProject_Add(bench_mdrange_kokkos_${_px_kk_backend}
      SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/kokkos
      BINARY_DIR ${CMAKE_CURRENT_BINARY_DIR}/kokkos-${_px_kk_backend}
      CMAKE_ARGS -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${_px_kk_dir}
                 -DPX_BENCH_UTIL_DIR=${CMAKE_CURRENT_SOURCE_DIR}
      BUILD_ALWAYS ON
      INSTALL_COMMAND "")
    message(STATUS "parex: bench_mdrange_kokkos (Kokkos::${_px_kk_backend}) from ${_px_kk_dir}")
  else()
    message(STATUS "parex: no Kokkos at PX_BENCH_KOKKOS_${_px_kk_up}_DIR='${_px_kk_dir}', "
                   "bench_mdrange_kokkos (${_px_kk_backend}) not built")
  endif()
endforeach()
