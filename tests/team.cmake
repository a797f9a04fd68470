# Team launches (tests/check_team.c): serial once, threads at 1, 2, 3 and 8 ranks (3 and 8
# oversubscribe the 2-core CI machine on purpose: team barriers must not deadlock; ASan runs 1
# and 3, TSan 3: tests/CMakeLists.txt, TEAM_CONCURRENCY). 4 ran until session 27: its teams of
# 1-4 members are those of 8 ranks, where a team of 4 shares the pool with another; 11 s of
# CI's test time.
px_add_check_test(check_team_serial SOURCES check_team.c ENV PX_TEST_SPACE=serial
                  LABELS core TIMEOUT 300)
if(PX_HAVE_THREADS)
  px_add_check_test(check_team_threads SOURCES check_team.c THREADS 1 2 3 8
                    ENV PX_TEST_SPACE=threads LABELS concurrency TEAM_CONCURRENCY TIMEOUT 600)
endif()
