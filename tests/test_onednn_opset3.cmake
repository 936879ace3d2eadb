# test_onednn_opset3 loads cpu_onednn from the build's plugin folder (light: a few tiny
# programs; it runs in the sanitizer pass too); without oneDNN in the build it is registered
# but disabled. oneDNN is loaded at startup rather than by the plugin's dlopen, for
# LeakSanitizer (see test_conformance_onednn.cmake).
if(TARGET backend_cpu_onednn)
  add_dependencies(test_onednn_opset3 backend_cpu_onednn)
  target_link_libraries(test_onednn_opset3 PRIVATE -Wl,--no-as-needed ${DNNL_LIB} -Wl,--as-needed)
  set_tests_properties(test_onednn_opset3 PROPERTIES TIMEOUT 300)
else()
  set_tests_properties(test_onednn_opset3 PROPERTIES DISABLED TRUE)
endif()
