# Scatter-add (include/parex/scatter.h, core/scatter.c, tests/check_scatter.c): every mode on
# serial and threads with 1, 2, 3, 4 and 8 ranks (1 and 3 in a sanitizer build); label
# concurrency (runs under TSan).
px_add_check_test(check_scatter SOURCES check_scatter.c THREADS 1 2 3 4 8 LABELS concurrency
                  TEAM_CONCURRENCY
                  TIMEOUT 300)
