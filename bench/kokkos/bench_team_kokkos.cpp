// bench/kokkos/bench_team_kokkos.cpp - the Kokkos TeamPolicy contenders of bench/bench_team.c
// (issue 14): the same kernels, checks, options and RESULT lines, on Kokkos' default host
// execution space (impl "kokkos-" + the space's name in lower case).
//
//   bench_team_kokkos --kernel spmv [--grid G | --matrix PATH] [--rows-per-team R] [--team T]
//   bench_team_kokkos --kernel batched|lu [--bs 8|16] [--count N] [--team T]
//                     [--reps R] [--warmup W] [--kokkos-num-threads=2 ...]
//
// spmv: TeamPolicy(ceil(n / R), T) with TeamThreadRange over the block's rows and a
// ThreadVectorRange reduction over each row's entries. The matrix is the HPCG 27-point matrix of
// a G^3 grid (default 64), or a Matrix Market file read with examples/cg's mmio (--matrix).
// batched: TeamPolicy(N, T) with level-0 scratch for A_b and x_b (team_scratch), a team_barrier,
// then TeamThreadRange over the rows. lu: TeamPolicy(N, T), A_b and r_b in level-0 scratch, LU
// without pivoting on the same diagonally dominant systems as bench_team.c (TeamThreadRange over
// the rows below the pivot, ThreadVectorRange over each row update, a team_barrier per step),
// then back substitution likewise; checked against a sequential solve whose residual is
// checked. T = 0 means Kokkos::AUTO.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
extern "C" {
#include "mmio.h"
}

