#!/usr/bin/env bats
# scripts/check-layers.sh, the rule of doc/layers.md, on the daemon's and the
# preload's objects of this build: it passes in the Makefile's order, and
# names the object and the symbol when a layer uses one above it.

load helpers

LAYERS=(base nl registry fabric capture service families runtime)

objects() {
	local l
	for l in "${LAYERS[@]}"; do
		ls "$SMC_BIN/.obj/soft/$l/"*.o
	done
}

@test "layers: the daemon's objects use no layer above their own" {
	run "$SMC_TOP/scripts/check-layers.sh" "$SMC_BIN/.obj" soft "${LAYERS[@]}" -- $(objects)
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^PASS layers: soft/[a-z]* uses no layer above it$')" -eq 8 ]
	! echo "$output" | grep -q FAIL
}

@test "layers: the preload's objects use no layer above their own" {
	local l objs=()
	for l in base rdma smcr transport conn share hooks; do
		objs+=("$SMC_BIN/.obj/pic/preload/$l/"*.o)
	done
	run "$SMC_TOP/scripts/check-layers.sh" "$SMC_BIN/.obj/pic" preload base rdma smcr transport conn share hooks -- "${objs[@]}"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^PASS layers: preload/[a-z]* uses no layer above it$')" -eq 7 ]
	# the hooks taken as the lowest: they call into every layer
	run "$SMC_TOP/scripts/check-layers.sh" "$SMC_BIN/.obj/pic" preload hooks base -- "${objs[@]}"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qx '  preload/hooks/socket.o uses preload_next_init of preload/base'
}

@test "layers: a lower layer that calls up is named with its object and symbol" {
	# runtime taken as the lowest: it calls the dispatch of families/ and nl/'s replies
	run "$SMC_TOP/scripts/check-layers.sh" "$SMC_BIN/.obj" soft runtime families -- $(objects)
	[ "$status" -eq 1 ]
	echo "$output" | grep -qx 'FAIL layers: soft/runtime uses a layer above it'
	echo "$output" | grep -qx '  soft/runtime/daemon_client.o uses soft_handle of soft/families'
	echo "$output" | grep -qx 'PASS layers: soft/families uses no layer above it'
}

@test "layers: a layer without objects fails rather than passing empty" {
	run "$SMC_TOP/scripts/check-layers.sh" "$SMC_BIN/.obj" soft base nowhere -- $(objects)
	[ "$status" -eq 1 ]
	echo "$output" | grep -qx "FAIL layers: soft/nowhere: no objects under $SMC_BIN/.obj/soft/nowhere"
}
