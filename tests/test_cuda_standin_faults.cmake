# The broken variants of the cuda plugin on the CPU stand-in (XPB_CUDA_STANDIN_FAULT,
# plugins/backend_cuda/kernels/fault.h): runs the copy of xpubench beside the stand-in build
# (tests/cuda_standin/plugin/CMakeLists.txt), wired like test_cuda_standin (the stand-in folder
# is added after this file, so the wiring waits for the end of tests/). Without the stand-in the
# test is registered but disabled.
target_compile_definitions(${name} PRIVATE
  XPB_TEST_STANDIN_DIR="${CMAKE_BINARY_DIR}/tests/cuda_standin_plugin")
set_tests_properties(${name} PROPERTIES TIMEOUT 600 LABELS cuda_standin)
function(xpb_cuda_standin_faults_wire)
  if(TARGET cuda_standin_plugin)
    add_dependencies(test_cuda_standin_faults cuda_standin_plugin)
  else()
    set_tests_properties(test_cuda_standin_faults PROPERTIES DISABLED TRUE)
  endif()
endfunction()
cmake_language(DEFER CALL xpb_cuda_standin_faults_wire)
