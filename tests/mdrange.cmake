# MDRange policies: validation, automatic tiles and tile arithmetic (pure functions).
px_add_check_test(check_mdrange SOURCES check_mdrange.c LABELS core)
