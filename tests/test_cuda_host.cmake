# The cuda plugin without a driver: loading, the ABI's no-device answers, and list / run /
# conformance / info / validate through the real executable. Needs the plugin; without the
# toolkit it is registered but disabled.
if(TARGET backend_cuda)
  add_dependencies(${name} xpubench backend_cuda backend_cpu_ref model_conv6)
  target_link_libraries(${name} PRIVATE ${CMAKE_DL_LIBS})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
else()
  set_tests_properties(${name} PROPERTIES DISABLED TRUE)
endif()
