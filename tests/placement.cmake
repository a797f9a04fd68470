# Where parex runs things (tests/check_placement.c): kernels and engine ops on Threads instances
# run on the instances' cores whichever thread launches them, and the threads parex creates
# have the affinity masks the docs give them. 1, 2 and 3 ranks (3 puts two ranks on one core
# of the 2-core CI machine); tests needing 2 CPUs or 2 ranks skip with a message.
if(PX_HAVE_THREADS)
  px_add_check_test(check_placement SOURCES check_placement.c THREADS 1 2 3
                    LABELS concurrency TIMEOUT 300)
endif()
