# test_models_paradnn loads the paradnn model plugin and the reference backend from the build's
# plugin folder.
add_dependencies(test_models_paradnn model_paradnn backend_cpu_ref)
set_tests_properties(test_models_paradnn PROPERTIES TIMEOUT 600)
