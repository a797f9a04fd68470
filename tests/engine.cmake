# Check suite of the dependency engine (core/engine/) and the trace recorder (core/trace.c).
# One run per engine kind and Threads size (3 ranks oversubscribes a 2-core CI machine on
# purpose); sanitizer builds run a smaller randomized workload. jansson validates the trace
# JSON and is linked into this test only.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(NOT JANSSON_FOUND)
  message(STATUS "parex: jansson not found, check_engine is not built")
  return()
endif()
set(PX_ENGINE_TEST_ENV PX_DEBUG_CHECK=1)
if(NOT PX_SANITIZE STREQUAL "none")
  list(APPEND PX_ENGINE_TEST_ENV PX_TEST_ENGINE_OPS=2000)
endif()
px_add_check_test(check_engine SOURCES check_engine.c LIBS PkgConfig::JANSSON
                  ENGINES naive pooled per_device THREADS 1 3 LABELS concurrency
                  ENV ${PX_ENGINE_TEST_ENV} TIMEOUT 300)
