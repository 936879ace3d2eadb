# test_loader loads the fake plugins of tests/fake_plugins (built before it).
target_compile_definitions(test_loader PRIVATE
  XPB_FAKE_PLUGIN_DIR="${CMAKE_CURRENT_BINARY_DIR}/fake_plugins")
add_dependencies(test_loader xpb_fake_plugins)
