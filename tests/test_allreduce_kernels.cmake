add_dependencies(test_allreduce_kernels backend_cpu_ref)
if(TARGET backend_cpu_onednn)
  add_dependencies(test_allreduce_kernels backend_cpu_onednn)
endif()
