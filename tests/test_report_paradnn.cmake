# test_report_paradnn runs configs/paradnn-quick.yaml (shortened) with the real executable and
# plugins, reports it and opens the page in headless Chromium; a screenshot goes to
# <build>/artifacts. Skipped (77) without chromium. Labelled heavy: it runs real models.
add_dependencies(test_report_paradnn xpubench backend_cpu_ref model_paradnn)
if(TARGET backend_cpu_onednn)
  add_dependencies(test_report_paradnn backend_cpu_onednn)
endif()
set_tests_properties(test_report_paradnn PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77
  LABELS heavy)
