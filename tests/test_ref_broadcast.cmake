# Links the reference kernels under test (plugins/backend_cpu_ref) and libm.
target_link_libraries(${name} PRIVATE xpb_ref_kernels m)
