# test_conformance_onednn loads cpu_onednn, cpu_ref and the model plugins from the build's
# plugin folder; without oneDNN in the build it is registered but disabled.
if(TARGET backend_cpu_onednn AND TARGET backend_cpu_ref)
  add_dependencies(test_conformance_onednn backend_cpu_onednn backend_cpu_ref)
  foreach(m model_conv6 model_vgg16 model_resnet18 model_cyclegan)
    if(TARGET ${m})
      add_dependencies(test_conformance_onednn ${m})
    endif()
  endforeach()
  # oneDNN (and its OpenMP runtime) loaded at startup rather than by the plugin's dlopen: their
  # thread-local storage is then static, which LeakSanitizer can walk (with dynamic TLS of
  # dlopen'ed libraries it crashes at exit, a sanitizer bug; nothing leaks).
  target_link_libraries(test_conformance_onednn PRIVATE -Wl,--no-as-needed ${DNNL_LIB}
    -Wl,--as-needed)
  set_tests_properties(test_conformance_onednn PROPERTIES TIMEOUT 1500)
else()
  set_tests_properties(test_conformance_onednn PROPERTIES DISABLED TRUE)
endif()
# Heavy: every op and four models on two backends; the sanitizer pass of scripts/test skips it.
set_tests_properties(test_conformance_onednn PROPERTIES LABELS heavy)
