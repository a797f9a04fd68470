# Check suite of engine graphs (core/engine/graph*.c, parex/graph.h): a launch equals pushing the
# recorded ops one by one (randomized DAG of 10,000 ops over 64 Vars on 1, 2 and 3 CPU workers),
# 1,000 launches interleaved with pushes, failures, misuse statuses and deferred destroy. Runs
# once per engine kind and Threads size, at full size under the sanitizers too (about 4 s per
# run under TSan); PX_TEST_GRAPH_OPS / PX_TEST_GRAPH_LAUNCHES scale it down by hand.
px_add_check_test(check_graph SOURCES check_graph.c check_engine_common.c
                  ENGINES naive pooled per_device THREADS 1 3 LABELS concurrency
                  ENV PX_DEBUG_CHECK=1 TIMEOUT 300)
