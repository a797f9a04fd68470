#!/bin/sh
# tests/consumer/run.sh BUILD_DIR WORK_DIR
# Install the parex build in BUILD_DIR into WORK_DIR/prefix, then build this consumer project
# against it twice - with find_package(Parex) (shared and static) and with pkg-config - and run
# every binary. Registered as the ctest check_consumer (LABELS install).
set -eu
build=${1:?usage: run.sh BUILD_DIR WORK_DIR}
work=${2:?usage: run.sh BUILD_DIR WORK_DIR}
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
echo "== find_package(Parex)"
# shellcheck disable=SC2086
cmake -S "$here" -B "$work/cmake" $gen -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    >"$work/configure.log" 2>&1 || {
    cat "$work/configure.log"
    exit 1
}
cmake --build "$work/cmake" -j 2
"$work/cmake/consumer" --px-num-threads=2
"$work/cmake/consumer_static"

echo "== pkg-config parex"
pcdir=$(dirname "$(find "$prefix" -name parex.pc | head -n 1)")
[ -n "$pcdir" ] || { echo "run.sh: no parex.pc under $prefix" >&2; exit 1; }
PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
echo "pkg-config --cflags --libs parex: $(pkg-config --cflags --libs parex)"
make -s -C "$here" OUT="$work"
"$work/consumer_pc"
echo "== consumer: all builds ran"
