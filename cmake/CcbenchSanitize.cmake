# -DCCBENCH_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer, float-cast-overflow included
# (a double outside an integer's range cast to it is UB that plain -fsanitize=undefined does not check
# with GCC), every report fatal. Applies to every target of the build, tests and fuzz driver included.
# scripts/ci/sanitize.sh builds and runs the unit, loader and fuzz tests this way.
# -DCCBENCH_LIBFUZZER=ON (clang only) adds the libFuzzer target tests/fuzz/loaders ccbench_libfuzzer.
option(CCBENCH_SANITIZE "Build with ASan + UBSan (float-cast-overflow included), reports fatal" OFF)
option(CCBENCH_LIBFUZZER "Build the libFuzzer target (needs clang)" OFF)
if(CCBENCH_SANITIZE)
  set(_ccbench_sanitize -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
                        -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_ccbench_sanitize}>")
  add_link_options(${_ccbench_sanitize})
  message(STATUS "ccbench: sanitizers ON (${_ccbench_sanitize})")
endif()
if(CCBENCH_LIBFUZZER)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "CCBENCH_LIBFUZZER needs clang (configure with -DCMAKE_CXX_COMPILER=clang++)")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
endif()
