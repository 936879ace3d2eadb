target_link_libraries(${name} PRIVATE xpb_ref_kernels m)
