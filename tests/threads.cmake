# The Threads execution space's pool, schedules, fan-in and launch rules (tests/check_threads.c),
# run with 1, 2, 3, 4 and 8 ranks (8 oversubscribes the 2-core CI machine on purpose; a
# sanitizer build runs 1 and 3: tests/CMakeLists.txt, px_add_check_test; not TEAM_CONCURRENCY:
# at 1 its launchers from several pthreads share a pool of one).
if(PX_ENABLE_THREADS)
  px_add_check_test(check_threads SOURCES check_threads.c THREADS 1 2 3 4 8 LABELS concurrency
                    TIMEOUT 300 FORK_EACH_TEST)
endif()

# The pool's take-over of blocks whose workers have not claimed them yet (tests/check_takeover.c,
# spaces/threads/pool.h pxi_tpool_run_ex): workers held back through the claim hook.
if(PX_ENABLE_THREADS)
  px_add_check_test(check_takeover SOURCES check_takeover.c THREADS 1 2 4 8 LABELS concurrency
                    TIMEOUT 120)
endif()
