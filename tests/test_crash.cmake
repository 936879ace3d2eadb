# test_crash runs the real executable on crash_ref (tests/fake_plugins: cpu_ref that crashes on
# demand) next to the real plugins.
add_dependencies(test_crash xpubench fake_crash_backend backend_cpu_ref model_conv6)
set_tests_properties(test_crash PROPERTIES TIMEOUT 300)
