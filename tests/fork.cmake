# Check suite of fork() while the runtime is up (core/init.c): the child's calls return
# promptly, the parent goes on. 1 rank, 2, and more ranks than the CI's two cores.
px_add_check_test(check_fork SOURCES check_fork.c THREADS 1 2 3 LABELS core concurrency
                  TIMEOUT 120)
