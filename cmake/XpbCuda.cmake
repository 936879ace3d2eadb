# The CUDA toolchain for plugins/backend_cuda, decided once at the top level (CUDA must be
# enabled in the top-level directory, before any target uses it).
#
#   XPB_BUILD_CUDA=AUTO (default)  build the plugin when nvcc, cuDNN >= 9 and cuBLASLt are found;
#                                  otherwise say what is missing and skip it
#   XPB_BUILD_CUDA=ON              the same, but a missing piece is a configure error naming it
#   XPB_BUILD_CUDA=OFF             never build it
#
# Sets XPB_HAVE_CUDA (ON/OFF) and, when ON, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY and the imported
# targets of find_package(CUDAToolkit). NCCL is optional: XPB_HAVE_NCCL is ON when nccl.h is
# found (the toolkit's folders, $NCCL_ROOT, $NCCL_HOME, /usr/include), with NCCL_INCLUDE_DIR and,
# when found too, NCCL_LIBRARY (libnccl.so.2, whose folder joins the plugin's RUNPATH). The
# plugin never links NCCL: it loads libnccl.so.2 with dlopen at the first data-parallel compile,
# so it loads where NCCL is absent. Without nccl.h the plugin builds without ALL_REDUCE over
# several ranks (it refuses it, saying so). nvcc is looked for where CMake looks (CUDACXX, PATH),
# then in $CUDA_HOME/bin, $CUDA_PATH/bin and /usr/local/cuda/bin (the toolkit's default place,
# which is not on PATH). Device code is built for sm_75 (Turing, T4), sm_80 (Ampere) and sm_90
# (Hopper) as machine code, plus PTX of sm_90 that newer GPUs compile at load time; set
# CMAKE_CUDA_ARCHITECTURES to override.

set(XPB_BUILD_CUDA AUTO CACHE STRING
    "Build the CUDA backend: AUTO (when the toolkit is found), ON (required), OFF")
set_property(CACHE XPB_BUILD_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${XPB_BUILD_CUDA}" _xpb_cuda_mode)
if(_xpb_cuda_mode STREQUAL "TRUE" OR _xpb_cuda_mode STREQUAL "YES" OR _xpb_cuda_mode STREQUAL "1")
  set(_xpb_cuda_mode ON)
elseif(_xpb_cuda_mode STREQUAL "FALSE" OR _xpb_cuda_mode STREQUAL "NO" OR _xpb_cuda_mode STREQUAL "0")
  set(_xpb_cuda_mode OFF)
endif()
if(NOT _xpb_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "XPB_BUILD_CUDA is '${XPB_BUILD_CUDA}': expected AUTO, ON or OFF")
endif()

set(XPB_HAVE_CUDA OFF)
set(XPB_HAVE_NCCL OFF)
if(_xpb_cuda_mode STREQUAL "OFF")
  message(STATUS "cuda backend: skipped (XPB_BUILD_CUDA=OFF)")
  return()
endif()

# Where nvcc is when it is not on PATH. It is handed to check_language through CUDACXX (not
# CMAKE_CUDA_COMPILER, which would skip the check), so that an nvcc that cannot compile (no g++,
# an unsupported host compiler) counts as missing instead of failing the configure step.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(XPB_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATHS /usr/local/cuda
               PATH_SUFFIXES bin)
  if(XPB_NVCC)
    set(ENV{CUDACXX} ${XPB_NVCC})
  endif()
endif()

set(_xpb_cuda_missing "")
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  list(APPEND _xpb_cuda_missing
       "a working nvcc (the CUDA toolkit 12 or newer, with g++ as its host compiler, set CUDACXX or add the toolkit's bin folder to PATH)")
else()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 75-real 80-real 90)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit)
  if(NOT CUDAToolkit_FOUND)
    list(APPEND _xpb_cuda_missing "the CUDA toolkit's libraries (find_package(CUDAToolkit) failed)")
  elseif(CUDAToolkit_VERSION VERSION_LESS 12.0)
    list(APPEND _xpb_cuda_missing "CUDA 12 or newer (found ${CUDAToolkit_VERSION})")
  endif()
  if(CUDAToolkit_FOUND AND NOT TARGET CUDA::cublasLt)
    list(APPEND _xpb_cuda_missing "cuBLASLt (libcublasLt, part of the CUDA toolkit)")
  endif()
  find_path(CUDNN_INCLUDE_DIR cudnn_graph.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT ENV CUDNN_PATH
            PATH_SUFFIXES include)
  find_library(CUDNN_LIBRARY cudnn
               HINTS ${CUDAToolkit_LIBRARY_DIR} ENV CUDNN_ROOT ENV CUDNN_PATH
               PATH_SUFFIXES lib64 lib)
  if(NOT CUDNN_INCLUDE_DIR OR NOT CUDNN_LIBRARY)
    list(APPEND _xpb_cuda_missing
         "cuDNN 9 (cudnn_graph.h and libcudnn, set CUDNN_ROOT when it is not in the toolkit's folders)")
  else()
    file(STRINGS ${CUDNN_INCLUDE_DIR}/cudnn_version.h _xpb_cudnn_major
         REGEX "define CUDNN_MAJOR +[0-9]+")
    if(NOT _xpb_cudnn_major MATCHES "CUDNN_MAJOR +([0-9]+)" OR CMAKE_MATCH_1 LESS 9)
      list(APPEND _xpb_cuda_missing "cuDNN 9 or newer (found '${_xpb_cudnn_major}')")
    endif()
  endif()
endif()

if(_xpb_cuda_missing)
  list(JOIN _xpb_cuda_missing "; " _xpb_cuda_why)
  if(_xpb_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "XPB_BUILD_CUDA=ON but the CUDA backend cannot be built: missing "
                        "${_xpb_cuda_why}")
  endif()
  message(STATUS "cuda backend: skipped (missing ${_xpb_cuda_why})")
  return()
endif()
set(XPB_HAVE_CUDA ON)
message(STATUS "cuda backend: CUDA ${CUDAToolkit_VERSION}, cuDNN in ${CUDNN_INCLUDE_DIR}, "
               "architectures ${CMAKE_CUDA_ARCHITECTURES}")

# NCCL (optional): the header at build time, the library at run time (dlopen).
get_filename_component(_xpb_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
find_path(NCCL_INCLUDE_DIR nccl.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_ROOT ENV NCCL_HOME
          PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES libnccl.so.2 nccl
             HINTS ${CUDAToolkit_LIBRARY_DIR} ${_xpb_cuda_root}/lib ${_xpb_cuda_root}/lib64
                   ENV NCCL_ROOT ENV NCCL_HOME
             PATH_SUFFIXES lib lib64)
if(NCCL_INCLUDE_DIR)
  set(XPB_HAVE_NCCL ON)
  if(NCCL_LIBRARY)
    message(STATUS "cuda backend: NCCL header in ${NCCL_INCLUDE_DIR}, library ${NCCL_LIBRARY} "
                   "(loaded at run time)")
  else()
    message(STATUS "cuda backend: NCCL header in ${NCCL_INCLUDE_DIR}; no libnccl here (loaded "
                   "at run time from the loader's path)")
  endif()
else()
  message(STATUS "cuda backend: NCCL not found (nccl.h): built without data-parallel "
                 "ALL_REDUCE (set NCCL_ROOT)")
endif()
