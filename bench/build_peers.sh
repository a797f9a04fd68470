#!/usr/bin/env bash
# bench/build_peers.sh - install the Kokkos peers of the mdrange benchmarks (issue 13) from the
# sources in ../shared/peers, each only if it is not installed yet, and print the CMake options
# that point the parex build at them.
#
# Usage (from the repository root): bench/build_peers.sh [PREFIX_ROOT]
#   PREFIX_ROOT  default /opt: Kokkos::Threads goes to PREFIX_ROOT/kokkos-threads, Kokkos::OpenMP
#                to PREFIX_ROOT/kokkos-openmp (bench/mdrange.cmake looks there by default)
#   PEERS=DIR    the peers directory (default: ../shared/peers beside the repository)
# Each backend takes a few minutes with 2 cores (../shared/peers/build-kokkos.sh). Then:
#   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release \
#         -DPX_BENCH_KOKKOS_THREADS_DIR=... -DPX_BENCH_KOKKOS_OPENMP_DIR=...
#   cmake --build build-rel && bench/run_mdrange.sh build-rel
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix_root=${1:-/opt}
peers=${PEERS:-$root/../shared/peers}
[ -x "$peers/build-kokkos.sh" ] || [ -f "$peers/build-kokkos.sh" ] \
  || { echo "build_peers.sh: no $peers/build-kokkos.sh (set PEERS=DIR)" >&2; exit 1; }
mkdir -p "$prefix_root"
prefix_root=$(cd "$prefix_root" && pwd)
for backend in threads openmp; do
  prefix=$prefix_root/kokkos-$backend
  if [ -f "$prefix/lib/cmake/Kokkos/KokkosConfig.cmake" ] \
     || [ -f "$prefix/lib64/cmake/Kokkos/KokkosConfig.cmake" ]; then
    echo "build_peers.sh: Kokkos ($backend) already installed in $prefix"
  else
    echo "build_peers.sh: building Kokkos ($backend) into $prefix"
    bash "$peers/build-kokkos.sh" "$backend" "$prefix"
  fi
done
echo "build_peers.sh: configure parex with" \
     "-DPX_BENCH_KOKKOS_THREADS_DIR=$prefix_root/kokkos-threads" \
     "-DPX_BENCH_KOKKOS_OPENMP_DIR=$prefix_root/kokkos-openmp"