namespace
{

using Exec = Kokkos::DefaultHostExecutionSpace;
using Policy = Kokkos::TeamPolicy<Exec>;
using Member = Policy::member_type;
using ScratchD = Kokkos::View<double *, Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

struct Csr {
    int64_t n = 0, nnz = 0;
    std::vector<int64_t> rp;
    std::vector<int32_t> col;
    std::vector<double> val;
};

int64_t cnt(int64_t k, int64_t n)
{
    return 1 + (k > 0) + (k < n - 1);
}

void hpcg(int64_t g, Csr &A)
{
    A.n = g * g * g;
    A.rp.assign((size_t)A.n + 1, 0);
    for (int64_t i = 0; i < A.n; i++) {
        const int64_t ix = i % g, iy = (i / g) % g, iz = i / (g * g);
        for (int64_t z = iz - 1; z <= iz + 1; z++)
            for (int64_t y = iy - 1; y <= iy + 1; y++)
                for (int64_t x = ix - 1; x <= ix + 1; x++) {
                    if (x < 0 || x >= g || y < 0 || y >= g || z < 0 || z >= g)
                        continue;
                    const int64_t c = x + g * (y + g * z);
                    A.col.push_back((int32_t)c);
                    A.val.push_back(c == i ? 26.0 : -1.0);
                }
        A.rp[(size_t)i + 1] = (int64_t)A.col.size();
    }
    A.nnz = (int64_t)A.col.size();
    (void)cnt;
}

void load(const char *path, Csr &A)
{
    mm_csr m;
    char err[512];
    if (mm_read_csr(path, MM_REQUIRE_SQUARE, &m, err, sizeof err) != MM_OK) {
        std::fprintf(stderr, "bench_team_kokkos: %s\n", err);
        std::exit(1);
    }
    A.n = m.n_rows;
    A.nnz = m.nnz;
    A.rp.assign(m.row_ptr, m.row_ptr + A.n + 1);
    A.col.assign(m.col, m.col + A.nnz);
    A.val.assign(m.val, m.val + A.nnz);
    mm_csr_free(&m);
}

Policy make_policy(int64_t league, int team)
{
    return team > 0 ? Policy(league, team) : Policy(league, Kokkos::AUTO);
}

// Sequential solve without pivoting (bench_team.c's lu_solve_one): the reference.
void lu_solve_one(const double *A, const double *r, double *x, int64_t bs)
{
    double U[16 * 16], z[16];
    for (int64_t k = 0; k < bs * bs; ++k)
        U[k] = A[k];
    for (int64_t i = 0; i < bs; ++i)
        z[i] = r[i];
    for (int64_t k = 0; k < bs; ++k)
        for (int64_t i = k + 1; i < bs; ++i) {
            const double l = U[i * bs + k] / U[k * bs + k];
            for (int64_t j = k + 1; j < bs; ++j)
                U[i * bs + j] -= l * U[k * bs + j];
            z[i] -= l * z[k];
        }
    for (int64_t k = bs - 1; k >= 0; --k) {
        x[k] = z[k] / U[k * bs + k];
        for (int64_t i = 0; i < k; ++i)
            z[i] -= U[i * bs + k] * x[k];
    }
}

// The lu kernel: fills times, returns flops; maxerr against the checked sequential solve.
double run_lu(int64_t bs, int64_t count, int team, int reps, int warmup, double *times,
              double &maxerr)
{
    Kokkos::View<double *, Kokkos::HostSpace> M("M", (size_t)(count * bs * bs)),
        r("r", (size_t)(count * bs)), x("x", (size_t)(count * bs));
    for (int64_t k = 0; k < count * bs * bs; ++k)
        M(k) =
            (k / bs) % bs == k % bs ? 2.0 * (double)bs + 1.0 : (double)((k * 7) % 13) * 0.25 - 1.0;
    for (int64_t k = 0; k < count * bs; ++k)
        r(k) = (double)(k % 11) * 0.5 + 1.0;
    const size_t bytes = ScratchD::shmem_size((size_t)(bs * bs + bs));
    auto run = [&]() {
        Kokkos::parallel_for(
            "lu-team", make_policy(count, team).set_scratch_size(0, Kokkos::PerTeam(bytes)),
            KOKKOS_LAMBDA(const Member &t) {
                const int64_t b = t.league_rank();
                ScratchD s(t.team_scratch(0), (size_t)(bs * bs + bs));
                Kokkos::parallel_for(Kokkos::TeamThreadRange(t, (int64_t)0, bs), [&](int64_t i) {
                    Kokkos::parallel_for(
                        Kokkos::ThreadVectorRange(t, (int64_t)0, bs),
                        [&](int64_t j) { s(i * bs + j) = M((b * bs + i) * bs + j); });
                    s(bs * bs + i) = r(b * bs + i);
                });
                t.team_barrier();
                for (int64_t k = 0; k < bs; ++k) {
                    const double p = s(k * bs + k);
                    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, k + 1, bs), [&](int64_t i) {
                        const double l = s(i * bs + k) / p;
                        Kokkos::parallel_for(
                            Kokkos::ThreadVectorRange(t, k + 1, bs),
                            [&](int64_t j) { s(i * bs + j) -= l * s(k * bs + j); });
                        s(bs * bs + i) -= l * s(bs * bs + k);
                    });
                    t.team_barrier();
                }
                for (int64_t k = bs - 1; k >= 0; --k) {
                    const double xk = s(bs * bs + k) / s(k * bs + k);
                    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, (int64_t)0, k),
                                         [&](int64_t i) { s(bs * bs + i) -= s(i * bs + k) * xk; });
                    Kokkos::single(Kokkos::PerTeam(t), [&]() { x(b * bs + k) = xk; });
                    t.team_barrier();
                }
            });
        Kokkos::fence();
    };
    run();
    double ref[16], res = 0;
    for (int64_t b = 0; b < count; ++b) {
        lu_solve_one(&M(b * bs * bs), &r(b * bs), ref, bs);
        for (int64_t i = 0; i < bs; ++i) {
            double acc = 0;
            for (int64_t j = 0; j < bs; ++j)
                acc += M((b * bs + i) * bs + j) * ref[j];
            res = std::fmax(res, std::fabs(acc - r(b * bs + i)) / std::fabs(r(b * bs + i)));
            maxerr = std::fmax(maxerr, std::fabs(x(b * bs + i) - ref[i]) / std::fabs(ref[i]));
        }
    }
    if (res > 1e-12) {
        std::fprintf(stderr, "bench_team_kokkos: the sequential LU solve is wrong (%g)\n", res);
        std::exit(1);
    }
    for (int k = 0; k < warmup; ++k)
        run();
    for (int k = 0; k < reps; ++k) {
        double t0 = bench_now_s();
        run();
        times[k] = bench_now_s() - t0;
    }
    double f = 0; // exact flops of one solve, as bench_team.c counts them
    for (int64_t k = 0; k < bs; ++k)
        f +=
            (double)(bs - k - 1) * (1.0 + 2.0 * (double)(bs - k - 1) + 2.0) + 1.0 + 2.0 * (double)k;
    return f * (double)count;
}

} // namespace

