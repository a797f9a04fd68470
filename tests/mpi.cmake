# MPI messages as engine ops (parex/mpi.h, core/engine/mpi.c): tests/check_mpi.c is a plain MPI
# program (Check's fork per test does not mix with MPI) run under mpirun with 1-4 ranks; ranks
# beyond the 2 cores of CI are oversubscribed on purpose. Built when the library has MPI
# (PX_HAVE_MPI), also under the sanitizers, with Open MPI's own leaks and races suppressed
# (px_mpi_test_env, tests/CMakeLists.txt).
if(NOT PX_HAVE_MPI)
  return()
endif()
add_executable(check_mpi check_mpi.c)
target_link_libraries(check_mpi PRIVATE parex MPI::MPI_C)
target_compile_options(check_mpi PRIVATE ${PX_C_WARNINGS})
target_compile_definitions(check_mpi PRIVATE _DEFAULT_SOURCE)
target_include_directories(check_mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tools)
target_link_libraries(check_mpi PRIVATE ${CMAKE_DL_LIBS})
# mpirun refuses root without --allow-run-as-root; CI runs as root on 2 cores.
set(_px_mpirun ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe ${MPIEXEC_NUMPROC_FLAG})
# mpirun binds 1 or 2 ranks to a core each here and leaves 3-4 unbound: np1/np2 run the waits'
# one-processor path (the waiter holds MPI progress, core/engine/calls.c); np3/np4 are
# oversubscribed (core/oversub.h) and take it too; check_mpi_np4_spin (below) runs the other.
foreach(np 1 2 3 4)
  add_test(NAME check_mpi_np${np} COMMAND ${_px_mpirun} ${np} $<TARGET_FILE:check_mpi>)
  set_tests_properties(check_mpi_np${np} PROPERTIES LABELS "mpi;concurrency" TIMEOUT 120
                       ENVIRONMENT "PX_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()
# The other engine kinds (naive: ops post on their pusher; pooled: on any worker).
foreach(kind naive pooled)
  add_test(NAME check_mpi_np2_${kind} COMMAND ${_px_mpirun} 2 $<TARGET_FILE:check_mpi>)
  set_tests_properties(check_mpi_np2_${kind} PROPERTIES LABELS "mpi;concurrency" TIMEOUT 120
                       ENVIRONMENT "PX_NUM_THREADS=2;PX_ENGINE=${kind};OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()
# Kokkos Tools: each message is a profile section (the recording tool of tests/tools.cmake).
# (tests/tools.cmake defines kptest_tool; it is included after this file.)
if(PX_TEST_MODULES STREQUAL "" OR "tools" IN_LIST PX_TEST_MODULES)
  add_test(NAME check_mpi_tools_np2 COMMAND ${_px_mpirun} 2 $<TARGET_FILE:check_mpi>)
  set_tests_properties(check_mpi_tools_np2 PROPERTIES LABELS "mpi;concurrency" TIMEOUT 120
    ENVIRONMENT "PX_NUM_THREADS=1;PX_TOOLS_LIBS=$<TARGET_FILE:kptest_tool>;OMPI_MCA_rmaps_base_oversubscribe=1")
  add_dependencies(check_mpi kptest_tool)
endif()
# The ops' arguments (each bad one refused, the edges MPI allows, calls MPI refuses at post) and
# as many outstanding messages as a lowered backpressure limit.
add_executable(check_mpi_args check_mpi_args.c)
target_link_libraries(check_mpi_args PRIVATE parex MPI::MPI_C)
target_compile_options(check_mpi_args PRIVATE ${PX_C_WARNINGS})
foreach(np 1 3)
  add_test(NAME check_mpi_args_np${np} COMMAND ${_px_mpirun} ${np} $<TARGET_FILE:check_mpi_args>)
  set_tests_properties(check_mpi_args_np${np} PROPERTIES LABELS mpi TIMEOUT 60
                       ENVIRONMENT "PX_NUM_THREADS=1;PX_ENGINE_MAX_PENDING=4096;OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()
# px_finalize with messages outstanding: waits for the one that matches, cancels the other;
# then cycles of px_initialize / px_finalize. Before them, px_mpi_finalize refusing an op
# that is queued with no request yet. "concurrency": TSan runs them too (the progress thread
# beside the finalize; the race that let MPI_Finalize run under a queued op showed there).
foreach(np 1 3)
  add_test(NAME check_mpi_finalize_np${np}
           COMMAND ${_px_mpirun} ${np} $<TARGET_FILE:check_mpi> --finalize)
  set_tests_properties(check_mpi_finalize_np${np} PROPERTIES LABELS "mpi;concurrency" TIMEOUT 60
                       ENVIRONMENT "PX_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()
# Thread level: pushes fail with PX_EMPI before MPI_Init and below MPI_THREAD_MULTIPLE.
# Each rank bound to a core of its own (the CI machine has 2): one processor, nothing oversubscribed.
add_test(NAME check_mpi_pieces_np2 COMMAND ${MPIEXEC_EXECUTABLE} --allow-run-as-root
         ${MPIEXEC_NUMPROC_FLAG} 2 --map-by core --bind-to core $<TARGET_FILE:check_mpi> --pieces)
set_tests_properties(check_mpi_pieces_np2 PROPERTIES LABELS mpi TIMEOUT 60
                     ENVIRONMENT "PX_NUM_THREADS=1")
add_test(NAME check_mpi_thread_level COMMAND ${_px_mpirun} 1 $<TARGET_FILE:check_mpi> --level)
set_tests_properties(check_mpi_thread_level PROPERTIES LABELS mpi TIMEOUT 60)
# Oversubscription across a node's ranks (core/oversub.h): unbound ranks with a default team
# each; detected exactly when ranks x threads exceed the processors (2 and 4 ranks here, not 1),
# an explicit PX_WAIT_POLICY=active kept; a ring of messages and allreduces in bounded time.
add_executable(check_mpi_oversub check_mpi_oversub.c)
target_link_libraries(check_mpi_oversub PRIVATE parex MPI::MPI_C)
target_compile_options(check_mpi_oversub PRIVATE ${PX_C_WARNINGS})
# Its sched_yield and MPI_Testsome counters interpose on the libraries' calls (exported).
set_target_properties(check_mpi_oversub PROPERTIES ENABLE_EXPORTS ON)
target_link_libraries(check_mpi_oversub PRIVATE ${CMAKE_DL_LIBS})
foreach(np 1 2 4)
  add_test(NAME check_mpi_oversub_np${np}
           COMMAND ${_px_mpirun} ${np} --bind-to none $<TARGET_FILE:check_mpi_oversub>)
  set_tests_properties(check_mpi_oversub_np${np} PROPERTIES LABELS "mpi;concurrency" TIMEOUT 120
                       ENVIRONMENT "PX_LOG_LEVEL=info;OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()
add_test(NAME check_mpi_oversub_np2_active
         COMMAND ${_px_mpirun} 2 --bind-to none $<TARGET_FILE:check_mpi_oversub>)
set_tests_properties(check_mpi_oversub_np2_active PROPERTIES LABELS "mpi;concurrency" TIMEOUT 120
                     ENVIRONMENT "PX_LOG_LEVEL=info;PX_WAIT_POLICY=active;OMPI_MCA_rmaps_base_oversubscribe=1")
# mpi_yield_when_idle given to mpirun (--mca; a word Open MPI reads as true) on a node that is
# not oversubscribed: parex must read it from the environment as Open MPI does (MPI_T agrees).
add_test(NAME check_mpi_oversub_np2_mca_yield
         COMMAND ${_px_mpirun} 2 --bind-to none --mca mpi_yield_when_idle true
                 $<TARGET_FILE:check_mpi_oversub>)
set_tests_properties(check_mpi_oversub_np2_mca_yield PROPERTIES LABELS "mpi" TIMEOUT 120
                     ENVIRONMENT "PX_LOG_LEVEL=info;OMPI_MCA_rmaps_base_oversubscribe=1")
# --mca mpi_yield_when_idle 0 on an oversubscribed node (4 ranks on 2 cores): the explicit
# value wins over mpi_oversubscribe in Open MPI 4, and parex must agree with MPI_T.
add_test(NAME check_mpi_oversub_np4_mca_noyield
         COMMAND ${_px_mpirun} 4 --bind-to none --mca mpi_yield_when_idle 0
                 $<TARGET_FILE:check_mpi_oversub>)
set_tests_properties(check_mpi_oversub_np4_mca_noyield PROPERTIES LABELS "mpi" TIMEOUT 120
                     ENVIRONMENT "PX_LOG_LEVEL=info;OMPI_MCA_rmaps_base_oversubscribe=1")
# The variable exported, not given to mpirun, as " 2": Open MPI reads leading blanks and any
# nonzero integer as true; so must parex.
add_test(NAME check_mpi_oversub_np2_env_yield
         COMMAND ${_px_mpirun} 2 --bind-to none $<TARGET_FILE:check_mpi_oversub>)
set_tests_properties(check_mpi_oversub_np2_env_yield PROPERTIES LABELS "mpi" TIMEOUT 120
                     ENVIRONMENT "PX_LOG_LEVEL=info;OMPI_MCA_mpi_yield_when_idle= 2;OMPI_MCA_rmaps_base_oversubscribe=1")
# An explicit budget keeps the spinning path on oversubscribed ranks (no one-processor hold):
# check_mpi's 3-4 unbound ranks, which the detection above now sends the holding way.
add_test(NAME check_mpi_np4_spin COMMAND ${_px_mpirun} 4 $<TARGET_FILE:check_mpi>)
set_tests_properties(check_mpi_np4_spin PROPERTIES LABELS "mpi;concurrency" TIMEOUT 120
                     ENVIRONMENT "PX_NUM_THREADS=1;PX_SPIN_US=100;OMPI_MCA_rmaps_base_oversubscribe=1")
get_directory_property(_px_tests TESTS)
list(FILTER _px_tests INCLUDE REGEX "^check_mpi")
px_mpi_test_env(${_px_tests})
