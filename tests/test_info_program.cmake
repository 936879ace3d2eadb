# test_info_program runs the real executable with every shipped model plugin (the table of
# docs/models.md covers them all) and builds conv6's program in-process to compare.
add_dependencies(test_info_program xpubench model_conv6 model_vgg16 model_resnet18 model_cyclegan)
set_tests_properties(test_info_program PROPERTIES TIMEOUT 300)
