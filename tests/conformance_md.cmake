# MDRange launch conformance (tests/check_conformance_md.c), like tests/conformance.cmake: serial
# once, threads at 1, 2, 3, 4 and 8 ranks (more ranks than this machine's cores on purpose;
# 1 and 3 in a sanitizer build).
px_add_check_test(check_conformance_md_serial SOURCES check_conformance_md.c LIBS m
                  ENV PX_TEST_SPACE=serial TIMEOUT 300)
if(PX_HAVE_THREADS)
  px_add_check_test(check_conformance_md_threads SOURCES check_conformance_md.c LIBS m
                    THREADS 1 2 3 4 8 ENV PX_TEST_SPACE=threads LABELS concurrency
                    TEAM_CONCURRENCY TIMEOUT 300)
endif()
