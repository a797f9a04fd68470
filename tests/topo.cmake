# Threads topology and binding (spaces/threads/topo*.c): tests/check_topo.c.
# check_topo runs against the library's topology (topo_hwloc.c when hwloc is found, else
# topo_nohwloc.c). check_topo_nohwloc compiles topo.c and topo_nohwloc.c into the test, with
# PXI_TOPO_NO_HWLOC telling check_topo.c which results to expect, so the fallback is tested on
# machines that have hwloc too; its own copy of the pxi_topo_* symbols is linked before
# libparex.a, so the archive's topology objects are never pulled in.
if(PX_ENABLE_THREADS)
  set(_topo_libs "")
  if(PX_HAVE_HWLOC)
    set(_topo_libs PkgConfig::HWLOC)
  endif()
  px_add_check_test(check_topo SOURCES check_topo.c LIBS ${_topo_libs} LABELS threads concurrency
                    TIMEOUT 120 FORK_EACH_TEST)
  if(PX_HAVE_HWLOC)
    px_add_check_test(check_topo_nohwloc
                      SOURCES check_topo.c ${PROJECT_SOURCE_DIR}/spaces/threads/topo.c
                              ${PROJECT_SOURCE_DIR}/spaces/threads/topo_nohwloc.c
                      LABELS threads TIMEOUT 120 FORK_EACH_TEST)
    target_compile_definitions(check_topo_nohwloc PRIVATE PXI_TOPO_NO_HWLOC=1)
    target_compile_options(check_topo_nohwloc PRIVATE -Wconversion)
  endif()
endif()
