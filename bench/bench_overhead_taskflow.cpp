// bench/bench_overhead_taskflow.cpp - Taskflow 4.1.0's side of bench_overhead.c (issue 16):
// the same ops of 1, 10 and 100 us of work (bench_spin.h, calibrated once per process), the
// same DAGs and sizes, the same overhead definition:
//
//   chain        N tasks, each after the previous one
//   independent  N tasks, task k after task k - 1024 (parex: op k writes Var k % 1024)
//   N = target_s * min(workers, parallelism) / work,  ideal = N * work / min(workers, parallelism)
//   overhead = (measured - ideal) / ideal, the median of --reps runs
//
// Contenders: taskflow_build_run (build the tf::Taskflow, then executor.run(tf).wait()) and
// taskflow_rerun (executor.run(tf).wait() on the built graph). Output lines as bench_overhead's:
//   RESULT bench=overhead impl=<taskflow_build_run|taskflow_rerun> dag=<dag> work_us=<w>
//          workers=<W> ops=<N> seconds=<median> ideal_s=<ideal> overhead=<f> ns_per_task=<x>
// Run: build-DIR/bench/bench_overhead_taskflow [--dag all|chain|independent]
//      [--work-us 1,10,100] [--target-s 0.3] [--reps 3] [--workers 2]
#include <taskflow/taskflow.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_spin.h"

namespace
{

constexpr int64_t ind_stride = 1024;

struct config {
    bool chain;
    double work_ns;
    uint64_t iters;
    int workers;
    int64_t n_ops;
    int reps;
    int parallelism() const
    {
        return chain ? 1 : workers < ind_stride ? workers : static_cast<int>(ind_stride);
    }
};

void build(tf::Taskflow &tf, const config &c)
{
    const int64_t stride = c.chain ? 1 : ind_stride;
    const uint64_t iters = c.iters;
    std::vector<tf::Task> t;
    t.reserve(static_cast<size_t>(c.n_ops));
    for (int64_t i = 0; i < c.n_ops; ++i) {
        t.push_back(tf.emplace([iters]() { (void)bench_spin(iters); }));
        if (i >= stride)
            t[static_cast<size_t>(i - stride)].precede(t[static_cast<size_t>(i)]);
    }
}

void report(const config &c, const char *impl, std::vector<double> &samples)
{
    double med = bench_median(samples.data(), static_cast<int>(samples.size()));
    double ideal = static_cast<double>(c.n_ops) * c.work_ns * 1e-9 / c.parallelism();
    std::printf("RESULT bench=overhead impl=%s dag=%s work_us=%g workers=%d ops=%lld "
                "seconds=%.6f ideal_s=%.6f overhead=%.4f ns_per_task=%.1f\n",
                impl, c.chain ? "chain" : "independent", c.work_ns * 1e-3, c.workers,
                static_cast<long long>(c.n_ops), med, ideal, (med - ideal) / ideal,
                med / static_cast<double>(c.n_ops) * 1e9);
    std::fflush(stdout);
}

void run(tf::Executor &executor, const config &c)
{
    std::vector<double> br, rr;
    { // warm-up: the executor's workers and the allocator
        tf::Taskflow tf;
        build(tf, c);
        executor.run(tf).wait();
    }
    tf::Taskflow built;
    for (int r = 0; r < c.reps; ++r) {
        double t0 = bench_now_s();
        tf::Taskflow tf;
        build(tf, c);
        executor.run(tf).wait();
        br.push_back(bench_now_s() - t0);
        if (r == c.reps - 1)
            build(built, c);
    }
    executor.run(built).wait(); // its first run, as parex_graph's warm-up launch
    for (int r = 0; r < c.reps; ++r) {
        double t0 = bench_now_s();
        executor.run(built).wait();
        rr.push_back(bench_now_s() - t0);
    }
    report(c, "taskflow_build_run", br);
    report(c, "taskflow_rerun", rr);
}

int parse_works(const char *s, std::vector<double> &works)
{
    while (*s) {
        char *end;
        double w = std::strtod(s, &end);
        if (end == s || !(w > 0.0) || w > 1e6 || (*end && *end != ','))
            return -1;
        works.push_back(w);
        s = *end ? end + 1 : end;
    }
    return works.empty() ? -1 : 0;
}

} // namespace

int main(int argc, char **argv)
{
    std::string dag = "all";
    const char *work_list = "1,10,100";
    double target_s = 0.3;
    int reps = 3, workers = 2;
    for (int i = 1; i < argc; ++i) {
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!std::strcmp(argv[i], "--dag") && v)
            dag = argv[++i];
        else if (!std::strcmp(argv[i], "--work-us") && v)
            work_list = argv[++i];
        else if (!std::strcmp(argv[i], "--target-s") && v)
            target_s = std::atof(argv[++i]);
        else if (!std::strcmp(argv[i], "--reps") && v)
            reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--workers") && v)
            workers = std::atoi(argv[++i]);
        else
            reps = -1;
    }
    std::vector<double> works;
    if (parse_works(work_list, works) != 0 || !(target_s > 0.0 && target_s <= 60.0) || reps < 1 ||
        reps > 100 || workers < 1 || workers > 1024 ||
        (dag != "all" && dag != "chain" && dag != "independent")) {
        std::fprintf(stderr,
                     "usage: %s [--dag all|chain|independent] [--work-us 1,10,100] "
                     "[--target-s 0.3] [--reps 3] [--workers 2]\n",
                     argv[0]);
        return 2;
    }
    double per_ns = bench_spin_calibrate();
    tf::Executor executor(static_cast<size_t>(workers));
    for (int chain = 1; chain >= 0; --chain) {
        if (dag != "all" && dag != (chain ? "chain" : "independent"))
            continue;
        for (double w : works) {
            config c{chain == 1, w * 1e3, bench_spin_iters(w * 1e3, per_ns), workers, 0, reps};
            c.n_ops = static_cast<int64_t>(target_s * 1e9 * c.parallelism() / c.work_ns);
            if (c.n_ops < 1)
                c.n_ops = 1;
            run(executor, c);
        }
    }
    std::fprintf(stderr, "bench_overhead_taskflow: %.3f spin iterations/ns\n", per_ns);
    return 0;
}
