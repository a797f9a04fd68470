# The launch-semantics conformance suite (tests/check_conformance.c), run once per host space:
# serial once, threads at 1, 2, 3, 4 and 8 ranks (more ranks than this machine's cores on purpose;
# 1 and 3 in a sanitizer build).
# PX_TEST_SPACE picks the space; a space missing from the build fails the run with a message.
px_add_check_test(check_conformance_serial SOURCES check_conformance.c LIBS m
                  ENV PX_TEST_SPACE=serial TIMEOUT 600)
if(PX_HAVE_THREADS)
  px_add_check_test(check_conformance_threads SOURCES check_conformance.c LIBS m
                    THREADS 1 2 3 4 8 ENV PX_TEST_SPACE=threads LABELS concurrency
                    TEAM_CONCURRENCY TIMEOUT 600)
endif()
