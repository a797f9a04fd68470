# Counter-based random numbers (include/parex/rng.h, tests/check_rng.c): known answers, and the
# same stream from a loop, serial and threads with 1, 2 and 3 ranks; label concurrency.
# Under TSan only the "spaces" tcase, the one with threads: the known answers and the moments
# of 10^7 draws are serial arithmetic, which TSan has nothing to look at in (17 s at -O0 on CI,
# session 27); ASan and the normal build run every tcase.
set(_px_rng_env)
if(PX_SANITIZE STREQUAL "tsan")
  set(_px_rng_env CK_RUN_CASE=spaces)
endif()
px_add_check_test(check_rng SOURCES check_rng.c THREADS 1 2 3 LABELS concurrency TIMEOUT 300
                  TEAM_CONCURRENCY ENV ${_px_rng_env})
