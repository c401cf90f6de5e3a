#!/bin/sh
# `make bench-compare`: builds `ktv` (release) as it was at a git revision, in a worktree under
# .build/bench-base/, once per revision: the binary is kept as .build/bench-base/ktv-<commit> and the
# worktree removed. Prints the binary's path (the build's own output goes to standard error).
# Usage: Tools/build-revision.sh SWIFT REVISION
set -eu
swift=$1
rev=$(git rev-parse --verify "$2^{commit}")
bin=.build/bench-base/ktv-$rev
if [ ! -x "$bin" ]; then
  dir=.build/bench-base/$rev
  mkdir -p .build/bench-base
  [ -d "$dir" ] || git worktree add --detach "$dir" "$rev" >&2
  (cd "$dir" && "$swift" build -c release --product ktv) >&2
  cp "$dir/.build/release/ktv" "$bin.tmp" && mv "$bin.tmp" "$bin"
  git worktree remove --force "$dir" >&2
fi
echo "$bin"
