#!/usr/bin/env bash
# A checkout moved to another folder: its build folder, configured for the old path, makes CMake
# stop ("CMakeCache.txt directory ... is different"); scripts/reconfigure-if-moved.sh (which
# setup.sh runs before configuring) says so in one line and the configure and build then succeed.
# Real CMake and make on a two-file project (a header, so stale dependency files would show).
# Usage: test_moved_checkout.sh RECONFIGURE_SCRIPT
set -uo pipefail
script=$(readlink -f "$1")
T=$(mktemp -d /tmp/ccbench-moved.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "moved-checkout-test: FAILED: $*"; exit 1; }
mkdir -p "$T/old/src"
cat >"$T/old/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(moved CXX)
add_executable(moved main.cpp)
CM
printf '#pragma once\ninline int answer() { return 42; }\n' >"$T/old/src/answer.hpp"
printf '#include "answer.hpp"\nint main() { return answer() == 42 ? 0 : 1; }\n' >"$T/old/src/main.cpp"
cmake -S "$T/old/src" -B "$T/old/src/build" >/dev/null || fail "first configure"
cmake --build "$T/old/src/build" >/dev/null || fail "first build"
mv "$T/old" "$T/new dir"
src="$T/new dir/src" build="$T/new dir/src/build"

# Before: CMake refuses the moved build folder.
out=$(cmake -S "$src" -B "$build" 2>&1) && fail "cmake accepted the moved build folder (the test needs it to refuse)"
grep -q "is different" <<<"$out" || fail "cmake's refusal changed: $out"

# Idempotent on a folder of this checkout, silent on none.
out=$("$script" "$T/none" "$src") || fail "no build folder: exit $?"
[[ -z $out ]] || fail "no build folder: said '$out'"

out=$("$script" "$build" "$src") || fail "exit $?"
want="setup: $build was configured for $T/old/src (as $T/old/src/build); reconfiguring it for $src"
[[ $out == "$want" ]] || fail "message '$out', expected '$want'"
cmake -S "$src" -B "$build" >/dev/null || fail "configure after the script"
cmake --build "$build" >/dev/null || fail "build after the script"
"$build/moved" || fail "the rebuilt program"
out=$("$script" "$build" "$src") || fail "second call: exit $?"
[[ -z $out ]] || fail "second call said '$out'"
echo "moved-checkout-test: PASS"
