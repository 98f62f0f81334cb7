# Shared by the peers' build scripts (sourced, not run): argument checks, tool
# checks, the pinned clone, the up-to-date stamp. A missing checkout or tool
# ends the build with exit code 2 and one line saying what to do; a failing
# build with exit code 1 and the tail of its log.

peer_die() {  # peer_die MESSAGE: exit 2 (something to install or point to)
  echo "$PEER_ENGINE: $*" >&2
  exit 2
}

peer_require_tool() {  # peer_require_tool TOOL [HINT]
  command -v "$1" >/dev/null 2>&1 || peer_die "'$1' not found on PATH${2:+ ($2)}"
}

# peer_checkout PATH URL COMMIT: PATH must be a checkout of the engine. When it
# does not exist and SEER_PEER_CLONE=1, clone URL there and check out COMMIT
# (needs the network); else stop with exit 2.
peer_checkout() {
  local path="$1" url="$2" commit="$3"
  [ -n "$path" ] || peer_die "no checkout given (usage: build.sh CHECKOUT OUT_DIR)"
  if [ ! -e "$path" ]; then
    if [ "${SEER_PEER_CLONE:-0}" = "1" ]; then
      peer_require_tool git
      echo "$PEER_ENGINE: cloning $url at $commit into $path" >&2
      git clone --quiet "$url" "$path" && git -C "$path" checkout --quiet "$commit" ||
        peer_die "could not clone $url (no network?); clone it yourself and pass its path"
    else
      peer_die "checkout $path does not exist (clone $url, check out $commit, or set SEER_PEER_CLONE=1)"
    fi
  fi
  [ -d "$path" ] || peer_die "$path is not a directory"
}

peer_commit() {  # the checkout's commit, or "unknown" (an unpacked archive)
  git -C "$1" rev-parse HEAD 2>/dev/null || echo unknown
}

# peer_stamp CHECKOUT FILES...: a digest of what the build depends on (the
# checkout's path and commit, our sources, the compilers' versions).
peer_stamp() {
  local checkout="$1"
  shift
  {
    echo "$checkout $(peer_commit "$checkout")"
    git -C "$checkout" status --porcelain 2>/dev/null
    cat "$@"
    cc --version 2>/dev/null | head -n 1
  } | sha256sum | cut -d' ' -f1
}

# peer_up_to_date OUT STAMP BINARIES...: true when OUT/stamp matches and every
# binary exists.
peer_up_to_date() {
  local out="$1" stamp="$2"
  shift 2
  [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] || return 1
  for b in "$@"; do [ -x "$out/bin/$b" ] || return 1; done
}

# peer_run LOG COMMAND...: run a build step, its output to LOG; on failure
# print the log's tail and exit 1.
peer_run() {
  local log="$1"
  shift
  if ! "$@" >>"$log" 2>&1; then
    echo "$PEER_ENGINE: build step failed: $*" >&2
    tail -n 25 "$log" >&2
    exit 1
  fi
}

# peer_write_info OUT CHECKOUT KEY=VALUE...: OUT/engine.txt, read by the
# harness (commit, version, build options).
peer_write_info() {
  local out="$1" checkout="$2"
  shift 2
  {
    echo "engine=$PEER_ENGINE"
    echo "checkout=$checkout"
    echo "commit=$(peer_commit "$checkout")"
    echo "describe=$(git -C "$checkout" describe --tags --always 2>/dev/null || echo unknown)"
    echo "compiler=$(cc --version 2>/dev/null | head -n 1)"
    for kv in "$@"; do echo "$kv"; done
  } >"$out/engine.txt"
}
