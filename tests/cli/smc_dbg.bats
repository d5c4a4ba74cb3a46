#!/usr/bin/env bats
# smc_dbg: options, the sections on stdout and in the .tgz, failing sections.

load helpers

teardown() {
	softd_stop
}

SECTIONS="version kernel backend rnics pnet_table smcss_all smcss_smcd smcss_smcr smcd_info smcd_lgs smcd_devices smcd_stats smcd_ueid smcd_seid smcr_info smcr_links smcr_devices smcr_stats smcr_ueid sysctl rdma ip_link ip_addr dmesg"

@test "smc_dbg -v" {
	run "$SMC_BIN/smc_dbg" -v
	[ "$status" -eq 0 ]
	[ "$output" = "smc_dbg utility, smc-tools-$(sed -n 's/.*SMC_TOOLS_RELEASE "\(.*\)".*/\1/p' "$SMC_TOP/lib/version.h")" ]
	run "$SMC_BIN/smc_dbg" --version
	[ "$status" -eq 0 ]
	[[ $output == "smc_dbg utility, smc-tools-"* ]]
}

@test "smc_dbg -h" {
	run "$SMC_BIN/smc_dbg" -h
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '\nUsage: smc_dbg [ OPTIONS ]\n\nCollect debug information\n\n   -h, --help           display this message\n   -t, --tgz            generate .tgz file\n   -v, --version        display version info\n')" ]
}

@test "smc_dbg: bad option" {
	run "$SMC_BIN/smc_dbg" -x
	[ "$status" -eq 1 ]
	[[ $output == *"invalid option -- 'x'"* ]]
	[[ $output == *"Usage: smc_dbg [ OPTIONS ]"* ]]
}

@test "smc_dbg: all sections on stdout against a soft backend" {
	softd_start
	export SMC_STATS_CACHE="$BATS_TEST_TMPDIR/user-cache"
	run "$SMC_BIN/smc_dbg"
	[ "$status" -eq 0 ]
	# the headers, in order
	[ "$(printf '%s\n' "$output" | sed -n 's/^=== \(.*\) ===$/\1/p' | tr '\n' ' ')" = "$SECTIONS " ]
	[[ $output == *$'\nsmcss utility, smc-tools-'* ]]
	[[ $output == *$'\nsmcd utility, smc-tools-'* ]]
	[[ $output == *$'\nsmcr utility, smc-tools-'* ]]
	[[ $output == *$'\nsmc_pnet utility, smc-tools-'* ]]
	[[ $output == *$'\nbackend in use: soft (smc_softd on '"$SMC_SOFT_SOCKET)"* ]]
	[[ $output == *$'\n$ smcd -d device show\nFID  Type  PCI-ID        PCHID  InUse  #LGs  PNET-ID  \n0000 ISM   ffff:00:00.0  ff01'* ]]
	[[ $output == *$'\n$ smcd info\nKernel Capabilities\n'* ]]
	[[ $output == *$'\n$ smcd -d stats\nSMC-D Connections Summary\n'* ]]
	[[ $output == *$'\n$ smcr -d stats\nSMC-R Connections Summary\n'* ]]
	[[ $output == *$'\n$ smcss -a -d\nState '* ]]
	[[ $output == *$'\n$ uname -a\n'"$(uname -a)"* ]]
	[[ $output == *$'\n$ ip addr\n'* ]]
	# none of the SMC tools failed (rdma, dmesg may, in a container)
	run grep -E '^--- smc[a-z_]* .*failed' <<< "$output"
	[ "$status" -eq 1 ]
	# the user's statistics cache is left alone
	[ ! -e "$SMC_STATS_CACHE" ]
}

@test "smc_dbg -t: the tarball holds one file per section" {
	softd_start
	cd "$BATS_TEST_TMPDIR"
	run "$SMC_BIN/smc_dbg" -t
	[ "$status" -eq 0 ]
	[[ $output =~ ^"Debug output written to $BATS_TEST_TMPDIR/smc_dbg-$(uname -n)-"[0-9]{8}-[0-9]{6}".tgz"$ ]]
	tgz="${output#Debug output written to }"
	[ -f "$tgz" ]
	base=$(basename "$tgz" .tgz)
	run bash -c "tar tzf '$tgz' | sort"
	[ "$status" -eq 0 ]
	expected=$( { echo "$base/"; for s in $SECTIONS; do echo "$base/$s.txt"; done; } | sort)
	[ "$output" = "$expected" ]
	run tar xzOf "$tgz" "$base/smcd_devices.txt"
	[ "${lines[0]}" = '$ smcd -d device show' ]
	[[ ${lines[1]} == "FID  Type  PCI-ID"* ]]
	run tar xzOf "$tgz" "$base/version.txt"
	[[ ${lines[1]} == "smc_dbg utility, smc-tools-"* ]]
}

@test "smc_dbg: a failing section is reported and the rest still runs" {
	# no backend: smcd and friends fail; smc_pnet missing from PATH and from
	# the directory of smc_dbg
	dir="$BATS_TEST_TMPDIR/bin"
	mkdir -p "$dir"
	for t in smcss smcd smcr; do ln -s "$SMC_BIN/$t" "$dir/$t"; done
	cp "$SMC_BIN/smc_dbg" "$dir/smc_dbg"
	run env PATH="$dir:/usr/sbin:/usr/bin:/sbin:/bin" "$dir/smc_dbg"
	[ "$status" -eq 0 ]
	[[ $output == *$'\n=== pnet_table ===\n$ smc_pnet -s\n--- smc_pnet -s: failed, exit status 127\n--- stderr:\nsmc_pnet: command not found\n'* ]]
	[[ $output == *$'\n$ smcd info\n--- smcd info: failed, exit status 1\n--- stderr:\n'"$(no_backend_msg smcd)"$'\n'* ]]
	[[ $output == *$'\nsmc_pnet: not installed\n'* ]]
	[[ $output == *$'\n=== dmesg ===\n'* ]]
	[[ $output == *$'\nbackend in use: none found\n'* ]]
}
