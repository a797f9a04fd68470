# Team launches (tests/check_team.c): serial once, threads at 1, 2, 3, 4 and 8 ranks (8
# oversubscribes the 2-core CI machine on purpose: team barriers must not deadlock; a sanitizer
# build runs 1 and 3).
px_add_check_test(check_team_serial SOURCES check_team.c ENV PX_TEST_SPACE=serial
                  LABELS core TIMEOUT 300)
if(PX_HAVE_THREADS)
  px_add_check_test(check_team_threads SOURCES check_team.c THREADS 1 2 3 4 8
                    ENV PX_TEST_SPACE=threads LABELS concurrency TIMEOUT 600)
endif()
