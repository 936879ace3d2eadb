# test_conformance runs the conformance suite and verification on faulty_ref (tests/faulty_backend,
# cpu_ref made wrong on demand) against cpu_ref, with the conv6 model plugin.
add_dependencies(test_conformance backend_faulty_ref backend_cpu_ref model_conv6)
target_compile_definitions(test_conformance PRIVATE
  XPB_TEST_FAULTY_DIR="${CMAKE_CURRENT_BINARY_DIR}/faulty_backend/plugins")
set_tests_properties(test_conformance PROPERTIES TIMEOUT 600)
