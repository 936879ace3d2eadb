# The cuda plugin on the CPU stand-in (tests/cuda_standin): the plugin built a second time for the
# host (tests/cuda_standin/plugin/CMakeLists.txt) beside a copy of xpubench, which this test runs.
# The stand-in folder is added after this file (tests/CMakeLists.txt adds the test folders last),
# so the wiring waits for the end of tests/ (cmake_language DEFER). Without the stand-in (no
# NVIDIA headers, no C++ compiler) both tests are registered but disabled.
target_compile_definitions(${name} PRIVATE
  XPB_TEST_STANDIN_DIR="${CMAKE_BINARY_DIR}/tests/cuda_standin_plugin")
# The light part in the suite (about a minute and a half on two cores). The heavier model rows
# (VGG16, ResNet18, CycleGAN in every policy and their trainings: the better part of an hour)
# would take the whole suite over its 20 minutes, so test_cuda_standin_heavy is opt-in:
# registered but disabled unless configured with -DXPB_CUDA_STANDIN_HEAVY=ON.
option(XPB_CUDA_STANDIN_HEAVY "Run the cuda plugin's model rows on the CPU stand-in (long)" OFF)
# Labelled heavy for the sanitizer pass of scripts/test, which leaves heavy tests out: under
# ASan and UBSan its model part alone took over ten minutes on two busy cores. The stand-in
# library's own tests (test_standin_*) run there; this one runs in the suite's main pass.
set_tests_properties(${name} PROPERTIES TIMEOUT 600 LABELS "cuda_standin;heavy")
add_test(NAME ${name}_heavy COMMAND ${name} --heavy)
set_tests_properties(${name}_heavy PROPERTIES TIMEOUT 7200 LABELS "cuda_standin;heavy"
  ENVIRONMENT "XPB_PLUGIN_PATH=;XPB_NO_PROGRESS=1")

# The plugin's kernels are C++ for the stand-in: C++ is enabled here, in the folder common to the
# stand-in library (tests/cuda_standin) and the plugin target the deferred call defines in this
# folder (a deferred call may define targets, not add folders). Without a C++ compiler (a fresh
# Debian has none until g++ is installed) the stand-in is skipped and both tests stay disabled.
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
endif()
function(xpb_cuda_standin_wire)
  if(TARGET xpb_cuda_standin)
    include(${CMAKE_SOURCE_DIR}/tests/cuda_standin/plugin/CMakeLists.txt)
  endif()
  if(TARGET cuda_standin_plugin)
    add_dependencies(test_cuda_standin cuda_standin_plugin)
  else()
    set_tests_properties(test_cuda_standin test_cuda_standin_heavy PROPERTIES DISABLED TRUE)
  endif()
  if(NOT XPB_CUDA_STANDIN_HEAVY)
    set_tests_properties(test_cuda_standin_heavy PROPERTIES DISABLED TRUE)
  endif()
endfunction()
cmake_language(DEFER CALL xpb_cuda_standin_wire)
