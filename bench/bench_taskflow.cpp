// bench/bench_taskflow.cpp - Taskflow 4.1.0 on the engine benchmark's DAGs (bench_engine.c), for
// the per-task comparison of issue 16: empty tasks, the same dependences parex derives from its
// Vars, so ns/task compares like with like.
//
//   chain        N tasks, each after the previous one
//   independent  N tasks, task k after task k - 1024 (parex: op k writes Var k % 1024)
//   wavefront    W x W grid, task (i,j) after (i-1,j) and (i,j-1)
//   tree         binary tree reduction over L leaves (2L - 1 tasks), a parent after its children
//
// For each DAG: "build_run" = build the tf::Taskflow + executor.run(tf).wait(), "rerun" =
// executor.run(tf).wait() on the built graph; the median of --reps runs each, printed as
//   RESULT bench=taskflow dag=<dag> impl=<taskflow_build_run|taskflow_rerun> workers=<W>
//          ops=<N> ns_per_task=<x>
// Run: build-DIR/bench/bench_taskflow [--ops 200000] [--wf 1000] [--tree-leaves 131072]
//      [--reps 5] [--workers 2] [--only chain|independent|wavefront|tree]
#include <taskflow/taskflow.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Build DAG @dag of size @n into @tf; returns the task count.
size_t build(tf::Taskflow &tf, const std::string &dag, int n)
{
    std::vector<tf::Task> t;
    if (dag == "chain" || dag == "independent") {
        const int stride = dag == "chain" ? 1 : 1024;
        t.reserve(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            t.push_back(tf.emplace([]() {}));
            if (i >= stride)
                t[static_cast<size_t>(i - stride)].precede(t[static_cast<size_t>(i)]);
        }
    } else if (dag == "wavefront") {
        const size_t w = static_cast<size_t>(n);
        t.reserve(w * w);
        for (size_t i = 0; i < w; ++i)
            for (size_t j = 0; j < w; ++j) {
                t.push_back(tf.emplace([]() {}));
                if (i > 0)
                    t[(i - 1) * w + j].precede(t[i * w + j]);
                if (j > 0)
                    t[i * w + j - 1].precede(t[i * w + j]);
            }
    } else { // tree: heap numbering, node p has children 2p+1 and 2p+2
        const size_t total = 2 * static_cast<size_t>(n) - 1;
        t.reserve(total);
        for (size_t k = 0; k < total; ++k)
            t.push_back(tf.emplace([]() {}));
        for (size_t p = 0; p + 1 < static_cast<size_t>(n); ++p) {
            t[2 * p + 1].precede(t[p]);
            t[2 * p + 2].precede(t[p]);
        }
    }
    return t.size();
}

} // namespace

int main(int argc, char **argv)
{
    int n_ops = 200000, wf = 1000, leaves = 131072, reps = 5, workers = 2;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--ops") && i + 1 < argc)
            n_ops = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--wf") && i + 1 < argc)
            wf = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--tree-leaves") && i + 1 < argc)
            leaves = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--workers") && i + 1 < argc)
            workers = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: %s [--ops N] [--wf W] [--tree-leaves L] [--reps R] "
                         "[--workers W] [--only chain|independent|wavefront|tree]\n",
                         argv[0]);
            return 2;
        }
    }
    if (n_ops < 1 || wf < 1 || wf > 4000 || leaves < 1 || leaves > (1 << 22) || reps < 1 ||
        reps > 100 || workers < 1)
        return 2;
    tf::Executor executor(static_cast<size_t>(workers));
    const char *dags[] = {"chain", "independent", "wavefront", "tree"};
    for (const char *dag : dags) {
        if (only && std::strcmp(only, dag) != 0)
            continue;
        std::string d(dag);
        int n = d == "wavefront" ? wf : d == "tree" ? leaves : n_ops;
        std::vector<double> br, rr;
        size_t tasks = 0;
        { // warm-up: the executor's workers and the allocator
            tf::Taskflow tf;
            build(tf, d, n);
            executor.run(tf).wait();
        }
        for (int r = 0; r < reps; ++r) {
            double t0 = now_s();
            tf::Taskflow tf;
            tasks = build(tf, d, n);
            executor.run(tf).wait();
            br.push_back(now_s() - t0);
            if (r == reps - 1) {
                for (int k = 0; k < reps; ++k) {
                    double t1 = now_s();
                    executor.run(tf).wait();
                    rr.push_back(now_s() - t1);
                }
            }
        }
        double ns_br = median(br) / static_cast<double>(tasks) * 1e9;
        double ns_rr = median(rr) / static_cast<double>(tasks) * 1e9;
        std::printf("RESULT bench=taskflow dag=%s impl=taskflow_build_run workers=%d ops=%zu "
                    "ns_per_task=%.1f\n",
                    dag, workers, tasks, ns_br);
        std::printf("RESULT bench=taskflow dag=%s impl=taskflow_rerun workers=%d ops=%zu "
                    "ns_per_task=%.1f\n",
                    dag, workers, tasks, ns_rr);
    }
    return 0;
}
