# test_run_output runs the real executable with the real plugins.
add_dependencies(test_run_output xpubench backend_cpu_ref model_conv6)
set_tests_properties(test_run_output PROPERTIES TIMEOUT 300)
