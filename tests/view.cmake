# Views: allocation, layouts and strides, mirrors, deep copies, subviews, element access (also
# bounds-checked with PX_DEBUG_CHECK). Zeroing runs in parallel on threads: 1 thread and more
# threads than cores.
px_add_check_test(check_view SOURCES check_view.c view_debug.c LABELS core THREADS 1 3)
