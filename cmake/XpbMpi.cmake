# The MPI module of data-parallel runs (core/parallel/mpi, docs/distributed.md), decided once at
# the top level:
#
#   XPB_WITH_MPI=AUTO (default)  build the module when Open MPI's development files are found
#                                (Debian: libopenmpi-dev); otherwise say so and skip it
#   XPB_WITH_MPI=ON              the same, but a missing MPI is a configure error
#   XPB_WITH_MPI=OFF             never build it
#
# The module is a shared object that `xpubench` loads with dlopen only when it was launched
# with more than one rank: the host itself never links libmpi, so a build with the module runs
# exactly like one without it when MPI is not in the environment. Sets XPB_HAVE_MPI (ON/OFF)
# and, when ON, the imported target MPI::MPI_C.

set(XPB_WITH_MPI AUTO CACHE STRING
    "Build the MPI module of data-parallel runs: AUTO (when MPI is found), ON (required), OFF")
set_property(CACHE XPB_WITH_MPI PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${XPB_WITH_MPI}" _xpb_mpi_mode)
if(_xpb_mpi_mode MATCHES "^(TRUE|YES|1)$")
  set(_xpb_mpi_mode ON)
elseif(_xpb_mpi_mode MATCHES "^(FALSE|NO|0)$")
  set(_xpb_mpi_mode OFF)
endif()
if(NOT _xpb_mpi_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "XPB_WITH_MPI is '${XPB_WITH_MPI}': expected AUTO, ON or OFF")
endif()

set(XPB_HAVE_MPI OFF)
if(_xpb_mpi_mode STREQUAL "OFF")
  message(STATUS "MPI module: skipped (XPB_WITH_MPI=OFF); data-parallel runs need it")
  return()
endif()
find_package(MPI COMPONENTS C QUIET)
if(MPI_C_FOUND)
  set(XPB_HAVE_MPI ON)
  message(STATUS "MPI module: building with MPI ${MPI_C_VERSION} (${MPI_C_LIBRARIES})")
elseif(_xpb_mpi_mode STREQUAL "ON")
  message(FATAL_ERROR "XPB_WITH_MPI=ON but no MPI C library was found: "
                      "apt-get install libopenmpi-dev openmpi-bin")
else()
  message(STATUS "MPI module: skipped (no MPI found: apt-get install libopenmpi-dev "
                 "openmpi-bin); data-parallel runs need it")
endif()
