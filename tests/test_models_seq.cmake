# test_models_seq loads the sequence models (and AlexNet, for its tiny verified run) and the
# reference backend from the build's plugin folder.
add_dependencies(test_models_seq model_lstm model_transformer model_alexnet backend_cpu_ref)
set_tests_properties(test_models_seq PROPERTIES TIMEOUT 600)
