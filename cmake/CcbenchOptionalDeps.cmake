# Resolves CCBENCH_WITH_LIBFABRIC and CCBENCH_WITH_NCCL (AUTO/ON/OFF) into
# CCBENCH_HAVE_LIBFABRIC / CCBENCH_HAVE_NCCL and the imported targets they need.

function(_ccbench_resolve option found what)
  if(${option} STREQUAL "ON" AND NOT ${found})
    message(FATAL_ERROR "${option}=ON but ${what} was not found")
  endif()
endfunction()

# --- libfabric -------------------------------------------------------------
set(CCBENCH_HAVE_LIBFABRIC OFF)
if(NOT CCBENCH_WITH_LIBFABRIC STREQUAL "OFF")
  find_package(PkgConfig)
  if(PkgConfig_FOUND)
    pkg_check_modules(LIBFABRIC IMPORTED_TARGET libfabric)
  endif()
  _ccbench_resolve(CCBENCH_WITH_LIBFABRIC LIBFABRIC_FOUND "libfabric (pkg-config libfabric)")
  if(LIBFABRIC_FOUND)
    set(CCBENCH_HAVE_LIBFABRIC ON)
  endif()
endif()
message(STATUS "ccbench: libfabric tests ${CCBENCH_HAVE_LIBFABRIC}")

# --- CUDA + NCCL -----------------------------------------------------------
set(CCBENCH_HAVE_NCCL OFF)
if(NOT CCBENCH_WITH_NCCL STREQUAL "OFF")
  # AWS images keep CUDA and NCCL outside the default prefix: honour CUDA_HOME / NCCL_HOME.
  if(NOT CMAKE_CUDA_COMPILER)
    foreach(root $ENV{CUDA_HOME} $ENV{CUDA_PATH} /usr/local/cuda)
      if(EXISTS "${root}/bin/nvcc")
        set(CMAKE_CUDA_COMPILER "${root}/bin/nvcc" CACHE FILEPATH "nvcc")
        break()
      endif()
    endforeach()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  set(_nccl_ok FALSE)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Hopper (H100/H200) and Blackwell (B200/B300).
      set(CMAKE_CUDA_ARCHITECTURES 90 100 CACHE STRING "CUDA architectures")
    endif()
    # nvcc compiles the host side of .cu files with the same compiler as the C++ sources.
    if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER AND NOT DEFINED ENV{CUDAHOSTCXX})
      set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}" CACHE FILEPATH "nvcc host compiler")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    # NCCL_HOME (cmake variable or environment) first, then the CUDA toolkit, then the system
    # (Debian's libnccl-dev, the NVIDIA apt repository).
    set(_nccl_hints ${NCCL_HOME} $ENV{NCCL_HOME} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT}
                    ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_DIR})
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_hints} PATH_SUFFIXES include)
    find_library(NCCL_LIBRARY NAMES nccl
      HINTS ${_nccl_hints} PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu)
    if(NCCL_INCLUDE_DIR AND NOT NCCL_VERSION_STRING)
      file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
      foreach(_part MAJOR MINOR PATCH)
        string(REGEX REPLACE ".*#define NCCL_${_part} ([0-9]+).*" "\\1" _nccl_${_part} "${_nccl_version_lines}")
      endforeach()
      set(NCCL_VERSION_STRING "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
    endif()
    if(CUDAToolkit_FOUND AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(_nccl_ok TRUE)
      add_library(ccbench::nccl UNKNOWN IMPORTED)
      set_target_properties(ccbench::nccl PROPERTIES
        IMPORTED_LOCATION "${NCCL_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
    endif()
  endif()
  _ccbench_resolve(CCBENCH_WITH_NCCL _nccl_ok "the CUDA toolkit and NCCL (set CUDA_HOME / NCCL_HOME)")
  if(_nccl_ok)
    set(CCBENCH_HAVE_NCCL ON)
  endif()
endif()
if(CCBENCH_HAVE_NCCL)
  message(STATUS "ccbench: NCCL backend ON (NCCL ${NCCL_VERSION_STRING}: ${NCCL_LIBRARY}; "
                 "CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "ccbench: NCCL backend OFF")
endif()
