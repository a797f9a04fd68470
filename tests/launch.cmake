# The launch path: every launch status through a direct launch and an engine push
# (tests/check_launch.c), at 1, 2 and more ranks than cores.
px_add_check_test(check_launch SOURCES check_launch.c LABELS core concurrency THREADS 1 2 3)
