# cmake -P script behind the install_out_of_tree_plugin test (see CMakeLists.txt).
foreach(var BUILD_DIR WORK_DIR EXAMPLE_DIR LIBDIR C_COMPILER GENERATOR NM PKG_CONFIG LOAD_CHECK)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

# run(<command>...): runs it, fails the test with its output when it fails; output in RUN_OUTPUT.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "FAILED (${rc}): ${cmd}\n${out}")
  endif()
  set(RUN_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

function(require_file path)
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "missing after install: ${path}")
  endif()
endfunction()

# The plugin at `so` must define exactly one dynamic symbol: xpb_plugin_query.
function(check_exports so)
  require_file(${so})
  run(${NM} -D --defined-only ${so})
  string(REGEX MATCHALL "[^\n]+" lines "${RUN_OUTPUT}")
  set(names "")
  foreach(line ${lines})
    if(line MATCHES "^[0-9a-fA-F]* *[A-Za-z] +([^ ]+)$")
      list(APPEND names ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(NOT names STREQUAL "xpb_plugin_query")
    message(FATAL_ERROR "${so} must export only xpb_plugin_query, nm -D --defined-only says:\n"
                        "${RUN_OUTPUT}")
  endif()
  message(STATUS "${so}: exports only xpb_plugin_query")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

# 1. Install into the scratch prefix.
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
require_file(${prefix}/include/xpubench/xpubench.h)
require_file(${prefix}/${LIBDIR}/cmake/xpubench/xpubenchConfig.cmake)
require_file(${prefix}/${LIBDIR}/pkgconfig/xpubench.pc)

# 2. find_package(xpubench) through CMAKE_PREFIX_PATH, then install into XPUBENCH_PLUGIN_DIR.
set(cmake_build ${WORK_DIR}/cmake-build)
run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${cmake_build} -G ${GENERATOR}
  -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
file(STRINGS ${cmake_build}/CMakeCache.txt found REGEX "^xpubench_DIR:")
if(NOT found STREQUAL "xpubench_DIR:PATH=${prefix}/${LIBDIR}/cmake/xpubench")
  message(FATAL_ERROR "find_package found another xpubench: ${found}")
endif()
run(${CMAKE_COMMAND} --build ${cmake_build})
check_exports(${cmake_build}/example_backend.so)
run(${CMAKE_COMMAND} --install ${cmake_build})
require_file(${prefix}/${LIBDIR}/xpubench/plugins/example_backend.so)

# 3. pkg-config xpubench, and a plain compiler command line. The .pc file holds the prefix
# given at configure time, so a tree installed elsewhere with `cmake --install --prefix` is
# used with --define-variable=prefix=<where it went> (pkg-config's relocation switch).
set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
set(pc ${PKG_CONFIG} --define-variable=prefix=${prefix})
run(${pc} --variable=includedir xpubench)
string(STRIP "${RUN_OUTPUT}" pc_includedir)
if(NOT pc_includedir STREQUAL "${prefix}/include")
  message(FATAL_ERROR "pkg-config found another xpubench (includedir ${pc_includedir})")
endif()
run(${pc} --cflags xpubench)
separate_arguments(cflags UNIX_COMMAND "${RUN_OUTPUT}")
run(${pc} --libs xpubench)
separate_arguments(libs UNIX_COMMAND "${RUN_OUTPUT}")
set(pc_build ${WORK_DIR}/pc-build)
file(MAKE_DIRECTORY ${pc_build})
run(${C_COMPILER} -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared ${cflags}
  -o ${pc_build}/example_backend.so ${EXAMPLE_DIR}/example_backend.c ${libs})
check_exports(${pc_build}/example_backend.so)

# 4. The host's loader accepts both builds.
foreach(dir ${cmake_build} ${pc_build} ${prefix}/${LIBDIR}/xpubench/plugins)
  run(${LOAD_CHECK} ${dir} example)
  message(STATUS "${RUN_OUTPUT}")
endforeach()
