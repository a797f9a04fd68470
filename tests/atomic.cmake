# Portable atomics (include/parex/atomic.h, tests/check_atomic.c): 8 pthreads and a threads-space
# launch with 1, 2 and 8 ranks hammer every operation; label concurrency (runs under TSan).
px_add_check_test(check_atomic SOURCES check_atomic.c THREADS 1 2 8 LABELS concurrency
                  TEAM_CONCURRENCY
                  TIMEOUT 300)
