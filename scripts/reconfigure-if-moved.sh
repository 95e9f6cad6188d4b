#!/usr/bin/env bash
# scripts/reconfigure-if-moved.sh BUILD_DIR SOURCE_DIR
#
# When BUILD_DIR holds a CMake cache made for another source or build path (the checkout was
# copied or moved), removes what ties it to the old paths (CMakeCache.txt and every CMakeFiles/
# folder: the cache, the generator's state, the dependency files) and says so in one line, so the
# next `cmake -S SOURCE_DIR -B BUILD_DIR` configures it afresh. Objects come back from ccache,
# whose paths are relative to the checkout (CCACHE_BASEDIR). Nothing else is touched; a build
# folder of this checkout, or none, is left as it is. Exit 0, or 2 on a usage error.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: reconfigure-if-moved.sh BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build_dir=$1 source_dir=$2
cache=$build_dir/CMakeCache.txt
[[ -f $cache ]] || exit 0
configured_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
configured_build=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$cache")
[[ -n $configured_src && -n $configured_build ]] || exit 0
if [[ $(realpath -m "$configured_src") == "$(realpath -m "$source_dir")" &&
  $(realpath -m "$configured_build") == "$(realpath -m "$build_dir")" ]]; then
  exit 0
fi
echo "setup: $build_dir was configured for $configured_src (as $configured_build); reconfiguring it for $(realpath -m "$source_dir")"
rm -f "$cache"
find "$build_dir" -name CMakeFiles -type d -prune -exec rm -rf {} +
