# test_cli runs the real executable with the real plugins.
add_dependencies(test_cli xpubench backend_cpu_ref model_conv6)
set_tests_properties(test_cli PROPERTIES TIMEOUT 900)
