// bench/kokkos/bench_fem_kokkos.cpp - the Kokkos ScatterView contender of bench/bench_fem.c
// (issue 14): the same mesh (examples/fem/mesh.c), the same element kernel
// (examples/fem/element.h), the same work per assembly (zero values and load, add every
// element skipping Dirichlet rows and columns, contribute, 1 on the Dirichlet diagonals) and
// the same RESULT line, with Kokkos::Experimental::ScatterView on Kokkos' default host space.
//
// Usage: bench_fem_kokkos [--mode default|duplicated|atomic] [--n 708] [--seed 1] [--reps 10]
//                         [--warmup 2] [--kokkos-num-threads=T]
//   default     create_scatter_view(val): what Kokkos picks for the space (duplicated and
//               non-atomic on Threads/OpenMP with more than one thread)
//   duplicated  ScatterDuplicated, ScatterNonAtomic
//   atomic      ScatterNonDuplicated, ScatterAtomic
// impl= in the RESULT line is kokkos-<backend>-<mode>, e.g. kokkos-threads-default.
#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "element.h"
#include "mesh.h"

namespace KE = Kokkos::Experimental;

using exec = Kokkos::DefaultHostExecutionSpace;
using range = Kokkos::RangePolicy<exec, Kokkos::IndexType<int64_t>>;

struct problem {
    Kokkos::View<double *, exec> xy;
    Kokkos::View<int32_t *, exec> tri;
    Kokkos::View<uint8_t *, exec> bnd;
    Kokkos::View<int64_t *, exec> row_ptr;
    Kokkos::View<int32_t *, exec> col;
    Kokkos::View<double *, exec> val, load;
    int64_t n_nodes, n_elems;
};

// One assembly through the scatter views sv (values) and sl (load).
template <class SV> static void assemble(const problem &p, SV &sv, SV &sl)
{
    Kokkos::deep_copy(p.val, 0.0);
    Kokkos::deep_copy(p.load, 0.0);
    sv.reset();
    sl.reset();
    const auto xy = p.xy;
    const auto tri = p.tri;
    const auto bnd = p.bnd;
    const auto row_ptr = p.row_ptr;
    const auto col = p.col;
    Kokkos::parallel_for(
        "fem_assemble_scatterview", range(0, p.n_elems), KOKKOS_LAMBDA(int64_t e) {
            auto av = sv.access();
            auto al = sl.access();
            double K[9], F[3];
            const int32_t *t = tri.data() + 3 * e;
            fem_element(xy.data(), t, K, F);
            for (int q = 0; q < 3; q++) {
                const int32_t r = t[q];
                if (bnd(r))
                    continue;
                al(r) += F[q];
                for (int s = 0; s < 3; s++) {
                    const int32_t c = t[s];
                    if (!bnd(c))
                        av(fem_slot(row_ptr.data(), col.data(), r, c)) += K[3 * q + s];
                }
            }
        });
    auto val = p.val; // contribute takes a non-const View reference
    auto load = p.load;
    KE::contribute(val, sv);
    KE::contribute(load, sl);
    Kokkos::parallel_for(
        "fem_dirichlet", range(0, p.n_nodes), KOKKOS_LAMBDA(int64_t r) {
            if (bnd(r))
                val(fem_slot(row_ptr.data(), col.data(), (int32_t)r, (int32_t)r)) = 1.0;
        });
    exec().fence();
}

template <class SV>
static void run(const problem &p, SV sv, SV sl, long long reps, long long warmup,
                std::vector<double> &times)
{
    for (long long r = -warmup; r < reps; r++) {
        const double t0 = bench_now_s();
        assemble(p, sv, sl);
        if (r >= 0)
            times[(size_t)r] = bench_now_s() - t0;
    }
}

