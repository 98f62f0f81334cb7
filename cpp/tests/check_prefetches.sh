#!/bin/sh
# The prefetches of the parallel drain loop survive the optimizer: GCC has
# deleted calls of helpers that only prefetch (compiler.hpp,
# SEER_PREFETCH_HELPER). ParallelEngine::drain_list issues six: the queue line
# six entities ahead, then, two ahead, the queue line, its earliest event, its
# first key, the entity's runtime record and its state.
# usage: check_prefetches.sh BINARY  (a program that links the runtime)
binary="$1"
want=6
found=$(objdump -d --no-show-raw-insn -C "$binary" |
  awk '/<seer::ParallelEngine::drain_list\(.*>:$/,/^$/' | grep -c prefetcht0)
echo "ParallelEngine::drain_list: $found prefetch instructions (at least $want expected)"
[ "$found" -ge "$want" ]
