// bench/kokkos/bench_rng_kokkos.cpp - the Kokkos contender of bench/bench_rng.c (issue 14):
// uniform doubles per second from Kokkos::Random_XorShift64_Pool, same work, options and
// RESULT line, on Kokkos' default host execution space (Kokkos::Threads or Kokkos::OpenMP,
// whichever the install enables; impl = "kokkos-" + the space's name in lower case).
//
//   bench_rng_kokkos [--items N] [--draws K] [--reps R] [--warmup W] [--seed S]
//                    [--kokkos-num-threads=2 ...]
//
// Work: a parallel_reduce over N items; item i takes a generator state from the pool
// (pool.get_state(), Kokkos' documented idiom), draws K doubles with gen.drand() (uniform in
// [0, 1)), returns the state (pool.free_state) and adds its K draws to the sum. The pool holds
// one state per thread, seeded once outside the timed runs. XorShift64* is a different (and
// cheaper, not counter-based) generator than Philox4x32-10, so the check is statistical only:
// the mean of the N K draws must be within 5 standard deviations of 1/2.
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"

namespace
{

using Exec = Kokkos::DefaultHostExecutionSpace;
using Pool = Kokkos::Random_XorShift64_Pool<Exec>;

bool parse_i64(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = std::strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

double run(const Pool &pool, long long items, long long draws)
{
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "bench_rng_kokkos", Kokkos::RangePolicy<Exec>(0, items),
        KOKKOS_LAMBDA(const long long, double &acc) {
            auto gen = pool.get_state();
            double s = 0.0;
            for (long long d = 0; d < draws; ++d)
                s += gen.drand();
            pool.free_state(gen);
            acc += s;
        },
        sum);
    return sum;
}

int bench_main(int argc, char **argv)
{
    long long items = 1LL << 22, draws = 16, reps = 10, warmup = 2, seed = 12345;
    for (int i = 1; i < argc; ++i) {
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        bool ok = v != nullptr;
        if (ok && !std::strcmp(argv[i], "--items"))
            ok = parse_i64(v, 1, 1LL << 40, &items);
        else if (ok && !std::strcmp(argv[i], "--draws"))
            ok = parse_i64(v, 1, 1 << 20, &draws);
        else if (ok && !std::strcmp(argv[i], "--reps"))
            ok = parse_i64(v, 1, 1000, &reps);
        else if (ok && !std::strcmp(argv[i], "--warmup"))
            ok = parse_i64(v, 0, 100, &warmup);
        else if (ok && !std::strcmp(argv[i], "--seed"))
            ok = parse_i64(v, 0, INT64_MAX, &seed);
        else
            ok = false;
        if (!ok) {
            std::fprintf(stderr, "usage: bench_rng_kokkos [--items N] [--draws K] [--reps R] "
                                 "[--warmup W] [--seed S] [--kokkos-* options]\n");
            return 2;
        }
        ++i;
    }
    std::string impl = "kokkos-";
    for (const char *c = Exec::name(); *c; ++c)
        impl += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    const int threads = Exec().concurrency();
    Pool pool(static_cast<uint64_t>(seed));
    std::vector<double> t;
    double sum = 0.0;
    for (long long r = -warmup - 1; r < reps; ++r) {
        double t0 = bench_now_s();
        sum = run(pool, items, draws);
        double dt = bench_now_s() - t0;
        if (r == -warmup - 1) { // the checked run
            double total = static_cast<double>(items) * static_cast<double>(draws);
            double mean = sum / total, sd = std::sqrt(1.0 / 12.0 / total);
            if (std::fabs(mean - 0.5) > 5.0 * sd) {
                std::fprintf(stderr, "bench_rng_kokkos: mean %.9f is %.1f sd from 1/2\n", mean,
                             (mean - 0.5) / sd);
                return 1;
            }
        }
        if (r >= 0)
            t.push_back(dt);
    }
    double best = t[0];
    for (double x : t)
        best = x < best ? x : best;
    double med = bench_median(t.data(), static_cast<int>(t.size()));
    double total = static_cast<double>(items) * static_cast<double>(draws);
    std::printf("RESULT impl=%s threads=%d items=%lld draws=%lld reps=%lld seconds=%.6g best=%.6g "
                "draws_per_s=%.6g mean=%.9f\n",
                impl.c_str(), threads, items, draws, reps, med, best, total / med, sum / total);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    Kokkos::initialize(argc, argv); // consumes --kokkos-* options
    int rc;
    {
        rc = bench_main(argc, argv);
    } // the pool is released before finalize
    Kokkos::finalize();
    return rc;
}
