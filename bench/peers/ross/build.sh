#!/usr/bin/env bash
# Builds ROSS (a checkout, CMake + MPI) and our runners against it:
#   bench/peers/ross/build.sh CHECKOUT OUT_DIR   ->  OUT_DIR/bin/ross_pcs, ross_phold
# ROSS itself: Release (-O3), its other options at their defaults, compiled
# with mpicc; the runners: mpicc -O3 against the installed library.
set -euo pipefail
PEER_ENGINE=ross
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common/build_lib.sh"
PINNED_URL=https://github.com/ROSS-org/ROSS.git
PINNED_COMMIT=3a19b9b9c0dac023dce7b77ee86670f45b874319  # v8.1.1

[ $# -eq 2 ] || peer_die "usage: build.sh CHECKOUT OUT_DIR"
peer_checkout "$1" "$PINNED_URL" "$PINNED_COMMIT"
CHECKOUT="$(cd "$1" && pwd)"
[ -f "$CHECKOUT/core/ross.h" ] || peer_die "$CHECKOUT is not a ROSS checkout (no core/ross.h)"
OUT="$(mkdir -p "$2" && cd "$2" && pwd)"
for tool in cmake make mpicc mpirun; do
  peer_require_tool "$tool" "ROSS needs CMake and MPI: e.g. apt-get install cmake libopenmpi-dev openmpi-bin"
done

STAMP="$(peer_stamp "$CHECKOUT" "$HERE"/*.c "$HERE"/*.h "$HERE"/build.sh "$HERE"/../common/*.h)"
if peer_up_to_date "$OUT" "$STAMP" ross_pcs ross_phold; then
  echo "ross: up to date in $OUT"
  exit 0
fi
LOG="$OUT/build.log"
: >"$LOG"
echo "ross: building $CHECKOUT ($(peer_commit "$CHECKOUT")) into $OUT (log: $LOG)"
peer_run "$LOG" env CC=mpicc cmake -S "$CHECKOUT" -B "$OUT/ross-build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$OUT/ross-install" -DROSS_BUILD_MODELS=OFF
peer_run "$LOG" cmake --build "$OUT/ross-build" -j 2
peer_run "$LOG" cmake --install "$OUT/ross-build"
mkdir -p "$OUT/bin"
for model in pcs phold; do
  peer_run "$LOG" mpicc -O3 -std=gnu11 -Wall -Wextra -I"$OUT/ross-install/include" \
    -I"$HERE/../common" -I"$HERE" "$HERE/$model.c" -L"$OUT/ross-install/lib" -lROSS -lm \
    -o "$OUT/bin/ross_$model"
done
peer_write_info "$OUT" "$CHECKOUT" "build=CMAKE_BUILD_TYPE=Release, CC=mpicc" \
  "mpi=$(mpirun --version 2>&1 | head -n 1)"
echo "$STAMP" >"$OUT/stamp"
echo "ross: built $OUT/bin/ross_pcs, $OUT/bin/ross_phold"
