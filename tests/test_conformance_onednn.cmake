# test_conformance_onednn loads cpu_onednn, cpu_ref and the model plugins from the build's
# plugin folder; without oneDNN in the build it is registered but disabled. Its test_api_* cases
# (the backend's ABI surface, seconds) also run alone as the light test test_onednn_api, which
# the sanitizer pass of scripts/test keeps, and once more with oneDNN capped at avx512_core,
# where bf16-mixed must be reported as emulated (test_onednn_api_avx512_core). A third test
# checks that the plugin's object files depend on each other without a cycle.
if(TARGET backend_cpu_onednn AND TARGET backend_cpu_ref)
  add_dependencies(test_conformance_onednn backend_cpu_onednn backend_cpu_ref)
  foreach(m model_conv6 model_vgg16 model_resnet18 model_cyclegan model_alexnet model_lstm
      model_transformer)
    if(TARGET ${m})
      add_dependencies(test_conformance_onednn ${m})
    endif()
  endforeach()
  # oneDNN (and its OpenMP runtime) loaded at startup rather than by the plugin's dlopen: their
  # thread-local storage is then static, which LeakSanitizer can walk (with dynamic TLS of
  # dlopen'ed libraries it crashes at exit, a sanitizer bug; nothing leaks). The test also asks
  # oneDNN itself which ISA it dispatches to, and checks isa.c directly.
  target_link_libraries(test_conformance_onednn PRIVATE xpb_onednn_isa -Wl,--no-as-needed
    ${DNNL_LIB} -Wl,--as-needed)
  target_include_directories(test_conformance_onednn PRIVATE ${DNNL_INCLUDE_DIR})
  target_compile_definitions(test_conformance_onednn PRIVATE XPB_TEST_HAVE_ONEDNN=1)
  set_tests_properties(test_conformance_onednn PROPERTIES TIMEOUT 1500)

  add_test(NAME test_onednn_api COMMAND test_conformance_onednn "test_api_*")
  add_test(NAME test_onednn_api_avx512_core COMMAND test_conformance_onednn "test_api_*")
  set_tests_properties(test_onednn_api test_onednn_api_avx512_core PROPERTIES TIMEOUT 300)
  set_tests_properties(test_onednn_api PROPERTIES ENVIRONMENT "XPB_PLUGIN_PATH=;XPB_NO_PROGRESS=1")
  set_tests_properties(test_onednn_api_avx512_core PROPERTIES ENVIRONMENT
    "XPB_PLUGIN_PATH=;XPB_NO_PROGRESS=1;DNNL_MAX_CPU_ISA=AVX512_CORE;XPB_TEST_EXPECT_BF16=emulated")

else()
  set_tests_properties(test_conformance_onednn PROPERTIES DISABLED TRUE)
endif()
# Heavy: every op and four models on two backends; the sanitizer pass of scripts/test skips it.
set_tests_properties(test_conformance_onednn PROPERTIES LABELS heavy)
