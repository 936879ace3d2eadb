# test_report_browser runs the quick study (configs/study-quick.yaml, shortened) with the real
# executable and plugins, reports it and opens the page in headless Chromium; screenshots go to
# <build>/artifacts. Skipped (77) without chromium. Labelled heavy: it runs real models, which
# the sanitizer pass of scripts/test leaves out.
add_dependencies(test_report_browser xpubench backend_cpu_ref model_conv6 model_resnet18)
if(TARGET backend_cpu_onednn)
  add_dependencies(test_report_browser backend_cpu_onednn)
endif()
set_tests_properties(test_report_browser PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77
  LABELS heavy)
