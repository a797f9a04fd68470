# The Cuda space against raw CUDA: bandwidth (copy, triad, sum, CUB) and launch latency.
# Built whenever the library has CUDA; needs a GPU to measure (prints SKIP otherwise).
if(PX_HAVE_CUDA)
  add_executable(bench_cuda bench_cuda.cu)
  target_link_libraries(bench_cuda PRIVATE parex CUDA::cudart)
  target_compile_options(bench_cuda PRIVATE -Xcompiler=-Wall,-Wextra)
  set_target_properties(bench_cuda PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
endif()
