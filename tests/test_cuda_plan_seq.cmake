# The cuda backend's planner on op set 3 (plain C): runs on every machine, toolkit or not, on the
# conformance catalogue and the sequence models' programs.
target_link_libraries(${name} PRIVATE xpb_cuda_plan)
add_dependencies(${name} model_conv6 model_vgg16 model_resnet18 model_cyclegan model_lstm
  model_transformer)
set_tests_properties(${name} PROPERTIES TIMEOUT 600)
