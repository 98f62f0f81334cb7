#!/usr/bin/env bash
# Builds ROOT-Sim's core (a checkout, CMake) and our runners against it:
#   bench/peers/rootsim/build.sh CHECKOUT OUT_DIR  ->  OUT_DIR/bin/rootsim_pcs, rootsim_phold
# Through our CMakeLists.txt (next to this script), which adds the checkout's
# src/ as is: Release (-O3, LTO as ROOT-Sim's own build), no MPI, gcc.
set -euo pipefail
PEER_ENGINE=rootsim
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common/build_lib.sh"
PINNED_URL=https://github.com/ROOT-Sim/core.git
PINNED_COMMIT=58be4dacb0cdba85326685068f0f2e58c3ea8bd0  # v3.0.0

[ $# -eq 2 ] || peer_die "usage: build.sh CHECKOUT OUT_DIR"
peer_checkout "$1" "$PINNED_URL" "$PINNED_COMMIT"
CHECKOUT="$(cd "$1" && pwd)"
[ -f "$CHECKOUT/src/ROOT-Sim.h" ] || peer_die "$CHECKOUT is not a ROOT-Sim core checkout (no src/ROOT-Sim.h)"
OUT="$(mkdir -p "$2" && cd "$2" && pwd)"
for tool in cmake make gcc; do
  peer_require_tool "$tool" "ROOT-Sim needs CMake and a C11 compiler"
done
VERSION="$(sed -n 's/^set(PROJECT_VERSION \(.*\))$/\1/p' "$CHECKOUT/CMakeLists.txt" | head -n 1)"

STAMP="$(peer_stamp "$CHECKOUT" "$HERE"/*.c "$HERE"/CMakeLists.txt "$HERE"/build.sh "$HERE"/../common/*.h)"
if peer_up_to_date "$OUT" "$STAMP" rootsim_pcs rootsim_phold; then
  echo "rootsim: up to date in $OUT"
  exit 0
fi
LOG="$OUT/build.log"
: >"$LOG"
echo "rootsim: building $CHECKOUT ($(peer_commit "$CHECKOUT")) into $OUT (log: $LOG)"
peer_run "$LOG" cmake -S "$HERE" -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc \
  -DROOTSIM_SOURCE="$CHECKOUT" -DROOTSIM_VERSION="${VERSION:-unknown}"
peer_run "$LOG" cmake --build "$OUT/build" -j 2
mkdir -p "$OUT/bin"
cp "$OUT/build/rootsim_pcs" "$OUT/build/rootsim_phold" "$OUT/bin/"
peer_write_info "$OUT" "$CHECKOUT" "version=${VERSION:-unknown}" \
  "build=CMAKE_BUILD_TYPE=Release (LTO), no MPI, gcc"
echo "$STAMP" >"$OUT/stamp"
echo "rootsim: built $OUT/bin/rootsim_pcs, $OUT/bin/rootsim_phold"
