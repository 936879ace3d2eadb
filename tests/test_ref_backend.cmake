# Loads the reference backend plugin at run time: build it first.
add_dependencies(${name} backend_cpu_ref)
