#!/usr/bin/env bash
# Installs the Debian packages ccbench needs (only those missing), then configures and builds into
# build/. Idempotent: a second run installs nothing and rebuilds only what changed.
#   scripts/setup.sh            # packages + build
#   CCBENCH_SKIP_APT=1 ...      # build only (no root, packages already there)
#   BUILD_DIR=... CMAKE_ARGS="-DCCBENCH_WITH_NCCL=OFF" scripts/setup.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}

# Build and run-time dependencies, and the tools the tests drive for real (a browser for the HTML
# report, promtool, Slurm, network namespaces with tc). CUDA and NCCL are not Debian packages: the
# NCCL backend is built when CUDA_HOME/NCCL_HOME (or /usr/local/cuda) has them.
packages=(
  build-essential cmake pkg-config git ccache
  openmpi-bin libopenmpi-dev
  libfabric-dev libfabric-bin
  nlohmann-json3-dev libfmt-dev libcli11-dev libyaml-cpp-dev
  libcurl4-openssl-dev libpugixml-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-scipy python3-yaml python3-jsonschema
  iproute2 procps psmisc
)
packages+=(${CCBENCH_EXTRA_PACKAGES:-})
if [[ -f "$root/scripts/packages-test.txt" ]]; then
  # Packages only the tests need (browser, promtool, Slurm); one per line.
  mapfile -t test_packages < <(grep -v '^\s*#' "$root/scripts/packages-test.txt" | grep -v '^\s*$')
  packages+=("${test_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})) && [[ -z "${CCBENCH_SKIP_APT:-}" ]]; then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: need root to install packages (or install them and set CCBENCH_SKIP_APT=1)" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # confold: a package's config file already on the machine (scripts/emulate/s3.sh writes
  # /etc/swift/swift.conf) is kept, not asked about: a prompt without a terminal fails dpkg.
  apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef \
    -o Dpkg::Options::=--force-confold "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
# ccache, with paths taken relative to the checkout, so a second clone (CI's) reuses the objects.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# A checkout copied or moved elsewhere keeps a build folder configured for the old path, and CMake
# stops with "CMakeCache.txt directory ... is different": reconfigure it (ccache keeps it warm).
"$root/scripts/reconfigure-if-moved.sh" "$build_dir" "$root"
# shellcheck disable=SC2086
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release} "${launcher[@]}" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$jobs"
echo "setup: built $build_dir/ccbench"
