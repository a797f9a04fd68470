# The messages of a newcomer's usual mistakes, matched by text and level (issue 17): unknown
# space names, reducer/kernel type mismatches, oversize reducers (tests/check_messages.c).
px_add_check_test(check_messages SOURCES check_messages.c LABELS core THREADS 1 2)
