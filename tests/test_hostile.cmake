# test_hostile runs the real executable on hostile results files, also on a pseudo-terminal
# (forkpty, libutil).
add_dependencies(test_hostile xpubench)
target_link_libraries(test_hostile PRIVATE util)
set_tests_properties(test_hostile PROPERTIES TIMEOUT 120)
