// bench/kokkos/bench_mdrange_kokkos.cpp - the Kokkos MDRange contenders of bench/bench_mdrange.c
// (issue 13): the same kernels, byte counts, checks, options and RESULT lines, on Kokkos'
// default host execution space (Kokkos::Threads or Kokkos::OpenMP, whichever the Kokkos install
// this was built against enables; the impl name is "kokkos-" + the space's name in lower case).
//
//   bench_mdrange_kokkos --kernel stencil|transpose|reduce [--dims AxBxC|AxB]
//                        [--tile AxBxC|default] [--tile-sweep] [--reps R] [--warmup W]
//                        [--kokkos-num-threads=2 ...]
//
// Data are Kokkos::Views in HostSpace: stencil and reduce LayoutRight A x B x C; transpose reads
// a LayoutLeft view and writes a LayoutRight one. Loops are MDRangePolicy<Rank<3>> (stencil over
// the interior, reduce over the box) and Rank<2> (transpose) with Kokkos' default iteration
// order; tile "default" leaves the tile to Kokkos, the sweep lists are those of bench_mdrange.c.
// Run Kokkos::Threads with --kokkos-num-threads=2 (it binds through hwloc), Kokkos::OpenMP with
// OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores (bench/run_mdrange.sh does both).
#include <Kokkos_Core.hpp>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"

namespace
{

constexpr double C0 = 0.4, C1 = 0.1;

using Exec = Kokkos::DefaultHostExecutionSpace;
using V3 = Kokkos::View<double ***, Kokkos::LayoutRight, Kokkos::HostSpace>;
using V2L = Kokkos::View<double **, Kokkos::LayoutLeft, Kokkos::HostSpace>;
using V2R = Kokkos::View<double **, Kokkos::LayoutRight, Kokkos::HostSpace>;
using P3 = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>;
using P2 = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>;

enum Kernel { K_STENCIL, K_TRANSPOSE, K_REDUCE };

struct Tile {
    int64_t t[3];
    bool is_default() const
    {
        return t[0] == 0 && t[1] == 0 && t[2] == 0;
    }
};

KOKKOS_INLINE_FUNCTION double init_value(int64_t i, int64_t j, int64_t k)
{
    return static_cast<double>((i * 131 + j * 17 + k * 3) % 101) * 0.01;
}

Kernel kernel = K_STENCIL;
int64_t dims[3] = {256, 256, 256};
int rank = 3;
double SINK = 0.0;

P3 policy3(const int64_t lo[3], const int64_t hi[3], const Tile &t)
{
    if (t.is_default())
        return P3({lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]});
    return P3({lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}, {t.t[0], t.t[1], t.t[2]});
}

P2 policy2(const int64_t lo[2], const int64_t hi[2], const Tile &t)
{
    if (t.is_default())
        return P2({lo[0], lo[1]}, {hi[0], hi[1]});
    return P2({lo[0], lo[1]}, {hi[0], hi[1]}, {t.t[0], t.t[1]});
}

struct Data {
    V3 a, b;  // stencil (in, out; swapped every sweep) and reduce (a)
    V2L tin;  // transpose input, LayoutLeft
    V2R tout; // transpose output, LayoutRight
};

void init(Data &d)
{
    const int64_t zero[3] = {0, 0, 0};
    const Tile def{{0, 0, 0}};
    if (kernel == K_TRANSPOSE) {
        V2L in = d.tin;
        V2R out = d.tout;
        Kokkos::parallel_for(
            "init", policy2(zero, dims, def), KOKKOS_LAMBDA(int64_t i, int64_t j) {
                in(i, j) = init_value(i, j, 0);
                out(i, j) = 0.0;
            });
    } else {
        V3 a = d.a, b = d.b;
        const bool two = kernel == K_STENCIL;
        Kokkos::parallel_for(
            "init", policy3(zero, dims, def), KOKKOS_LAMBDA(int64_t i, int64_t j, int64_t k) {
                a(i, j, k) = init_value(i, j, k);
                if (two)
                    b(i, j, k) = init_value(i, j, k);
            });
    }
    Kokkos::fence();
}

