#!/usr/bin/env bats
# smcd/smcr stats and the per-user cache file: a run that cannot reach a
# backend leaves the file as it found it (none, empty, or a baseline).

load helpers

setup() {
	export SMC_STATS_CACHE="$BATS_TEST_TMPDIR/smcstats"
}

teardown() {
	softd_stop || true
}

@test "stats without a backend: no cache file is created, the error is as before" {
	for tool in smcd smcr; do
		for args in "stats" "stats show" "stats reset" "-d stats" "stats json"; do
			run --separate-stderr "$tool" $args
			[ "$status" -eq 1 ]
			[ -z "$output" ]
			[ "$stderr" = "$(no_backend_msg "$tool")" ]
			[ ! -e "$SMC_STATS_CACHE" ]
		done
	done
}

@test "stats without the kernel's SMC: SMC_BACKEND=kernel creates no cache file" {
	kernel_has_smc && skip "this kernel has SMC"
	SMC_BACKEND=kernel run --separate-stderr smcd stats
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcd: SMC_BACKEND=kernel: the kernel has no SMC support (load it with 'modprobe smc')" ]
	[ ! -e "$SMC_STATS_CACHE" ]
}

@test "stats without a backend: an existing cache file stays as it is" {
	printf '0           7               \n' >"$SMC_STATS_CACHE"
	run --separate-stderr smcd stats reset
	[ "$status" -eq 1 ]
	[ "$(cat "$SMC_STATS_CACHE")" = "0           7               " ]
	: >"$SMC_STATS_CACHE"
	run --separate-stderr smcr stats
	[ "$status" -eq 1 ]
	[ -e "$SMC_STATS_CACHE" ]
	[ ! -s "$SMC_STATS_CACHE" ]
}

@test "stats with a backend: show creates the (empty) cache file, reset fills it, as upstream" {
	softd_start
	run --separate-stderr smcd stats
	[ "$status" -eq 0 ]
	[ -e "$SMC_STATS_CACHE" ]
	[ ! -s "$SMC_STATS_CACHE" ]
	[ "$(stat -c %a "$SMC_STATS_CACHE")" = 600 ]
	run --separate-stderr smcr stats reset
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$SMC_STATS_CACHE")" -eq 194 ]
	softd_stop
}
