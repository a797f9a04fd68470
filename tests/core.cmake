# Core: lifecycle, registry, memory, reducers; settings and logging; policy arithmetic.
px_add_check_test(check_core SOURCES check_core.c LABELS core concurrency)
px_add_check_test(check_settings SOURCES check_settings.c LABELS core)
px_add_check_test(check_policy SOURCES check_policy.c LABELS core)
