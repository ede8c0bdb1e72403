# Configures and builds benchfleet: source this file, then `bf_build [TARGET...]` (no target:
# everything). Sets BUILD_DIR (BENCHFLEET_BUILD_DIR overrides build/ in the checkout). Release
# (-O2, no debug information) unless BENCHFLEET_BUILD_TYPE says otherwise (RelWithDebInfo for gdb);
# BENCHFLEET_SANITIZE (address,undefined or thread) builds with sanitizers (scripts/test --sanitize).
# ccache is keyed on paths relative to the checkout, so a fresh clone elsewhere (CI) reuses the
# objects a previous build left in ccache's own directory.

bf_build() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  BUILD_DIR=${BENCHFLEET_BUILD_DIR:-$root/build}
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
  cmake -S "$root" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BENCHFLEET_BUILD_TYPE:-Release} \
    -DBENCHFLEET_SANITIZE="${BENCHFLEET_SANITIZE:-}" >/dev/null
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}"
}
