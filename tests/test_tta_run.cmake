# test_tta_run trains conv6 on cpu_onednn with the real executable until a target accuracy on a
# small generated dataset, twice: heavy (about a minute of training on 2 cores). Without
# oneDNN in the build it is not registered.
if(TARGET backend_cpu_onednn AND TARGET model_conv6)
  add_dependencies(test_tta_run xpubench backend_cpu_onednn model_conv6)
  set_tests_properties(test_tta_run PROPERTIES TIMEOUT 900 LABELS heavy)
else()
  set_tests_properties(test_tta_run PROPERTIES DISABLED TRUE)
endif()
