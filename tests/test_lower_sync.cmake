# test_lower_sync builds the programs of the real models (no backend runs them).
add_dependencies(test_lower_sync model_conv6 model_resnet18 model_cyclegan)
