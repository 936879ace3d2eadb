# test_upload drives the client against a scripted HTTPS server (libmicrohttpd) with the
# certificates and documents of the leaderboard's test support; without either, only its
# offline tests run.
pkg_check_modules(UPLOAD_MHD QUIET IMPORTED_TARGET libmicrohttpd)
if(UPLOAD_MHD_FOUND AND TARGET lbt_support)
  target_link_libraries(test_upload PRIVATE lbt_support PkgConfig::UPLOAD_MHD)
  target_compile_definitions(test_upload PRIVATE XPB_TEST_HAVE_SERVER=1)
endif()
set_tests_properties(test_upload PROPERTIES TIMEOUT 60)
