# test_onednn_opset3 loads cpu_onednn from the build's plugin folder (light: a few tiny
# programs); without oneDNN in the build it is registered but disabled.
if(TARGET backend_cpu_onednn)
  add_dependencies(test_onednn_opset3 backend_cpu_onednn)
  set_tests_properties(test_onednn_opset3 PROPERTIES TIMEOUT 300)
else()
  set_tests_properties(test_onednn_opset3 PROPERTIES DISABLED TRUE)
endif()
