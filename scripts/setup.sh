#!/bin/sh
# scripts/setup.sh - install the Debian 12 packages parex needs, only those that are missing.
# Run as root (or with sudo available). Safe to run again: with everything present it only
# checks. Used by scripts/demo.sh and scripts/test.sh.
set -eu

# Build tools, hwloc (Threads binding), Check (unit tests), OpenBLAS/LAPACKE (Cholesky tiles),
# OpenMPI (heat example), StarPU (Cholesky comparison in bench/), gnuplot (bench plots),
# jansson (JSON), python3 (scripts), Kokkos' own profiling C header (a test tool is compiled
# against Kokkos_Profiling_C_Interface.h to check the Kokkos Tools ABI), Random123 (header-only
# Philox generator behind parex/rng.h; installed parex.h users need it too), METIS (parex-cg
# --partition metis).
PACKAGES="build-essential cmake ninja-build pkg-config libhwloc-dev check libsubunit-dev \
libopenblas-dev liblapacke-dev libopenmpi-dev openmpi-bin libstarpu-dev starpu-examples \
gnuplot-nox libjansson-dev python3 libtrilinos-kokkos-dev librandom123-dev libmetis-dev"

missing=
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "setup: all $(echo $PACKAGES | wc -w) packages present"
    exit 0
fi

echo "setup: installing:$missing"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "setup: need root (or sudo) to install:$missing" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q </dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing </dev/null
echo "setup: done"