void run_once(Data &d, const Tile &t)
{
    if (kernel == K_STENCIL) {
        const int64_t lo[3] = {1, 1, 1}, hi[3] = {dims[0] - 1, dims[1] - 1, dims[2] - 1};
        V3 in = d.a, out = d.b;
        Kokkos::parallel_for(
            "stencil", policy3(lo, hi, t), KOKKOS_LAMBDA(int64_t i, int64_t j, int64_t k) {
                out(i, j, k) =
                    C0 * in(i, j, k) + C1 * (in(i, j, k - 1) + in(i, j, k + 1) + in(i, j - 1, k) +
                                             in(i, j + 1, k) + in(i - 1, j, k) + in(i + 1, j, k));
            });
        Kokkos::fence();
        std::swap(d.a, d.b);
    } else if (kernel == K_TRANSPOSE) {
        const int64_t lo[2] = {0, 0}, hi[2] = {dims[0], dims[1]};
        V2L in = d.tin;
        V2R out = d.tout;
        Kokkos::parallel_for(
            "transpose", policy2(lo, hi, t),
            KOKKOS_LAMBDA(int64_t i, int64_t j) { out(i, j) = in(i, j); });
        Kokkos::fence();
    } else {
        const int64_t lo[3] = {0, 0, 0};
        V3 a = d.a;
        double s = 0.0;
        Kokkos::parallel_reduce(
            "ssq", policy3(lo, dims, t),
            KOKKOS_LAMBDA(int64_t i, int64_t j, int64_t k, double &acc) {
                acc += a(i, j, k) * a(i, j, k);
            },
            s);
        SINK += s;
    }
}

// Initialise, run once, compare with the formula (see bench_mdrange.c's check()).
double check(Data &d, const Tile &t)
{
    init(d);
    const int64_t n0 = dims[0], n1 = dims[1], n2 = rank == 3 ? dims[2] : 1;
    double err = 0.0;
    if (kernel == K_REDUCE) {
        const double before = SINK;
        run_once(d, t);
        const double got = SINK - before;
        SINK = before;
        double ref = 0.0;
        for (int64_t i = 0; i < n0; ++i)
            for (int64_t j = 0; j < n1; ++j)
                for (int64_t k = 0; k < n2; ++k) {
                    const double v = init_value(i, j, k);
                    ref += v * v;
                }
        return std::fabs(got - ref) / ref;
    }
    run_once(d, t);
    if (kernel == K_TRANSPOSE) {
        const double *out = d.tout.data();
        for (int64_t i = 0; i < n0; ++i)
            for (int64_t j = 0; j < n1; ++j)
                err = std::fmax(err, std::fabs(out[i * n1 + j] - init_value(i, j, 0)));
        return err;
    }
    const double *a = d.a.data();
    for (int64_t i = 0; i < n0; ++i)
        for (int64_t j = 0; j < n1; ++j)
            for (int64_t k = 0; k < n2; ++k) {
                const bool interior =
                    i > 0 && i < n0 - 1 && j > 0 && j < n1 - 1 && k > 0 && k < n2 - 1;
                const double want =
                    interior ? C0 * init_value(i, j, k) +
                                   C1 * (init_value(i, j, k - 1) + init_value(i, j, k + 1) +
                                         init_value(i, j - 1, k) + init_value(i, j + 1, k) +
                                         init_value(i - 1, j, k) + init_value(i + 1, j, k))
                             : init_value(i, j, k);
                err = std::fmax(err, std::fabs(a[(i * n1 + j) * n2 + k] - want));
            }
    return err;
}

int parse_dims(const char *s, int64_t *out, int max)
{
    int n = 0;
    char *end;
    while (n < max) {
        const long long v = std::strtoll(s, &end, 10);
        if (end == s || v < 1)
            return -1;
        out[n++] = static_cast<int64_t>(v);
        if (*end == '\0')
            return n;
        if (*end != 'x')
            return -1;
        s = end + 1;
    }
    return -1;
}

