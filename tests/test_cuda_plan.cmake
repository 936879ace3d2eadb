# The cuda backend's planner is plain C: this test runs on every machine, toolkit or not. It
# builds the model plugins' programs with the host's model program API.
target_link_libraries(${name} PRIVATE xpb_cuda_plan)
add_dependencies(${name} model_conv6 model_vgg16 model_resnet18 model_cyclegan)
set_tests_properties(${name} PROPERTIES TIMEOUT 600)
# NCCL's loader is checked against the library the build found (cmake/XpbCuda.cmake), when any.
if(NCCL_LIBRARY)
  target_compile_definitions(${name} PRIVATE XPB_TEST_NCCL_LIBRARY="${NCCL_LIBRARY}")
endif()