int main(int argc, char **argv)
{
    Kokkos::ScopeGuard guard(argc, argv);
    std::string mode = "default";
    long long n = 708, reps = 10, warmup = 2;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!std::strcmp(argv[i], "--mode") && v)
            mode = argv[++i];
        else if (!std::strcmp(argv[i], "--n") && v)
            n = std::atoll(argv[++i]);
        else if (!std::strcmp(argv[i], "--seed") && v)
            seed = std::strtoull(argv[++i], nullptr, 0);
        else if (!std::strcmp(argv[i], "--reps") && v)
            reps = std::atoll(argv[++i]);
        else if (!std::strcmp(argv[i], "--warmup") && v)
            warmup = std::atoll(argv[++i]);
        else {
            std::fprintf(stderr, "usage: bench_fem_kokkos [--mode default|duplicated|atomic] "
                                 "[--n N] [--seed S] [--reps R] [--warmup W]\n");
            return 2;
        }
    }
    if ((mode != "default" && mode != "duplicated" && mode != "atomic") || n < 1 ||
        n > FEM_MESH_MAX_N || reps < 1 || warmup < 0) {
        std::fprintf(stderr, "bench_fem_kokkos: bad --mode, --n, --reps or --warmup\n");
        return 2;
    }
    fem_mesh m;
    fem_pattern pat;
    if (fem_mesh_generate(n, seed, &m) != 0 || fem_pattern_build(&m, &pat) != 0) {
        std::fprintf(stderr, "bench_fem_kokkos: mesh or pattern failed\n");
        return 1;
    }
    problem p;
    p.n_nodes = m.n_nodes;
    p.n_elems = m.n_elems;
    p.xy = Kokkos::View<double *, exec>("xy", (size_t)(2 * m.n_nodes));
    p.tri = Kokkos::View<int32_t *, exec>("tri", (size_t)(3 * m.n_elems));
    p.bnd = Kokkos::View<uint8_t *, exec>("bnd", (size_t)m.n_nodes);
    p.row_ptr = Kokkos::View<int64_t *, exec>("row_ptr", (size_t)(m.n_nodes + 1));
    p.col = Kokkos::View<int32_t *, exec>("col", (size_t)pat.nnz);
    p.val = Kokkos::View<double *, exec>("val", (size_t)pat.nnz);
    p.load = Kokkos::View<double *, exec>("load", (size_t)m.n_nodes);
    std::memcpy(p.xy.data(), m.xy, sizeof(double) * (size_t)(2 * m.n_nodes));
    std::memcpy(p.tri.data(), m.tri, sizeof(int32_t) * (size_t)(3 * m.n_elems));
    std::memcpy(p.bnd.data(), m.boundary, (size_t)m.n_nodes);
    std::memcpy(p.row_ptr.data(), pat.row_ptr, sizeof(int64_t) * (size_t)(m.n_nodes + 1));
    std::memcpy(p.col.data(), pat.col, sizeof(int32_t) * (size_t)pat.nnz);

    // Sequential reference (element order).
    std::vector<double> rv((size_t)pat.nnz, 0.0), rl((size_t)m.n_nodes, 0.0);
    for (int64_t e = 0; e < m.n_elems; e++) {
        double K[9], F[3];
        const int32_t *t = m.tri + 3 * e;
        fem_element(m.xy, t, K, F);
        for (int q = 0; q < 3; q++) {
            if (m.boundary[t[q]])
                continue;
            rl[(size_t)t[q]] += F[q];
            for (int s = 0; s < 3; s++)
                if (!m.boundary[t[s]])
                    rv[(size_t)fem_slot(pat.row_ptr, pat.col, t[q], t[s])] += K[3 * q + s];
        }
    }
    for (int64_t r = 0; r < m.n_nodes; r++)
        if (m.boundary[r])
            rv[(size_t)fem_slot(pat.row_ptr, pat.col, (int32_t)r, (int32_t)r)] = 1.0;

    std::vector<double> times((size_t)reps);
    if (mode == "default")
        run(p, KE::create_scatter_view(p.val), KE::create_scatter_view(p.load), reps, warmup,
            times);
    else if (mode == "duplicated")
        run(p,
            KE::create_scatter_view<KE::ScatterSum, KE::ScatterDuplicated, KE::ScatterNonAtomic>(
                p.val),
            KE::create_scatter_view<KE::ScatterSum, KE::ScatterDuplicated, KE::ScatterNonAtomic>(
                p.load),
            reps, warmup, times);
    else
        run(p,
            KE::create_scatter_view<KE::ScatterSum, KE::ScatterNonDuplicated, KE::ScatterAtomic>(
                p.val),
            KE::create_scatter_view<KE::ScatterSum, KE::ScatterNonDuplicated, KE::ScatterAtomic>(
                p.load),
            reps, warmup, times);

    double d = 0.0, scale = 0.0;
    for (int64_t k = 0; k < pat.nnz; k++) {
        d = std::fmax(d, std::fabs(p.val(k) - rv[(size_t)k]));
        scale = std::fmax(scale, std::fabs(rv[(size_t)k]));
    }
    for (int64_t r = 0; r < m.n_nodes; r++) {
        d = std::fmax(d, std::fabs(p.load(r) - rl[(size_t)r]));
        scale = std::fmax(scale, std::fabs(rl[(size_t)r]));
    }
    d /= scale > 0.0 ? scale : 1.0;
    double best = times[0];
    for (double t : times)
        best = t < best ? t : best;
    const double med = bench_median(times.data(), (int)reps);
    std::string backend = exec::name();
    for (auto &ch : backend)
        ch = (char)std::tolower((unsigned char)ch);
    std::printf("RESULT impl=kokkos-%s-%s mode=%s n=%lld elements=%lld nnz=%lld threads=%d "
                "reps=%lld seconds=%.6g best=%.6g melems=%.3f maxdiff=%.3g\n",
                backend.c_str(), mode.c_str(), mode.c_str(), n, (long long)m.n_elems,
                (long long)pat.nnz, exec().concurrency(), reps, med, best,
                (double)m.n_elems / med * 1e-6, d);
    fem_pattern_free(&pat);
    fem_mesh_free(&m);
    return d <= 1e-12 ? 0 : 1;
}
