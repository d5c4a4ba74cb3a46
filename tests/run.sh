#!/usr/bin/env bash
# Run every test of `make check` and end with one line "N passed, N failed".
# CHECK_DIR is the sanitizer build made by `make check`.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
export CHECK_DIR=${CHECK_DIR:-build/check}
export SMC_BIN="$top/$CHECK_DIR"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
passed=0 failed=0
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

count() { # $1 = label, reads a file of PASS/FAIL or TAP lines
	local p f
	p=$(grep -c -E '^(PASS |ok )' "$2")
	f=$(grep -c -E '^(FAIL |not ok )' "$2")
	passed=$((passed + p)); failed=$((failed + f))
	printf '%s: %d passed, %d failed\n' "$1" "$p" "$f" >&2
}

# 1. C unit tests (parsers and formatters, fed real message bytes)
"$SMC_BIN/tests/unit_tests" > "$log/unit" 2>&1
rc=$?
cat "$log/unit"
if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$log/unit"; then
	echo "FAIL unit: test binary exited with $rc" >> "$log/unit"
fi
count unit "$log/unit"

# 1b. the daemon's layers (doc/layers.md): no object uses a layer above its own
make --no-print-directory -s O="$CHECK_DIR" SANITIZE=1 check-layers > "$log/layers" 2>&1
cat "$log/layers"
grep -q -E '^(PASS|FAIL) ' "$log/layers" || echo "FAIL layers: make check-layers printed no result" >> "$log/layers"
count layers "$log/layers"

# 2. libFuzzer over the reply parsers and the daemon's request parser, bounded in time
fuzz_secs=${SMC_FUZZ_SECONDS:-40}
if command -v clang >/dev/null && make --no-print-directory -s fuzz >"$log/fuzzbuild" 2>&1; then
	mkdir -p "$log/corpus"
	if "$CHECK_DIR/fuzz_replies" -max_total_time="$fuzz_secs" -timeout=20 -max_len=4096 \
		"$log/corpus" tests/fuzz/corpus >"$log/fuzzrun" 2>&1; then
		echo "PASS fuzz: reply and request parsers, ${fuzz_secs}s" > "$log/fuzz"
	else
		tail -40 "$log/fuzzrun"
		echo "FAIL fuzz: reply and request parsers (see output above)" > "$log/fuzz"
	fi
else
	cat "$log/fuzzbuild"
	echo "FAIL fuzz: cannot build the libFuzzer target (clang and its libclang-rt-N-dev needed: scripts/install-deps.sh)" > "$log/fuzz"
fi
cat "$log/fuzz"
count fuzz "$log/fuzz"

# 3. command-line tests (bats), each suite with its own private backend setup
if command -v bats >/dev/null; then
	bats --tap tests/cli > "$log/cli" 2>&1
	cat "$log/cli"
	count cli "$log/cli"
else
	echo "FAIL cli: bats is not installed" | tee "$log/cli"
	count cli "$log/cli"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
