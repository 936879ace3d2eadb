# test_report_energy runs the real executable on the fake_meter backend (tests/fake_meter).
add_dependencies(test_report_energy xpubench backend_fake_meter backend_cpu_ref model_conv6)
target_compile_definitions(test_report_energy PRIVATE
  FAKE_METER_DIR="${CMAKE_CURRENT_BINARY_DIR}/fake_meter/plugins")
set_tests_properties(test_report_energy PROPERTIES TIMEOUT 300)
