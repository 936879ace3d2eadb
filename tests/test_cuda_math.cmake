# Compiles the cuda backend's per-element and index maths (plugins/backend_cuda/*_math.h) as C
# and checks them against the reference kernels; needs no toolkit.
target_link_libraries(${name} PRIVATE xpb_cuda_plan xpb_ref_kernels m)