std::string tile_name(const Tile &t)
{
    if (t.is_default())
        return "default";
    char buf[64];
    if (rank == 2)
        std::snprintf(buf, sizeof buf, "%lldx%lld", static_cast<long long>(t.t[0]),
                      static_cast<long long>(t.t[1]));
    else
        std::snprintf(buf, sizeof buf, "%lldx%lldx%lld", static_cast<long long>(t.t[0]),
                      static_cast<long long>(t.t[1]), static_cast<long long>(t.t[2]));
    return buf;
}

// The tile sweeps of bench_mdrange.c (keep the lists equal).
std::vector<Tile> sweep_tiles()
{
    if (kernel == K_STENCIL)
        return {{{0, 0, 0}}, {{1, 4, 256}}, {{1, 16, 64}}, {{2, 8, 64}}, {{4, 4, 32}}, {{8, 8, 8}}};
    if (kernel == K_TRANSPOSE)
        return {{{0, 0, 0}},   {{16, 16, 0}},   {{32, 32, 0}},
                {{64, 64, 0}}, {{128, 128, 0}}, {{16, 256, 0}}};
    return {{{0, 0, 0}}, {{1, 16, 256}}, {{4, 16, 64}}};
}

void usage()
{
    std::fprintf(stderr, "usage: bench_mdrange_kokkos --kernel stencil|transpose|reduce "
                         "[--dims AxBxC|AxB] [--tile AxBxC|default] [--tile-sweep] [--reps R] "
                         "[--warmup W] [--kokkos-...]\n");
}

