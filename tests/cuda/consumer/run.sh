#!/bin/sh
# tests/cuda/consumer/run.sh BUILD_DIR WORK_DIR NVCC
# Install the parex build in BUILD_DIR into WORK_DIR/prefix, build this .cu consumer against it
# with find_package(Parex) (shared and static library) and run both. Registered as the ctest
# check_cuda_consumer (LABELS install cuda).
set -eu
build=${1:?usage: run.sh BUILD_DIR WORK_DIR NVCC}
work=${2:?usage: run.sh BUILD_DIR WORK_DIR NVCC}
nvcc=${3:?usage: run.sh BUILD_DIR WORK_DIR NVCC}
here=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix

rm -rf "$work"
mkdir -p "$work"
echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || {
    cat "$work/install.log"
    exit 1
}
gen=
if command -v ninja >/dev/null 2>&1; then
    gen="-G Ninja"
fi
echo "== find_package(Parex) from a CUDA project"
# shellcheck disable=SC2086
cmake -S "$here" -B "$work/cmake" $gen -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$nvcc" >"$work/configure.log" 2>&1 || {
    cat "$work/configure.log"
    exit 1
}
cmake --build "$work/cmake" -j 2
"$work/cmake/cuda_consumer"
"$work/cmake/cuda_consumer_static"
echo "== cuda consumer: both builds ran"
