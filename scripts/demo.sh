#!/usr/bin/env bash
# scripts/demo.sh - install what is missing, build parex (Release, Cuda when nvcc is found) and
# run the main demo: parex-cg, Conjugate Gradient on the HPCG problem (27-point stencil, grid
# 64^3) with a progress line every few seconds. Extra arguments go to parex-cg, e.g.
#   bash scripts/demo.sh --matrix ../shared/data/matrices/bcsstk16.mtx --precond jacobi
# Environment: PX_BUILD_ROOT (default: build); PX_JOBS (default 2); PX_DEMO_CMAKE_ARGS, extra
# configure arguments (e.g. "-DPX_ENABLE_CUDA=OFF").
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${PX_BUILD_ROOT:-build}
jobs=${PX_JOBS:-2}
dir=$root/demo

bash scripts/setup.sh

gen=()
if command -v ninja >/dev/null 2>&1; then
    gen=(-G Ninja)
fi
cuda=(-DPX_ENABLE_CUDA=OFF)
if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
    cuda=(-DPX_ENABLE_CUDA=AUTO)
fi
extra=()
if [[ -n "${PX_DEMO_CMAKE_ARGS:-}" ]]; then
    read -r -a extra <<<"$PX_DEMO_CMAKE_ARGS"
fi
mkdir -p "$root"
echo "==== configure $dir (Release)"
cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "${cuda[@]}" -DPX_BUILD_TESTS=OFF \
    -DPX_BUILD_BENCH=OFF -DPX_BUILD_EXAMPLES=ON "${extra[@]}" >"$dir.configure.log" 2>&1 || {
    cat "$dir.configure.log"
    exit 1
}
# The README's examples use these three (parex-heat only where MPI was found).
targets=(parex-cg parex-cholesky)
if cmake --build "$dir" --target help 2>/dev/null | grep -q 'parex-heat'; then
    targets+=(parex-heat)
fi
echo "==== build ${targets[*]}"
cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
cg=$(find "$dir" -name parex-cg -type f -perm -u+x | head -n 1)
echo "==== $cg $*"
exec "$cg" "$@"