int bench_main(int argc, char **argv)
{
    const char *dims_arg = nullptr, *tile_arg = nullptr, *kernel_name = "stencil";
    int reps = 10, warmup = 2;
    bool sweep = false;
    for (int i = 1; i < argc; ++i) {
        const bool has = i + 1 < argc;
        if (!std::strcmp(argv[i], "--kernel") && has)
            kernel_name = argv[++i];
        else if (!std::strcmp(argv[i], "--dims") && has)
            dims_arg = argv[++i];
        else if (!std::strcmp(argv[i], "--tile") && has)
            tile_arg = argv[++i];
        else if (!std::strcmp(argv[i], "--tile-sweep"))
            sweep = true;
        else if (!std::strcmp(argv[i], "--reps") && has)
            reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--warmup") && has)
            warmup = std::atoi(argv[++i]);
        else {
            usage();
            return 2;
        }
    }
    if (!std::strcmp(kernel_name, "stencil"))
        kernel = K_STENCIL;
    else if (!std::strcmp(kernel_name, "transpose"))
        kernel = K_TRANSPOSE;
    else if (!std::strcmp(kernel_name, "reduce"))
        kernel = K_REDUCE;
    else {
        usage();
        return 2;
    }
    rank = kernel == K_TRANSPOSE ? 2 : 3;
    if (kernel == K_TRANSPOSE)
        dims[0] = dims[1] = 8192;
    if (dims_arg && parse_dims(dims_arg, dims, 3) != rank) {
        std::fprintf(stderr, "bench_mdrange_kokkos: --dims needs %d extents >= 1, got '%s'\n", rank,
                     dims_arg);
        return 2;
    }
    if (kernel == K_STENCIL && (dims[0] < 3 || dims[1] < 3 || dims[2] < 3)) {
        std::fprintf(stderr, "bench_mdrange_kokkos: the stencil needs extents >= 3\n");
        return 2;
    }
    if (reps < 1 || reps > 1000 || warmup < 0) {
        std::fprintf(stderr, "bench_mdrange_kokkos: --reps must be 1..1000, --warmup >= 0\n");
        return 2;
    }
    std::vector<Tile> tiles{{{0, 0, 0}}};
    if (sweep) {
        tiles = sweep_tiles();
    } else if (tile_arg && std::strcmp(tile_arg, "default") != 0) {
        if (parse_dims(tile_arg, tiles[0].t, 3) != rank) {
            std::fprintf(stderr, "bench_mdrange_kokkos: --tile needs %d sizes >= 1, got '%s'\n",
                         rank, tile_arg);
            return 2;
        }
    }
    std::string impl = "kokkos-";
    for (const char *c = Exec::name(); *c; ++c)
        impl += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    const int threads = Exec().concurrency();

    // Every View is made with an allocation (extent 0 where a kernel does not use it): with the
    // Kokkos 4.6.99 peer build (develop 28848dfa, mdspan-based View) destroying a
    // default-constructed View crashed in SharedAllocationRecord::decrement.
    const auto noinit = Kokkos::WithoutInitializing; // first touch in init(), by the MDRange
    const bool tr = kernel == K_TRANSPOSE, st = kernel == K_STENCIL;
    const int64_t e3[3] = {tr ? 0 : dims[0], tr ? 0 : dims[1], tr ? 0 : dims[2]};
    const int64_t eb[3] = {st ? dims[0] : 0, st ? dims[1] : 0, st ? dims[2] : 0};
    Data d{V3(Kokkos::view_alloc(noinit, "a"), e3[0], e3[1], e3[2]),
           V3(Kokkos::view_alloc(noinit, "b"), eb[0], eb[1], eb[2]),
           V2L(Kokkos::view_alloc(noinit, "in"), tr ? dims[0] : 0, tr ? dims[1] : 0),
           V2R(Kokkos::view_alloc(noinit, "out"), tr ? dims[0] : 0, tr ? dims[1] : 0)};
    double bytes;
    const double npts = static_cast<double>(dims[0]) * static_cast<double>(dims[1]) *
                        static_cast<double>(rank == 3 ? dims[2] : 1);
    if (kernel == K_STENCIL)
        bytes = 16.0 * static_cast<double>(dims[0] - 2) * static_cast<double>(dims[1] - 2) *
                static_cast<double>(dims[2] - 2);
    else if (kernel == K_TRANSPOSE)
        bytes = 16.0 * npts;
    else
        bytes = 8.0 * npts;

    const size_t nt = tiles.size();
    std::vector<double> maxerr(nt);
    for (size_t t = 0; t < nt; ++t) {
        maxerr[t] = check(d, tiles[t]);
        const double tol = kernel == K_REDUCE ? 1e-9 : 1e-12; // a wrong index is off by >= 0.01
        if (!(maxerr[t] <= tol)) {
            std::fprintf(stderr, "bench_mdrange_kokkos: %s %s tile %s: wrong result (error %.3g)\n",
                         impl.c_str(), kernel_name, tile_name(tiles[t]).c_str(), maxerr[t]);
            return 1;
        }
    }
    std::vector<std::vector<double>> times(nt, std::vector<double>(static_cast<size_t>(reps)));
    for (int w = 0; w < warmup; ++w)
        for (size_t t = 0; t < nt; ++t)
            run_once(d, tiles[t]);
    for (int r = 0; r < reps; ++r)
        for (size_t q = 0; q < nt; ++q) {
            const size_t t = (q + static_cast<size_t>(r)) % nt; // rotate tiles between repetitions
            const double t0 = bench_now_s();
            run_once(d, tiles[t]);
            times[t][static_cast<size_t>(r)] = bench_now_s() - t0;
        }
    char dn[96];
    if (rank == 2)
        std::snprintf(dn, sizeof dn, "%lldx%lld", static_cast<long long>(dims[0]),
                      static_cast<long long>(dims[1]));
    else
        std::snprintf(dn, sizeof dn, "%lldx%lldx%lld", static_cast<long long>(dims[0]),
                      static_cast<long long>(dims[1]), static_cast<long long>(dims[2]));
    for (size_t t = 0; t < nt; ++t) {
        double best = times[t][0];
        for (double v : times[t])
            best = v < best ? v : best;
        const double med = bench_median(times[t].data(), reps);
        std::printf("RESULT impl=%s kernel=%s dims=%s tile=%s threads=%d reps=%d seconds=%.6g "
                    "best=%.6g gbs=%.4f maxerr=%.3g\n",
                    impl.c_str(), kernel_name, dn, tile_name(tiles[t]).c_str(), threads, reps, med,
                    best, bytes / med / 1e9, maxerr[t]);
    }
    if (SINK == 42.0)
        std::printf("sink\n");
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    Kokkos::initialize(argc, argv); // consumes --kokkos-* options
    int rc;
    {
        rc = bench_main(argc, argv);
    } // every View is released before finalize
    Kokkos::finalize();
    return rc;
}
