# Check suite of the PX_PROFILE setting (core/trace.c, core/settings.c): the path is checked at
# px_initialize, and the trace keeps labels' UTF-8. jansson parses the trace it writes.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(NOT JANSSON_FOUND)
  message(STATUS "parex: jansson not found, check_profile is not built")
  return()
endif()
px_add_check_test(check_profile SOURCES check_profile.c LIBS PkgConfig::JANSSON LABELS core
                  TIMEOUT 120)
