# Check suites of the dependency engine (core/engine/) and the trace recorder (core/trace.c),
# one per concept: Var queues, failures, operators and kernel ops, lanes (backpressure,
# inlining), trace. Each runs once per engine kind and Threads size (3 ranks oversubscribes a
# 2-core CI machine on purpose); sanitizer builds run a smaller randomized workload. jansson
# validates the trace JSON and is linked into the trace suite only.
set(PX_ENGINE_TEST_ENV PX_DEBUG_CHECK=1)
if(NOT PX_SANITIZE STREQUAL "none")
  list(APPEND PX_ENGINE_TEST_ENV PX_TEST_ENGINE_OPS=2000)
endif()
foreach(suite queue failure operators lanes)
  px_add_check_test(check_engine_${suite} SOURCES check_engine_${suite}.c check_engine_common.c
                    ENGINES naive pooled per_device THREADS 1 3 LABELS concurrency
                    ENV ${PX_ENGINE_TEST_ENV} TIMEOUT 300)
endforeach()
# The wait primitive every runtime wait uses (base/wait.c).
px_add_check_test(check_wait SOURCES check_wait.c LABELS core concurrency)
# Runs of the worker hand-off (core/engine/var_queue.h, pxi_var_run): claimed writes equal the
# same ops granted one by one.
px_add_check_test(check_engine_runs SOURCES check_engine_runs.c check_engine_common.c
                  ENGINES naive pooled per_device THREADS 1 3 LABELS concurrency
                  ENV ${PX_ENGINE_TEST_ENV} TIMEOUT 300)
# Bulk execution at push (core/engine/bulk.h): ops joining bulk blocks equal the same ops pushed
# one by one.
px_add_check_test(check_engine_bulk SOURCES check_engine_bulk.c check_engine_common.c
                  ENGINES naive pooled per_device THREADS 1 3 LABELS concurrency
                  ENV ${PX_ENGINE_TEST_ENV} TIMEOUT 300)
# Only check_engine_trace needs jansson: without it that suite alone is left out (an early
# return() here once also dropped every suite registered below it).
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(JANSSON_FOUND)
  px_add_check_test(check_engine_trace SOURCES check_engine_trace.c check_engine_common.c
                    LIBS PkgConfig::JANSSON ENGINES naive pooled per_device THREADS 1 3
                    LABELS concurrency ENV ${PX_ENGINE_TEST_ENV} TIMEOUT 300)
else()
  message(STATUS "parex: jansson not found, check_engine_trace is not built")
endif()
# Help-while-waiting (core/engine/calls.c): the waiting thread runs ready ops; with the default
# Threads pool (it fills the processors: runtime.c's pool_full) and with one thread (it does
# not); also bound to one processor (taskset), where the waiter holds the lanes.
px_add_check_test(check_engine_help SOURCES check_engine_help.c check_engine_common.c
                  ENGINES naive per_device THREADS - 1 LABELS concurrency
                  ENV PX_ENGINE_MAX_PENDING=64 PX_ENGINE_INLINE_NS=0 TIMEOUT 120)
find_program(PX_TASKSET taskset)
if(PX_TASKSET)
  add_test(NAME check_engine_help_one_cpu COMMAND ${PX_TASKSET} -c 0 $<TARGET_FILE:check_engine_help>)
  set_tests_properties(check_engine_help_one_cpu PROPERTIES LABELS concurrency TIMEOUT 120
    ENVIRONMENT "PX_ENGINE_MAX_PENDING=64;PX_ENGINE_INLINE_NS=0;PX_TEST_ONE_CPU=1;PX_DEFAULT_SPACE=threads;CK_TIMEOUT_MULTIPLIER=${PX_TEST_TIMEOUT_MULT}")
endif()
# Oversubscription (core/oversub.h): the rule, the throttled budgets, an explicit policy winning;
# also on one processor (taskset), where the default team fits and a larger one does not.
px_add_check_test(check_oversub SOURCES check_oversub.c LABELS core concurrency TIMEOUT 120)
if(PX_TASKSET)
  add_test(NAME check_oversub_one_cpu COMMAND ${PX_TASKSET} -c 0 $<TARGET_FILE:check_oversub>)
  set_tests_properties(check_oversub_one_cpu PROPERTIES LABELS "core;concurrency" TIMEOUT 120
    ENVIRONMENT "CK_TIMEOUT_MULTIPLIER=${PX_TEST_TIMEOUT_MULT}")
endif()
