# test_autodiff runs derived programs on the reference backend plugin.
add_dependencies(test_autodiff backend_cpu_ref)
