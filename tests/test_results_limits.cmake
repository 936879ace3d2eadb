# test_results_limits also runs show, report and upload of the real executable on a big file.
add_dependencies(test_results_limits xpubench)
set_tests_properties(test_results_limits PROPERTIES TIMEOUT 120)
