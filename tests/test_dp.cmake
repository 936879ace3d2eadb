# test_dp runs xpubench, dp_check and the dp_fault backend under mpirun, with the MPI module
# of this build (skipping what needs mpirun when it is absent or the module was not built).
add_dependencies(test_dp xpubench backend_cpu_ref model_conv6 model_resnet18 dp_check)
if(TARGET backend_dp_fault)
  add_dependencies(test_dp backend_dp_fault)
endif()
set(_dp_onednn 0)
if(TARGET backend_cpu_onednn)
  add_dependencies(test_dp backend_cpu_onednn)
  set(_dp_onednn 1)
endif()
set(_dp_mpi 0)
if(TARGET xpubench_mpi)
  add_dependencies(test_dp xpubench_mpi)
  set(_dp_mpi 1)
endif()
target_compile_definitions(test_dp PRIVATE XPB_TEST_HAVE_MPI=${_dp_mpi}
  XPB_TEST_HAVE_ONEDNN=${_dp_onednn})
set_tests_properties(test_dp PROPERTIES TIMEOUT 900 LABELS mpi)
# The numerical equivalence of N ranks and one process, on cpu_ref and cpu_onednn: heavy (the
# sanitizer pass skips it; the first pass of scripts/test runs it).
add_test(NAME test_dp_equivalence COMMAND test_dp equivalence)
set_tests_properties(test_dp_equivalence PROPERTIES TIMEOUT 900 LABELS "mpi;heavy")
# A rank stopped at every moment of a job (16 jobs): heavy.
add_test(NAME test_dp_hung COMMAND test_dp hung)
set_tests_properties(test_dp_hung PROPERTIES TIMEOUT 900 LABELS "mpi;heavy")
