# Counter-based random numbers (include/parex/rng.h, tests/check_rng.c): known answers, and the
# same stream from a loop, serial and threads with 1, 2 and 3 ranks; label concurrency.
px_add_check_test(check_rng SOURCES check_rng.c THREADS 1 2 3 LABELS concurrency TIMEOUT 300
                  TEAM_CONCURRENCY)
# Under TSan only the "spaces" tcase, the one with threads: the known answers and the moments
# of 10^7 draws are serial arithmetic, which TSan has nothing to look at in (17 s at -O0 on CI,
# session 27); ASan and the normal build run every tcase.
if(PX_SANITIZE STREQUAL "tsan")
  get_property(_px_rng_tests DIRECTORY PROPERTY TESTS)
  list(FILTER _px_rng_tests INCLUDE REGEX "^check_rng_t")
  set_property(TEST ${_px_rng_tests} APPEND PROPERTY ENVIRONMENT CK_RUN_CASE=spaces)
endif()
