#!/usr/bin/env bash
# Checks the round protocol's model (round_protocol.pml) with spin: every
# state of each bounded configuration below is explored and must hold no
# assertion violation and no invalid end state; the same model with the
# planted bugs (a dropped wake notice; an owner taking the outbox its
# senders are writing) must fail. Needs spin and a C compiler.
set -euo pipefail
model="$(cd "$(dirname "$0")" && pwd)/round_protocol.pml"
command -v spin >/dev/null || { echo "model-check: spin is not installed (Debian: apt-get install spin)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

# Prints pan's summary line ("... errors: N") for the model built with "$@".
verify() {
  spin "$@" -a "$model" >/dev/null
  cc -O2 -DSAFETY -DCOLLAPSE -w -o pan pan.c
  ./pan -m300000 >pan.out 2>&1 || true
  grep -m1 -E "errors: [0-9]+" pan.out || { cat pan.out >&2; echo "errors: unknown"; }
}

status=0
# workers x entities x rounds: exhaustive searches of ~0.5M and ~1.4M states.
for bounds in "-DW=2 -DE=4 -DR=2" "-DW=2 -DE=3 -DR=3"; do
  # shellcheck disable=SC2086
  result="$(verify $bounds)"
  echo "model-check: $bounds: $result"
  [[ "$result" == *"errors: 0" ]] || status=1
  for bug in DROP_NOTICE SAME_PARITY; do
    # shellcheck disable=SC2086
    planted="$(verify $bounds -D$bug)"
    echo "model-check: $bounds with the planted bug $bug: $planted"
    [[ "$planted" =~ errors:\ [1-9] ]] || { echo "model-check: $bug was not found" >&2; status=1; }
  done
done
exit $status
