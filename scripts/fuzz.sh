#!/bin/sh
# Fuzzes every native Go fuzz target (func FuzzX in internal/**/*_test.go)
# for a set time each, one after the other. A failing input is written to
# the package's testdata/fuzz/FuzzX/ by go test: commit it with the fix, so
# it stays a seed that every `go test` runs.
#
#   scripts/fuzz.sh [SECONDS] [PATTERN]
#
# SECONDS per target (default 60); PATTERN picks targets by name (a grep -E
# pattern, default all). CI runs `scripts/fuzz.sh 3`.
set -eu
secs=${1:-60}
pattern=${2:-.}
cd "$(dirname "$0")/.."
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for file in $(grep -rl --include='*_test.go' '^func Fuzz' internal | sort); do
  pkg=./$(dirname "$file")
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
    echo "$target" | grep -Eq "$pattern" || continue
    echo "== $pkg $target (${secs}s)"
    # Go's fuzzer can end a short run with "context deadline exceeded" and
    # no failing input (the coordinator's deadline racing a worker): that
    # is no finding, so such a run is tried again once. A real finding
    # always writes its input ("Failing input written to …") and fails.
    tries=0
    while :; do
      tries=$((tries + 1))
      if go test "$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "${secs}s" -parallel "${FUZZ_PARALLEL:-2}" >"$log" 2>&1; then
        cat "$log"
        break
      fi
      cat "$log"
      if ! grep -q 'Failing input written' "$log" && grep -q 'context deadline exceeded' "$log"; then
        if [ "$tries" -lt 2 ]; then
          echo "note: $target stopped at its deadline without a finding; trying it once more"
          continue
        fi
        echo "note: $target stopped at its deadline twice without a finding (a fuzzer hiccup, not a crash)"
        break
      fi
      echo "FAIL: $pkg $target (the failing input is in $pkg/testdata/fuzz/$target/)"
      failed=1
      break
    done
  done
done
exit $failed
