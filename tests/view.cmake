# Views: allocation, layouts and strides, mirrors, deep copies, subviews, element access (also
# bounds-checked with PX_DEBUG_CHECK). Zeroing runs in parallel on threads: 1 thread and more
# threads than cores.
px_add_check_test(check_view SOURCES check_view.c view_debug.c LABELS core THREADS 1 3)
# Tools events carry the view's label: checked with the recording test tool of tests/tools.cmake
# when that module is built.
if(TARGET kptest_tool)
  target_include_directories(check_view PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tools)
  target_compile_definitions(check_view PRIVATE KPTEST_TOOL_PATH="$<TARGET_FILE:kptest_tool>")
  target_link_libraries(check_view PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(check_view kptest_tool)
endif()

# Views on the cuda space with bodies compiled by nvcc (plain and PX_DEBUG_CHECK). Needs a GPU
# (exits 77, skipped, without one); not in sanitizer builds (the CUDA runtime is uninstrumented).
if(PX_HAVE_CUDA AND PX_SANITIZE STREQUAL "none")
  add_library(view_cuda_kernels STATIC view_cuda.cu view_cuda_debug.cu)
  target_link_libraries(view_cuda_kernels PUBLIC parex_static CUDA::cudart)
  target_include_directories(view_cuda_kernels PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_options(view_cuda_kernels PRIVATE -Xcompiler=-Wall,-Wextra)
  set_target_properties(view_cuda_kernels PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  px_add_check_test(check_view_cuda SOURCES check_view_cuda.c LIBS view_cuda_kernels CUDA::cudart
                    LABELS cuda TIMEOUT 120)
  set_target_properties(check_view_cuda PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  set_tests_properties(check_view_cuda PROPERTIES SKIP_RETURN_CODE 77)
endif()