// main: options, the spmv and batched kernels inline (lu in run_lu), the RESULT line; over 80
// lines so each kernel's setup, check and timing read top to bottom.
int main(int argc, char **argv)
{
    Kokkos::ScopeGuard guard(argc, argv);
    std::string kernel = "spmv";
    const char *matrix = nullptr;
    int64_t grid = 64, rpt = 64, bs = 8, count = 100000;
    int team = 0, reps = 20, warmup = 3;
    for (int k = 1; k + 1 < argc; k += 2) {
        std::string o = argv[k];
        const char *v = argv[k + 1];
        if (o == "--kernel")
            kernel = v;
        else if (o == "--matrix")
            matrix = v, grid = 0;
        else if (o == "--grid")
            grid = std::atoll(v);
        else if (o == "--rows-per-team")
            rpt = std::atoll(v);
        else if (o == "--team")
            team = std::atoi(v);
        else if (o == "--bs")
            bs = std::atoll(v);
        else if (o == "--count")
            count = std::atoll(v);
        else if (o == "--reps")
            reps = std::atoi(v);
        else if (o == "--warmup")
            warmup = std::atoi(v);
        else {
            std::fprintf(stderr, "bench_team_kokkos: unknown option %s\n", o.c_str());
            return 2;
        }
    }
    if ((kernel != "spmv" && kernel != "batched" && kernel != "lu") || rpt < 1 ||
        (bs != 8 && bs != 16) || count < 1 || reps < 1 || warmup < 0 || team < 0) {
        std::fprintf(stderr, "bench_team_kokkos: bad option value\n");
        return 2;
    }
    std::string impl = std::string("kokkos-") + Exec::name();
    for (auto &c : impl)
        c = (char)std::tolower((unsigned char)c);
    std::vector<double> times((size_t)reps);
    double flops = 0, maxerr = 0;
    char what[1200];
    if (kernel == "lu") {
        flops = run_lu(bs, count, team, reps, warmup, times.data(), maxerr);
        std::snprintf(what, sizeof what, "bs=%lld count=%lld", (long long)bs, (long long)count);
    } else if (kernel == "spmv") {
        Csr A;
        if (grid > 0) {
            hpcg(grid, A);
            std::snprintf(what, sizeof what, "matrix=hpcg-%lld^3", (long long)grid);
        } else {
            load(matrix, A);
            const char *base = std::strrchr(matrix, '/');
            std::snprintf(what, sizeof what, "matrix=%s", base ? base + 1 : matrix);
        }
        const int64_t n = A.n;
        Kokkos::View<int64_t *, Kokkos::HostSpace> rp("rp", (size_t)n + 1);
        Kokkos::View<int32_t *, Kokkos::HostSpace> col("col", (size_t)A.nnz);
        Kokkos::View<double *, Kokkos::HostSpace> val("val", (size_t)A.nnz), x("x", (size_t)n),
            y("y", (size_t)n);
        for (int64_t i = 0; i <= n; ++i)
            rp(i) = A.rp[(size_t)i];
        for (int64_t k = 0; k < A.nnz; ++k)
            col(k) = A.col[(size_t)k], val(k) = A.val[(size_t)k];
        for (int64_t i = 0; i < n; ++i)
            x(i) = 1.0 + (double)(i % 17) * 0.125;
        const int64_t league = (n + rpt - 1) / rpt;
        auto run = [&]() {
            Kokkos::parallel_for(
                "spmv-team", make_policy(league, team), KOKKOS_LAMBDA(const Member &t) {
                    const int64_t b = t.league_rank() * rpt, e = b + rpt < n ? b + rpt : n;
                    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, b, e), [&](const int64_t i) {
                        double s = 0;
                        Kokkos::parallel_reduce(
                            Kokkos::ThreadVectorRange(t, rp(i), rp(i + 1)),
                            [&](const int64_t k, double &acc) { acc += val(k) * x(col(k)); }, s);
                        y(i) = s;
                    });
                });
            Kokkos::fence();
        };
        run();
        for (int64_t i = 0; i < n; ++i) {
            double s = 0;
            for (int64_t k = rp(i); k < rp(i + 1); ++k)
                s += val(k) * x(col(k));
            double d = std::fabs(y(i) - s) / (std::fabs(s) > 1e-300 ? std::fabs(s) : 1.0);
            maxerr = d > maxerr ? d : maxerr;
        }
        for (int r = 0; r < warmup; ++r)
            run();
        for (int r = 0; r < reps; ++r) {
            double t0 = bench_now_s();
            run();
            times[(size_t)r] = bench_now_s() - t0;
        }
        flops = 2.0 * (double)A.nnz;
        size_t len = std::strlen(what);
        std::snprintf(what + len, sizeof what - len, " n=%lld nnz=%lld rows_per_team=%lld",
                      (long long)n, (long long)A.nnz, (long long)rpt);
    } else {
        Kokkos::View<double *, Kokkos::HostSpace> M("M", (size_t)(count * bs * bs)),
            x("x", (size_t)(count * bs)), y("y", (size_t)(count * bs));
        for (int64_t k = 0; k < count * bs * bs; ++k)
            M(k) = (double)((k * 7) % 13) * 0.25 - 1.0;
        for (int64_t k = 0; k < count * bs; ++k)
            x(k) = (double)(k % 11) * 0.5;
        const size_t bytes = ScratchD::shmem_size((size_t)(bs * bs + bs));
        auto run = [&]() {
            Kokkos::parallel_for(
                "batch-team", make_policy(count, team).set_scratch_size(0, Kokkos::PerTeam(bytes)),
                KOKKOS_LAMBDA(const Member &t) {
                    const int64_t b = t.league_rank();
                    ScratchD s(t.team_scratch(0), (size_t)(bs * bs + bs));
                    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, (int64_t)0, bs),
                                         [&](const int64_t r) {
                                             for (int64_t c = 0; c < bs; ++c)
                                                 s(r * bs + c) = M((b * bs + r) * bs + c);
                                             s(bs * bs + r) = x(b * bs + r);
                                         });
                    t.team_barrier();
                    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, (int64_t)0, bs),
                                         [&](const int64_t r) {
                                             double acc = 0;
                                             for (int64_t c = 0; c < bs; ++c)
                                                 acc += s(r * bs + c) * s(bs * bs + c);
                                             y(b * bs + r) = acc;
                                         });
                });
            Kokkos::fence();
        };
        run();
        for (int64_t b = 0; b < count; ++b)
            for (int64_t r = 0; r < bs; ++r) {
                double s = 0;
                for (int64_t c = 0; c < bs; ++c)
                    s += M((b * bs + r) * bs + c) * x(b * bs + c);
                double d =
                    std::fabs(y(b * bs + r) - s) / (std::fabs(s) > 1e-300 ? std::fabs(s) : 1.0);
                maxerr = d > maxerr ? d : maxerr;
            }
        for (int r = 0; r < warmup; ++r)
            run();
        for (int r = 0; r < reps; ++r) {
            double t0 = bench_now_s();
            run();
            times[(size_t)r] = bench_now_s() - t0;
        }
        flops = 2.0 * (double)count * (double)(bs * bs);
        std::snprintf(what, sizeof what, "bs=%lld count=%lld", (long long)bs, (long long)count);
    }
    if (maxerr > 1e-12) {
        std::fprintf(stderr, "bench_team_kokkos: wrong result (max relative error %g)\n", maxerr);
        return 1;
    }
    double best = times[0];
    for (double t : times)
        best = t < best ? t : best;
    double med = bench_median(times.data(), reps);
    std::printf("RESULT impl=%s kernel=%s %s threads=%d team=%d reps=%d seconds=%.6e best=%.6e "
                "gflops=%.4f maxerr=%.3e\n",
                impl.c_str(), kernel.c_str(), what, Exec().concurrency(), team, reps, med, best,
                flops / med / 1e9, maxerr);
    return 0;
}
