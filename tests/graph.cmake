# Check suite of engine graphs (core/engine/graph.c, parex/graph.h): a launch equals pushing the
# recorded ops one by one (randomized DAG over 64 Vars on 1, 2 and 3 CPU workers), launches
# interleave with pushes, failures, misuse statuses and deferred destroy. Runs once per engine
# kind and Threads size; sanitizer builds record a smaller DAG and launch fewer times.
set(PX_GRAPH_TEST_ENV PX_DEBUG_CHECK=1)
if(NOT PX_SANITIZE STREQUAL "none")
  list(APPEND PX_GRAPH_TEST_ENV PX_TEST_GRAPH_OPS=3000 PX_TEST_GRAPH_LAUNCHES=300)
endif()
px_add_check_test(check_graph SOURCES check_graph.c check_engine_common.c
                  ENGINES naive pooled per_device THREADS 1 3 LABELS concurrency
                  ENV ${PX_GRAPH_TEST_ENV} TIMEOUT 300)
