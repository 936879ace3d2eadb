# test_report_cli runs the real executable on results files it writes.
add_dependencies(test_report_cli xpubench)
set_tests_properties(test_report_cli PROPERTIES TIMEOUT 120)
