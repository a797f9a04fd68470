# Counter-based random numbers (include/parex/rng.h, tests/check_rng.c): known answers, and the
# same stream from a loop, serial and threads with 1, 2 and 3 ranks; label concurrency.
px_add_check_test(check_rng SOURCES check_rng.c THREADS 1 2 3 LABELS concurrency TIMEOUT 300
                  TEAM_CONCURRENCY)
