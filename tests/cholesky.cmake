# Tests of the tiled Cholesky example (examples/cholesky): the Check suite compiles the
# example's sources directly; the command-line tests run parex-cholesky itself.
include(${PROJECT_SOURCE_DIR}/examples/cholesky/blas.cmake)
if(NOT PXCHOL_BLAS_FOUND)
  message(STATUS "parex: openblas/lapacke not found, Cholesky tests skipped")
  return()
endif()
# SuiteSparse inputs live beside the project; tests that need them skip when it is absent.
set(PXCHOL_MATRIX_DIR ${PROJECT_SOURCE_DIR}/../shared/data/matrices)

px_add_check_test(check_cholesky SOURCES check_cholesky.c ${PXCHOL_SOURCES}
                  LIBS PkgConfig::PXCHOL_BLAS m LABELS "concurrency;cholesky"
                  ENGINES naive pooled per_device ENV OPENBLAS_NUM_THREADS=1 TIMEOUT 120)
target_include_directories(check_cholesky PRIVATE ${PXCHOL_INCLUDE_DIRS})
target_compile_definitions(check_cholesky PRIVATE PXCHOL_MATRIX_DIR="${PXCHOL_MATRIX_DIR}")
# --repeat: graph launches against pushed repeats (examples/cholesky/chol_repeat.h).
px_add_check_test(check_cholesky_repeat SOURCES check_cholesky_repeat.c ${PXCHOL_SOURCES}
                  LIBS PkgConfig::PXCHOL_BLAS m LABELS "concurrency;cholesky"
                  ENGINES naive pooled per_device ENV OPENBLAS_NUM_THREADS=1 TIMEOUT 120)
target_include_directories(check_cholesky_repeat PRIVATE ${PXCHOL_INCLUDE_DIRS})

if(NOT PX_BUILD_EXAMPLES)
  return()
endif()
# Command line: every engine kind, ragged tiles, a real matrix, bad flags, a non-SPD input.
set(_chol_env OPENBLAS_NUM_THREADS=1 PX_LOG_LEVEL=error)
foreach(kind naive pooled per_device)
  add_test(NAME cholesky_cli_n256_tile64_${kind}
           COMMAND parex-cholesky --n 256 --tile 64 --engine ${kind} --workers 2
                   --check 1e-12 --json)
  set_tests_properties(cholesky_cli_n256_tile64_${kind} PROPERTIES ENVIRONMENT "${_chol_env}"
                       LABELS "cholesky" TIMEOUT 60)
endforeach()
add_test(NAME cholesky_cli_n256_tile64_per_device_fifo
         COMMAND parex-cholesky --n 256 --tile 64 --engine per_device --workers 2 --fifo
                 --check 1e-12)
add_test(NAME cholesky_cli_ragged_n300_tile64
         COMMAND parex-cholesky --n 300 --tile 64 --check 1e-12)
add_test(NAME cholesky_cli_estimated_residual
         COMMAND parex-cholesky --n 512 --tile 96 --residual estimate --check 1e-12)
set_tests_properties(cholesky_cli_n256_tile64_per_device_fifo
                     cholesky_cli_ragged_n300_tile64 cholesky_cli_estimated_residual
                     PROPERTIES ENVIRONMENT "${_chol_env}" LABELS "cholesky" TIMEOUT 60)
if(EXISTS ${PXCHOL_MATRIX_DIR}/bcsstk09.mtx)
  add_test(NAME cholesky_cli_bcsstk09
           COMMAND parex-cholesky --matrix ${PXCHOL_MATRIX_DIR}/bcsstk09.mtx --tile 128
                   --check 1e-12 --json)
  set_tests_properties(cholesky_cli_bcsstk09 PROPERTIES ENVIRONMENT "${_chol_env}"
                       LABELS "cholesky" TIMEOUT 60)
endif()
# --repeat through a recorded graph: the residual passes, and the graph and the pushed repeats
# print the same residual (their factors are bitwise equal).
add_test(NAME cholesky_cli_repeat3_graph_on
         COMMAND parex-cholesky --n 256 --tile 64 --workers 2 --repeat 3 --graph on --check 1e-12)
add_test(NAME cholesky_cli_repeat3_graph_on_off_same_residual
         COMMAND sh -c "on=$(\"$0\" --n 192 --tile 48 --repeat 3 --graph on | grep '^residual') && off=$(\"$0\" --n 192 --tile 48 --repeat 3 --graph off | grep '^residual') && echo \"$on\" && test -n \"$on\" && test \"$on\" = \"$off\""
                 $<TARGET_FILE:parex-cholesky>)
add_test(NAME cholesky_cli_bad_graph_value_exits_2
         COMMAND sh -c "out=$(\"$0\" --repeat 2 --graph maybe 2>&1); test $? -eq 2 && echo \"$out\" | grep -q \"bad value 'maybe' for --graph\""
                 $<TARGET_FILE:parex-cholesky>)
set_tests_properties(cholesky_cli_repeat3_graph_on cholesky_cli_repeat3_graph_on_off_same_residual
                     cholesky_cli_bad_graph_value_exits_2
                     PROPERTIES ENVIRONMENT "${_chol_env}" LABELS "cholesky" TIMEOUT 60)
# Expected failures check the exit status and the message together.
add_test(NAME cholesky_cli_bad_flag_exits_2
         COMMAND sh -c "out=$(\"$0\" --n 64 --bogus 2>&1); test $? -eq 2 && echo \"$out\" | grep -q \"unknown flag '--bogus'\""
                 $<TARGET_FILE:parex-cholesky>)
add_test(NAME cholesky_cli_bad_value_exits_2
         COMMAND sh -c "out=$(\"$0\" --engine threaded 2>&1); test $? -eq 2 && echo \"$out\" | grep -q \"bad value 'threaded' for --engine\""
                 $<TARGET_FILE:parex-cholesky>)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cholesky_not_spd.mtx
     "%%MatrixMarket matrix coordinate real symmetric\n4 4 5\n1 1 4\n2 2 4\n3 3 -2\n4 4 4\n2 1 1\n")
add_test(NAME cholesky_cli_not_spd_exits_1_with_message
         COMMAND sh -c "out=$(\"$0\" --matrix \"$1\" --tile 2 2>&1); test $? -eq 1 && echo \"$out\" | grep -q 'not positive definite: the leading minor of order 3'"
                 $<TARGET_FILE:parex-cholesky> ${CMAKE_CURRENT_BINARY_DIR}/cholesky_not_spd.mtx)
add_test(NAME cholesky_cli_not_spd_graph_repeat_exits_1_with_message
         COMMAND sh -c "out=$(\"$0\" --matrix \"$1\" --tile 2 --repeat 2 --graph on 2>&1); test $? -eq 1 && echo \"$out\" | grep -q 'not positive definite: the leading minor of order 3'"
                 $<TARGET_FILE:parex-cholesky> ${CMAKE_CURRENT_BINARY_DIR}/cholesky_not_spd.mtx)
set_tests_properties(cholesky_cli_bad_flag_exits_2 cholesky_cli_bad_value_exits_2
                     cholesky_cli_not_spd_exits_1_with_message
                     cholesky_cli_not_spd_graph_repeat_exits_1_with_message
                     PROPERTIES ENVIRONMENT "${_chol_env}" LABELS "cholesky" TIMEOUT 60)
