# Execution-space instances (tests/check_instance.c): threads at 1, 2, 3 and 4 ranks (3 and 4
# oversubscribe the 2-core CI machine: instances then share cores, and the concurrency tests,
# which meet through flags and never through timing, must still pass), serial once.
px_add_check_test(check_instance_serial SOURCES check_instance.c ENV PX_TEST_SPACE=serial
                  LABELS core concurrency TIMEOUT 300)
if(PX_HAVE_THREADS)
  px_add_check_test(check_instance_threads SOURCES check_instance.c THREADS 1 2 3 4
                    ENV PX_TEST_SPACE=threads LABELS concurrency TIMEOUT 300)
endif()
# Bad input, limits and lifetimes (tests/check_instance_limits.c): serial, threads at 1, 2 and 4
# ranks (the uneven 3-rank split is check_instance's and check_instance_races' to cover).
px_add_check_test(check_instance_limits_serial SOURCES check_instance_limits.c
                  ENV PX_TEST_SPACE=serial LABELS core concurrency TIMEOUT 300)
if(PX_HAVE_THREADS)
  px_add_check_test(check_instance_limits_threads SOURCES check_instance_limits.c THREADS 1 2 4
                    ENV PX_TEST_SPACE=threads LABELS concurrency TIMEOUT 300)
endif()
# Concurrent calls (tests/check_instance_races.c): serial, threads at 1, 2, 3 and 4 ranks.
px_add_check_test(check_instance_races_serial SOURCES check_instance_races.c
                  ENV PX_TEST_SPACE=serial LABELS core concurrency TIMEOUT 300)
if(PX_HAVE_THREADS)
  px_add_check_test(check_instance_races_threads SOURCES check_instance_races.c THREADS 1 2 3 4
                    ENV PX_TEST_SPACE=threads LABELS concurrency TIMEOUT 300)
endif()
