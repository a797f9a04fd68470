#!/bin/sh
# tests/consumer/run.sh BUILD_DIR WORK_DIR
# Install the parex build in BUILD_DIR into WORK_DIR/prefix, then build this consumer project
# against it twice - with find_package(Parex) (shared and static) and with pkg-config (shared and
# static) - and run every binary. Also checks the packaging: parex.pc's libdir and includedir are
# clean absolute paths under the install prefix (no `.`/`..` segments), `pkg-config --libs parex`
# has no CUDA runtime (it belongs in Libs.private: a host-only program does not link cudart), and
# no host-only binary linked against the shared library lists libcudart among its own NEEDED
# entries, and parex.pc's Cflags name the Random123 headers parex/rng.h includes. Registered as the ctest check_consumer (LABELS install).
set -eu
build=${1:?usage: run.sh BUILD_DIR WORK_DIR}
work=${2:?usage: run.sh BUILD_DIR WORK_DIR}
here=$(cd "$(dirname "$0")" && pwd)
fail() {
    echo "run.sh: FAIL: $*" >&2
    exit 1
}

# The binary $1 must not need libcudart itself (libparex.so may: that is its own dependency).
no_direct_cudart() {
    command -v readelf >/dev/null 2>&1 || fail "readelf (binutils) is needed to inspect $1"
    if readelf -d "$1" | grep NEEDED | grep -q cudart; then
        readelf -d "$1" | grep NEEDED >&2
        fail "$1 links libcudart directly, but it is a host-only program"
    fi
    echo "$(basename "$1"): no direct libcudart dependency"
}

rm -rf "$work"
mkdir -p "$work"
prefix=$(cd "$work" && pwd)/prefix # absolute and without . or .. segments, as parex.pc must say
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
no_direct_cudart "$work/cmake/consumer"

echo "== pkg-config parex"
pcdir=$(dirname "$(find "$prefix" -name parex.pc | head -n 1)")
[ -n "$pcdir" ] || fail "no parex.pc under $prefix"
PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
cuda=0
grep -q '^#define PX_HAVE_CUDA 1' "$prefix/include/parex/config.h" && cuda=1
for var in prefix libdir includedir; do
    val=$(pkg-config --variable=$var parex)
    echo "pkg-config --variable=$var parex: $val"
    case $val in
    "$prefix" | "$prefix"/*) ;;
    *) fail "$var '$val' is not under the install prefix $prefix" ;;
    esac
    case $val/ in
    */../* | */./* | *//*) fail "$var '$val' is not a normalised path" ;;
    esac
done
[ -f "$(pkg-config --variable=libdir parex)/libparex.so" ] || fail "libdir has no libparex.so"
# parex.h includes <Random123/philox.h>: Cflags must name its directory (pkg-config hides it from
# --cflags when it is a system directory, so ask with system flags allowed).
r123=$(pkg-config --variable=random123_includedir parex)
[ -f "$r123/Random123/philox.h" ] || fail "random123_includedir '$r123' has no Random123/philox.h"
r123_cflags=$(PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 pkg-config --cflags parex)
case " $r123_cflags " in
*" -I$r123 "*) echo "pkg-config --cflags parex names Random123: -I$r123" ;;
*) fail "pkg-config --cflags parex lacks -I$r123 (Random123): $r123_cflags" ;;
esac
[ -f "$(pkg-config --variable=includedir parex)/parex.h" ] || fail "includedir has no parex.h"
libs=$(pkg-config --libs parex)
static_libs=$(pkg-config --static --libs parex)
echo "pkg-config --cflags --libs parex: $(pkg-config --cflags parex) $libs"
echo "pkg-config --static --libs parex: $static_libs"
case $libs in
*-lcudart* | *libcudart*) fail "pkg-config --libs parex names the CUDA runtime: $libs" ;;
esac
if [ $cuda = 1 ]; then
    case $static_libs in
    *-lcudart*) ;;
    *) fail "parex is built with CUDA but pkg-config --static --libs lacks -lcudart: $static_libs" ;;
    esac
fi
# libparex.a is linked with parex's full static line. hwloc's own static line (reached through
# Requires.private) may name libraries this machine has only as shared objects (Debian's hwloc.pc
# lists -ludev, whose libudev.so link needs libudev-dev): then link libparex.a with parex's own
# Libs and Libs.private and the shared hwloc, which still checks everything parex.pc says.
printf 'int main(void) { return 0; }\n' >"$work/probe.c"
# shellcheck disable=SC2046 # the link line is split into words on purpose
if pkg-config --exists hwloc && pkg-config --static --libs parex | grep -q -- -lhwloc &&
    ! ${CC:-cc} -o "$work/probe" "$work/probe.c" $(pkg-config --static --libs hwloc) \
        >"$work/probe.log" 2>&1; then
    echo "note: hwloc's static link line does not link here ($(grep -m 1 'cannot find' "$work/probe.log" || tail -n 1 "$work/probe.log"));"
    echo "      consumer_pc_static uses parex's own static line and the shared hwloc"
    own=$(pkg-config --static --libs --maximum-traverse-depth=2 parex) ||
        fail "pkg-config lacks --maximum-traverse-depth (pkgconf has it)"
    # Public Requires (mpi-c when parex is built with MPI) are beyond that depth too: add their
    # shared Libs.
    reqs=$(pkg-config --print-requires parex | awk '{print $1}' | tr '\n' ' ')
    # shellcheck disable=SC2086 # one word per module
    static_libs="$own $(pkg-config --libs hwloc) ${reqs:+$(pkg-config --libs $reqs)}"
fi
make -s -C "$here" OUT="$work" PAREX_STATIC_LIBS="$static_libs"
"$work/consumer_pc"
"$work/consumer_pc_static"
no_direct_cudart "$work/consumer_pc"
echo "== consumer: all builds ran"
