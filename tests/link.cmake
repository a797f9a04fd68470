# Link-level tests of the packaged library (and check_docs, below):
#  - check_static_link: a program linked against libparex.a still finds every built space
#    (Kokkos loses its Serial space in static links when nothing references it);
#  - check_shared_link: the same program against libparex.so;
#  - check_symbols: libparex.so exports only px_* symbols;
#  - check_consumer: install the package, build tests/consumer with find_package(Parex) and with
#    pkg-config, and run both (LABELS install; needs a complete build, so sanitizer runs skip it).
# px_test.c is compiled in rather than px_test_support linked, which would bring parex_static
# into the shared link; it uses only the public API, as the program does.
foreach(kind static shared)
  add_executable(check_${kind}_link check_static_link.c px_test.c)
  if(kind STREQUAL "static")
    target_link_libraries(check_${kind}_link PRIVATE parex_static PkgConfig::CHECK)
  else()
    target_link_libraries(check_${kind}_link PRIVATE parex PkgConfig::CHECK)
  endif()
  target_include_directories(check_${kind}_link PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_options(check_${kind}_link PRIVATE ${PX_C_WARNINGS})
  target_compile_definitions(check_${kind}_link PRIVATE PX_TEST_LINK_KIND="${kind}")
  add_test(NAME check_${kind}_link COMMAND check_${kind}_link)
  set_tests_properties(check_${kind}_link PROPERTIES TIMEOUT 120 LABELS link ENVIRONMENT
                       "CK_TIMEOUT_MULTIPLIER=${PX_TEST_TIMEOUT_MULT};PX_LOG_LEVEL=error")
endforeach()

add_test(NAME check_symbols COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_symbols $<TARGET_FILE:parex>)
set_tests_properties(check_symbols PROPERTIES TIMEOUT 60 LABELS link)

# check_consumer and check_cuda_consumer (tests/cuda) both run `cmake --install` on this build
# tree, which writes its install_manifest.txt: one at a time (RESOURCE_LOCK), but beside the
# other tests, not alone (RUN_SERIAL, which left one of CI's two cores idle while they ran).
add_test(NAME check_consumer
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.sh ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/consumer-work)
set_tests_properties(check_consumer PROPERTIES TIMEOUT 600 LABELS install RESOURCE_LOCK px_install)

# README.md documents every setting the --px-help table lists (tests/check_docs.c).
add_executable(check_docs check_docs.c)
target_link_libraries(check_docs PRIVATE px_test_support)
target_compile_options(check_docs PRIVATE ${PX_C_WARNINGS})
target_compile_definitions(check_docs PRIVATE PX_README_PATH="${PROJECT_SOURCE_DIR}/README.md")
add_test(NAME check_docs COMMAND check_docs)
set_tests_properties(check_docs PROPERTIES TIMEOUT 60 LABELS docs)

# Every PX_API function in include/parex/*.h carries a doc comment, and every public function a
# header's macros generate (parex/atomic.h) is named in its family's (tests/check_api_docs.py).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME check_api_docs
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_api_docs.py
                   ${PROJECT_SOURCE_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(check_api_docs PROPERTIES TIMEOUT 60 LABELS docs)
endif()
