#!/usr/bin/env bash
# Builds USE (a checkout, plain Make) with our runners:
#   bench/peers/use/build.sh CHECKOUT OUT_DIR  ->  OUT_DIR/bin/use_pcs, use_phold
# USE's build writes into its tree and compiles the lookahead in, so each
# runner is built in its own copy of the checkout (OUT_DIR/src-<model>) with
# peer.mk, at USE's default configuration (OPTIMISTIC_LEVEL=1, REPORT=1: the
# sources do not compile with REPORT=0) and LOOKAHEAD = our model's lookahead.
set -euo pipefail
PEER_ENGINE=use
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common/build_lib.sh"
PINNED_URL=https://github.com/HPDCS/USE.git
PINNED_COMMIT=e488004e1fc907118b6d5d867d16c310066892d7  # master, 2023-10-22
LOOKAHEADS="pcs:1.0 phold:0.1"  # handoff_delay of pcs_v0, lookahead of phold

[ $# -eq 2 ] || peer_die "usage: build.sh CHECKOUT OUT_DIR"
peer_checkout "$1" "$PINNED_URL" "$PINNED_COMMIT"
CHECKOUT="$(cd "$1" && pwd)"
[ -f "$CHECKOUT/core/main.c" ] && [ -f "$CHECKOUT/include/ROOT-Sim.h" ] ||
  peer_die "$CHECKOUT is not a USE checkout (no core/main.c, include/ROOT-Sim.h)"
OUT="$(mkdir -p "$2" && cd "$2" && pwd)"
[ "$(uname -m)" = x86_64 ] || peer_die "USE builds on x86-64 only"
for tool in make gcc ld objcopy python3; do peer_require_tool "$tool"; done
printf '#include <numa.h>\n' | gcc -E -x c - >/dev/null 2>&1 ||
  peer_die "numa.h not found (USE links libnuma: e.g. apt-get install libnuma-dev)"

STAMP="$(peer_stamp "$CHECKOUT" "$HERE"/*.c "$HERE"/*.h "$HERE"/peer.mk "$HERE"/build.sh "$HERE"/../common/*.h)"
if peer_up_to_date "$OUT" "$STAMP" use_pcs use_phold; then
  echo "use: up to date in $OUT"
  exit 0
fi
LOG="$OUT/build.log"
: >"$LOG"
echo "use: building $CHECKOUT ($(peer_commit "$CHECKOUT")) into $OUT (log: $LOG)"
# USE's `make config` times the clock and reads the caches once; both copies share it.
rm -rf "$OUT/src-base"
peer_run "$LOG" cp -a "$CHECKOUT" "$OUT/src-base"
peer_run "$LOG" make -C "$OUT/src-base" config
mkdir -p "$OUT/bin"
for entry in $LOOKAHEADS; do
  model="${entry%%:*}"
  rm -rf "$OUT/src-$model"
  peer_run "$LOG" cp -a "$OUT/src-base" "$OUT/src-$model"
  peer_run "$LOG" make -C "$OUT/src-$model" -f "$HERE/peer.mk" peer-runner PEER_MODEL="$model" \
    PEER_OUT="$OUT/bin/use_$model" LOOKAHEAD="${entry##*:}" PRINT_SCREEN=0
done
peer_write_info "$OUT" "$CHECKOUT" "build=USE Makefile defaults (OPTIMISTIC_LEVEL=1, REPORT=1, -O3), PRINT_SCREEN=0" \
  "lookahead=$LOOKAHEADS"
echo "$STAMP" >"$OUT/stamp"
echo "use: built $OUT/bin/use_pcs, $OUT/bin/use_phold"
