#!/usr/bin/env bats
# smc_dbg: options, the sections on stdout and in the .tgz, failing sections.

load helpers

teardown() {
	softd_stop
}

SECTIONS="version kernel backend rnics pnet_table smcss_all smcss_smcd smcss_smcr smcd_info smcd_lgs smcd_devices smcd_stats smcd_ueid smcd_seid smcd_hslimit smcr_info smcr_links smcr_devices smcr_stats smcr_ueid sysctl soft_settings rdma ip_link ip_addr dmesg"

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
	[[ $output == *$'\n=== smcd_hslimit ===\n$ smcd hslimit show\nHandshake limitation: disabled\n'* ]]
	[[ $output == *$'\n$ uname -a\n'"$(uname -a)"* ]]
	[[ $output == *$'\n$ ip addr\n'* ]]
	# none of the SMC tools failed (rdma, dmesg may, in a container)
	run grep -E '^--- smc[a-z_]* .*failed' <<< "$output"
	[ "$status" -eq 1 ]
	# the user's statistics cache is left alone
	[ ! -e "$SMC_STATS_CACHE" ]
}

@test "smc_dbg > file: each section under its header" {
	softd_start
	"$SMC_BIN/smc_dbg" >"$BATS_TEST_TMPDIR/out"
	run sed -n '/^=== version ===$/{n;p}' "$BATS_TEST_TMPDIR/out"
	[[ $output == "smcss utility, smc-tools-"* ]]
	run sed -n '/^=== smcd_hslimit ===$/{n;p}' "$BATS_TEST_TMPDIR/out"
	[ "$output" = '$ smcd hslimit show' ]
	[ "$(sed -n 's/^=== \(.*\) ===$/\1/p' "$BATS_TEST_TMPDIR/out" | tr '\n' ' ')" = "$SECTIONS " ]
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
	[[ $output == *$'\n=== soft_settings ===\nsoft backend: not in use\n'* ]]
}

# A procfs tree of a kernel with SMC below $1: modules and most net.smc sysctls.
make_proc() {
	local smc="$1/sys/net/smc"
	mkdir -p "$smc"
	printf 'smc 311296 1 smc_diag, Live 0x0000000000000000\nsmc_diag 16384 0 - Live 0x0000000000000000\next4 1 2 - Live 0x0\n' >"$1/modules"
	echo 65536 >"$smc/autocorking_size"
	echo 0 >"$smc/smcr_buf_type"
	echo 30 >"$smc/smcr_testlink_time"
	echo 65536 >"$smc/wmem"
	echo 131072 >"$smc/rmem"
	echo 2 >"$smc/smcr_max_links_per_lgr"
	echo 255 >"$smc/smcr_max_conns_per_lgr"
	echo 1 >"$smc/limit_smc_hs"
	echo >"$smc/hs_ctrl"
	printf 'a\tb\nc\n' >"$smc/zz_future"
}

@test "smc_dbg: the kernel's net.smc sysctls from SMC_PROCFS_ROOT" {
	make_proc "$BATS_TEST_TMPDIR/proc"
	SMC_PROCFS_ROOT="$BATS_TEST_TMPDIR/proc" run "$SMC_BIN/smc_dbg"
	[ "$status" -eq 0 ]
	sysctl=$(printf '%s\n' "$output" | sed -n '/^=== sysctl ===$/,/^$/p')
	[ "$sysctl" = "=== sysctl ===
autocorking_size = 65536
hs_ctrl =
limit_smc_hs = 1
rmem = 131072
smcr_buf_type = 0
smcr_max_conns_per_lgr = 255
smcr_max_links_per_lgr = 2
smcr_testlink_time = 30
wmem = 65536
zz_future = a b c
not in this kernel: smcr_max_send_wr smcr_max_recv_wr" ]
	[[ $output == *$'\nSMC/RDMA modules:\n  smc 311296 1 smc_diag,\n  smc_diag 16384 0 -\n'* ]]
}

@test "smc_dbg: without net.smc the bundle says the kernel has no SMC" {
	mkdir -p "$BATS_TEST_TMPDIR/proc/sys/net"
	SMC_PROCFS_ROOT="$BATS_TEST_TMPDIR/proc" run "$SMC_BIN/smc_dbg"
	[ "$status" -eq 0 ]
	[[ $output == *$'\n=== sysctl ===\n'"$BATS_TEST_TMPDIR/proc/sys/net/smc: absent: the kernel has no SMC (the smc module is not loaded), so no net.smc sysctls"$'\n'* ]]
	[[ $output == *$'\n  not loaded (no '"$BATS_TEST_TMPDIR/proc/modules: kernel without module support)"$'\n'* ]]
}

@test "smc_dbg: the soft backend's settings and handshake limitation" {
	local sys
	sys=$(realpath "$BATS_TEST_TMPDIR")
	# the daemon's sysfs root from its environment, as smc_dbg reads it there
	SMC_SYSFS_ROOT="$sys" softd_start --peer-port 0 --roce sr_dbg=lo
	[ -z "${SMC_SYSFS_ROOT:-}" ]
	smcd hslimit enable
	cd "$BATS_TEST_TMPDIR"
	run "$SMC_BIN/smc_dbg" -t
	[ "$status" -eq 0 ]
	tgz="${output#Debug output written to }"
	run tar xzOf "$tgz" "$(basename "$tgz" .tgz)/soft_settings.txt"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "daemon = pid $SOFTD_PID on $SMC_SOFT_SOCKET" ]
	[ "${lines[1]}" = "command = $SMC_BIN/smc_softd -f -s $SMC_SOFT_SOCKET --peer-port 0 --roce sr_dbg=lo" ]
	[ "$(printf '%s\n' "${lines[@]:2}")" = "socket = $SMC_SOFT_SOCKET
peer_port = 0
sysfs = $sys
roce = sr_dbg=lo
wmem = 262144
rmem = 262144
smcd_buf_min = 16384
smcd_buf_max = 1048576
smcr_buf_size = 131072
max_ueids = 4
max_sockets_per_client = 65536
client_queue_max = 4194304
limit_smc_hs = 1" ]
	smcd hslimit disable
	run "$SMC_BIN/smc_dbg"
	[[ $output == *$'\nclient_queue_max = 4194304\nlimit_smc_hs = 0\n'* ]]
}
