#!/usr/bin/env bash
# scripts/test.sh - install what is missing, then build and run every test of parex:
#
#   1. the normal build (RelWithDebInfo, Cuda when nvcc is found, examples and benchmarks):
#      every ctest, including the install + downstream-consumer test (label "install");
#   2. an ASan+UBSan build at -O1 (no Cuda, no benchmarks): every suite except "install";
#   3. a TSan build (no Cuda, no benchmarks): the suites labelled "concurrency".
# In both sanitizer builds a Check suite runs its tests in one process, not one forked child
# each, except the suites that need a fresh process per test (tests/CMakeLists.txt,
# px_add_check_test's FORK_EACH_TEST).
# Both sanitizer builds have MPI: the MPI programs run under mpirun there too, Open MPI's own
# leaks and races suppressed (tests/sanitizers/, tests/CMakeLists.txt px_mpi_test_env).
#
# The normal build's ctest runs last so that the output ends with its summary line. Exits
# non-zero when any build or test fails. With CI=true (as .ci/run is run), warnings are errors.
# Environment: PX_BUILD_ROOT (default: build) holds the three build trees; PX_JOBS (default 2)
# the build and ctest parallelism; PX_TEST_CMAKE_ARGS, extra arguments for every configure (e.g.
# "-DPX_BUILD_EXAMPLES=OFF" to check the library alone).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=${PX_BUILD_ROOT:-build}
jobs=${PX_JOBS:-2}
t_start=$(date +%s)
declare -a timings=()
declare -a failed=()

phase_time() { # name start
    timings+=("$(printf '%-28s %4ds' "$1" $(($(date +%s) - $2)))")
}

bash scripts/setup.sh

# Every MPI test runs its ranks on this one node, where Open MPI selects pml ob1 (shared memory,
# vader) anyway; naming it skips probing the UCX and OFI/PSM components in every MPI_Init:
# 0.44 -> 0.22 s an mpirun of 2 ranks, check_dcg_np2_t1 57 -> 39 s (bench/RESULTS.md, session
# 24). A value set by the caller wins.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}

gen=()
if command -v ninja >/dev/null 2>&1; then
    gen=(-G Ninja)
fi
common=(-DPX_BUILD_TESTS=ON)
extra=()
if [[ -n "${PX_TEST_CMAKE_ARGS:-}" ]]; then
    read -r -a extra <<<"$PX_TEST_CMAKE_ARGS"
fi
if [[ "${CI:-}" == "true" ]]; then
    common+=(-DPX_WERROR=ON)
fi
nvcc=
if command -v nvcc >/dev/null 2>&1; then
    nvcc=$(command -v nvcc)
elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc=/usr/local/cuda/bin/nvcc
fi
if [[ -n "$nvcc" ]]; then
    # Device code for sm_90 only (the lent H100's; the library's default adds sm_80 SASS and
    # sm_90 PTX): nvcc compiles each .cu once instead of twice (bench/RESULTS.md, session 25).
    # A caller's PX_TEST_CMAKE_ARGS can set PX_CUDA_ARCHITECTURES back.
    cuda=(-DPX_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DPX_CUDA_ARCHITECTURES=90-real)
    echo "test: nvcc found at $nvcc: the normal build includes the Cuda space"
else
    cuda=(-DPX_ENABLE_CUDA=OFF)
    echo "test: no nvcc: the normal build has no Cuda space"
fi

configure_and_build() { # dir cmake-args...
    local dir=$1
    shift
    local t=$(date +%s)
    echo "==== configure $dir"
    cmake -S . -B "$dir" "${gen[@]}" "${common[@]}" "$@" "${extra[@]}" >"$dir.configure.log" 2>&1 || {
        cat "$dir.configure.log"
        echo "test: configuring $dir failed" >&2
        exit 1
    }
    echo "==== build $dir"
    cmake --build "$dir" -j "$jobs" || {
        echo "test: building $dir failed" >&2
        exit 1
    }
    phase_time "build $(basename "$dir")" "$t"
}

run_ctest() { # name dir ctest-args...
    local name=$1 dir=$2
    shift 2
    local t=$(date +%s)
    echo "==== ctest $name"
    if ! (cd "$dir" && "${ctest_prefix[@]}" ctest --output-on-failure --no-tests=error -j "$jobs" "$@"); then
        failed+=("$name")
    fi
    phase_time "ctest $name" "$t"
}

mkdir -p "$root"
ctest_prefix=()

# ---- 1. normal build (tests run last, below) -------------------------------------------------
configure_and_build "$root/release" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cuda[@]}"

# ---- 2. ASan + UBSan --------------------------------------------------------------------------
# Cuda tests are skipped under sanitizers (the CUDA runtime is uninstrumented, STYLE.md 9);
# benchmarks are not tests. -O1, as AddressSanitizer's documentation advises for a usable
# speed: the compute-bound suites run 1.3-3.3x faster than at -O0 (check_cg, check_mmio,
# check_rng) and the build takes no longer (bench/RESULTS.md, session 26). TSan stays at -O0:
# -O1 gained nothing there.
configure_and_build "$root/asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
    -DPX_SANITIZE=asan -DPX_ENABLE_CUDA=OFF -DPX_BUILD_BENCH=OFF -DPX_BUILD_EXAMPLES=ON
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_ctest asan "$root/asan" -LE install

# ---- 3. TSan: the concurrency suites ---------------------------------------------------------
# Examples: parex-cg's distributed solve is what check_dcg's "engine" tcase runs under mpirun.
configure_and_build "$root/tsan" -DCMAKE_BUILD_TYPE=Debug -DPX_SANITIZE=tsan \
    -DPX_ENABLE_CUDA=OFF -DPX_BUILD_BENCH=OFF -DPX_BUILD_EXAMPLES=ON
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
# Some kernels map memory where TSan's shadow should go ("FATAL: ThreadSanitizer: unexpected
# memory mapping"); running without address-space randomization avoids it.
probe_dir=$(mktemp -d)
printf 'int main(void) { return 0; }\n' >"$probe_dir/p.c"
if cc -fsanitize=thread "$probe_dir/p.c" -o "$probe_dir/p" 2>/dev/null &&
    ! "$probe_dir/p" >/dev/null 2>&1 && setarch "$(uname -m)" -R "$probe_dir/p" >/dev/null 2>&1; then
    echo "test: TSan needs ASLR off on this kernel: running under setarch -R"
    ctest_prefix=(setarch "$(uname -m)" -R)
fi
rm -rf "$probe_dir"
run_ctest tsan "$root/tsan" -L concurrency
ctest_prefix=()
unset ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS

# ---- summary, then the normal build's tests ---------------------------------------------------
echo "==== timings so far"
printf '  %s\n' "${timings[@]}"
if ((${#failed[@]})); then
    echo "test: FAILED: ${failed[*]}"
fi
echo "test: $(($(date +%s) - t_start))s before the normal ctest; it runs last:"
run_ctest release "$root/release"
if ((${#failed[@]})); then
    exit 1
fi
exit 0
