# test_conformance runs the conformance suite and verification on faulty_ref (tests/faulty_backend,
# cpu_ref made wrong on demand) against cpu_ref, with the conv6 model plugin. The same executable,
# asked for test_standard_runs by name, is test_verify_standard: `verify: true` on the standard
# runs (configs/) on cpu_ref, cpu_onednn and faulty_ref with each wrong kernel of issue 19. Heavy:
# by default conv6-train at batch 64 (about 30 s of CPU); XPB_TEST_STANDARD_RUNS=all runs every
# standard run (hours on two cores), or a comma-separated list of run ids.
add_dependencies(test_conformance backend_faulty_ref backend_cpu_ref model_conv6)
foreach(t backend_cpu_onednn model_vgg16 model_resnet18 model_cyclegan)
  if(TARGET ${t})
    add_dependencies(test_conformance ${t})
  endif()
endforeach()
target_compile_definitions(test_conformance PRIVATE
  XPB_TEST_FAULTY_DIR="${CMAKE_CURRENT_BINARY_DIR}/faulty_backend/plugins")
set_tests_properties(test_conformance PROPERTIES TIMEOUT 600)
add_test(NAME test_verify_standard COMMAND test_conformance test_standard_runs)
set_tests_properties(test_verify_standard PROPERTIES LABELS heavy TIMEOUT 3600
  ENVIRONMENT "XPB_PLUGIN_PATH=;XPB_NO_PROGRESS=1")
