# test_scenario checks the warnings against the reference backend and a fake plugin.
add_dependencies(test_scenario xpb_fake_plugins backend_cpu_ref)
