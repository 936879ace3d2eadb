# test_models loads the model plugins and the reference backend from the build's plugin
# folder, and every other backend built there (compared with cpu_ref when present).
add_dependencies(test_models model_conv6 model_vgg16 model_resnet18 model_cyclegan
  model_alexnet model_lstm model_transformer backend_cpu_ref)
if(TARGET backend_cpu_onednn)
  add_dependencies(test_models backend_cpu_onednn)
endif()
set_tests_properties(test_models PROPERTIES TIMEOUT 900)
# Heavy: whole models on the reference backend; the sanitizer pass of scripts/test skips it.
set_tests_properties(test_models PROPERTIES LABELS heavy)
