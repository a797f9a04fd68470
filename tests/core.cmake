# Core: lifecycle, settings, logging, registry, memory, reducers; policy arithmetic.
px_add_check_test(check_core SOURCES check_core.c LABELS core concurrency)
px_add_check_test(check_policy SOURCES check_policy.c LABELS core)
