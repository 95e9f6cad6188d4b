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
    enable_language(CUDA)
    find_package(CUDAToolkit)
    find_path(NCCL_INCLUDE_DIR nccl.h
      HINTS $ENV{NCCL_HOME} ${NCCL_HOME} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}
      PATH_SUFFIXES include)
    find_library(NCCL_LIBRARY NAMES nccl
      HINTS $ENV{NCCL_HOME} ${NCCL_HOME} ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
      PATH_SUFFIXES lib lib64)
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
message(STATUS "ccbench: NCCL backend ${CCBENCH_HAVE_NCCL}")
