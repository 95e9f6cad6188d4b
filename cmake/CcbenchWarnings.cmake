# Warnings for our own targets only: no global flags, so Debian's headers stay quiet.
function(ccbench_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
endfunction()
