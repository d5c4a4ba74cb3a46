#!/usr/bin/env bats
# smc_rnics on the sysfs fixture trees (SMC_SYSFS_ROOT): tables, filters, hot-plug, errors.

load helpers

FIX="$BATS_TEST_DIRNAME/../fixtures/sysfs"

setup() {
	export SMC_RNICS_ARCH=s390x
	export SMC_SYSFS_ROOT="$FIX/s390"
}

# A soft backend left running by a failed test.
teardown() {
	[ -z "${SOFTD_PID:-}" ] || softd_stop
}

# A private copy of a fixture whose power files the test may change.
copy_fixture() {
	cp -a "$FIX/$1" "$BATS_TEST_TMPDIR/sys"
	export SMC_SYSFS_ROOT="$BATS_TEST_TMPDIR/sys"
}

# The usage ends with a blank line, which `run` would cut: compare the raw stdout.
usage_is_stdout() {
	diff -u "$EXPECTED/smc_rnics_usage" <(smc_rnics "$@" 2>/dev/null)
}

power() { cat "$SMC_SYSFS_ROOT/bus/pci/slots/$1/power"; }

@test "smc_rnics -v prints the version" {
	run --separate-stderr smc_rnics -v
	[ "$status" -eq 0 ]
	[ "$output" = "smc_rnics utility, smc-tools-1.8.5" ]
	run --separate-stderr smc_rnics --version -h
	[ "$output" = "smc_rnics utility, smc-tools-1.8.5" ]
}

@test "smc_rnics -h prints the usage on stdout, also after other options" {
	run --separate-stderr smc_rnics -h
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	usage_is_stdout -h
	run --separate-stderr smc_rnics -a zz --help
	[ "$status" -eq 0 ]
	usage_is_stdout -a zz --help
}

@test "smc_rnics: unknown option and missing argument exit 2" {
	run --separate-stderr smc_rnics -x
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "smc_rnics: invalid option -- 'x'" ]
	run --separate-stderr smc_rnics -e
	[ "$status" -eq 2 ]
	[ "$stderr" = "smc_rnics: option requires an argument -- 'e'" ]
	run --separate-stderr smc_rnics --bogus
	[ "$status" -eq 2 ]
	[ "$stderr" = "smc_rnics: unrecognized option '--bogus'" ]
}

@test "smc_rnics: s390 default table" {
	run --separate-stderr smc_rnics
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	assert_output_file smc_rnics_s390
}

@test "smc_rnics -a: powered-off slots and unknown function types" {
	run --separate-stderr smc_rnics -a
	[ "$status" -eq 0 ]
	assert_output_file smc_rnics_s390_all
	run --separate-stderr smc_rnics --all
	assert_output_file smc_rnics_s390_all
}

@test "smc_rnics -r: raw IDs, raw PFT, VFN" {
	run --separate-stderr smc_rnics -r
	[ "$status" -eq 0 ]
	assert_output_file smc_rnics_s390_raw
	run --separate-stderr smc_rnics --rawids
	assert_output_file smc_rnics_s390_raw
}

@test "smc_rnics -I: one row per IB port" {
	run --separate-stderr smc_rnics -I
	[ "$status" -eq 0 ]
	assert_output_file smc_rnics_s390_ib
	run --separate-stderr smc_rnics -I -r
	assert_output_file smc_rnics_s390_ib_raw
	run --separate-stderr smc_rnics --IB-dev --rawids
	assert_output_file smc_rnics_s390_ib_raw
}

@test "smc_rnics -j: one JSON document" {
	run --separate-stderr smc_rnics -a -j
	[ "$status" -eq 0 ]
	assert_output_file smc_rnics_s390_all_json
	run --separate-stderr smc_rnics -a -r -I --json
	assert_output_file smc_rnics_s390_ib_raw_json
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["rnics"]) == 12' <<<"$output"
}

@test "smc_rnics FID: filter, found exits 0 (upstream: always 8)" {
	run --separate-stderr smc_rnics 0x212
	[ "$status" -eq 0 ]
	assert_output_file smc_rnics_s390_fid212
	run --separate-stderr smc_rnics 00000212
	[ "$status" -eq 0 ]
	assert_output_file smc_rnics_s390_fid212
}

@test "smc_rnics FID: a powered-off FID needs -a, else exit 8" {
	run --separate-stderr smc_rnics 1f
	[ "$status" -eq 8 ]
	[ "${#lines[@]}" -eq 2 ]
	run --separate-stderr smc_rnics -a 1F
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "  1f  0                                                                                " ]
	run --separate-stderr smc_rnics 77
	[ "$status" -eq 8 ]
	[ -z "$stderr" ]
}

@test "smc_rnics: a second FID is an error naming it, exit 2" {
	run --separate-stderr smc_rnics 1 2
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "smc_rnics: listing FID 1: extra argument '2' (at most one FID)" ]
	run --separate-stderr smc_rnics -a 11 zz
	[ "$status" -eq 2 ]
	[ "$stderr" = "smc_rnics: listing FID 11: extra argument 'zz' (at most one FID)" ]
}

@test "smc_rnics: invalid FIDs exit 3" {
	for f in zz 0xzz 12g ''; do
		run --separate-stderr smc_rnics "$f"
		[ "$status" -eq 3 ]
		[ -z "$output" ]
		[ "$stderr" = "Error: '${f#0x}' is not a valid FID" ]
	done
	run --separate-stderr smc_rnics -e 0xg
	[ "$status" -eq 3 ]
	[ "$stderr" = "Error: 'g' is not a valid FID" ]
	run --separate-stderr smc_rnics -d 100000000
	[ "$status" -eq 3 ]
	[ "$stderr" = "Error: '100000000' is not a valid FID" ]
}

@test "smc_rnics: a slot without a PCI device is reported and skipped" {
	export SMC_SYSFS_ROOT="$FIX/s390-nodev"
	run --separate-stderr smc_rnics
	[ "$status" -eq 0 ]
	[ "$stderr" = "Error: No matching device found for FID 00000030" ]
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[2]}" = "  11  1      0000:00:00.0  01c4   RoCE_Express2    ROC2  y    0     NET1               ens1160" ]
}

@test "smc_rnics -e/-d with a positional FID: usage, exit 4" {
	run --separate-stderr smc_rnics -e 1f 11
	[ "$status" -eq 4 ]
	[ -z "$stderr" ]
	usage_is_stdout -e 1f 11
	run --separate-stderr smc_rnics 11 --disable 11
	[ "$status" -eq 4 ]
}

@test "smc_rnics -e: powers a slot on" {
	copy_fixture s390
	[ "$(power 0000001f)" = 0 ]
	run --separate-stderr smc_rnics -e 1f
	[ "$status" -eq 0 ]
	[ -z "$output" ] && [ -z "$stderr" ]
	[ "$(power 0000001f)" = 1 ]
	run --separate-stderr smc_rnics --enable 0x1f
	[ "$status" -eq 6 ]
	[ "$stderr" = "Error: FID 1f is already enabled" ]
}

@test "smc_rnics -d: powers a slot off, the listing follows" {
	copy_fixture s390
	run --separate-stderr smc_rnics -d 0x00000212
	[ "$status" -eq 0 ]
	[ -z "$output" ] && [ -z "$stderr" ]
	[ "$(power 00000212)" = 0 ]
	run --separate-stderr smc_rnics 212
	[ "$status" -eq 8 ]
	run --separate-stderr smc_rnics -a 212
	[ "${lines[2]}" = " 212  0                                                                                " ]
	run --separate-stderr smc_rnics --disable 212
	[ "$status" -eq 6 ]
	[ "$stderr" = "Error: FID 212 is already disabled" ]
}

@test "smc_rnics -e/-d: the last one wins" {
	copy_fixture s390
	run --separate-stderr smc_rnics -d 11 -e 1f
	[ "$status" -eq 0 ]
	[ "$(power 0000001f)" = 1 ]
	[ "$(power 00000011)" = 1 ]
}

@test "smc_rnics -e/-d: unknown FID exits 5" {
	run --separate-stderr smc_rnics -e 0x77
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "$stderr" = "Error: FID 77 does not exist" ]
	run --separate-stderr smc_rnics -d 0000abcd
	[ "$status" -eq 5 ]
	[ "$stderr" = "Error: FID abcd does not exist" ]
}

@test "smc_rnics -e/-d: a failed power write exits 7" {
	copy_fixture s390
	local p="$SMC_SYSFS_ROOT/bus/pci/slots/0000001f/power"
	rm "$p" && mkdir "$p"
	run --separate-stderr smc_rnics -e 1f
	[ "$status" -eq 7 ]
	[ "$stderr" = "Error: Failed to enable FID 1f" ]
	p="$SMC_SYSFS_ROOT/bus/pci/slots/00000011/power"
	rm "$p" && ln -s /dev/full "$p"
	run --separate-stderr smc_rnics -d 11
	[ "$status" -eq 7 ]
	[ "$stderr" = "Error: Failed to disable FID 11" ]
}

@test "smc_rnics: x86 lists the RDMA devices of class/infiniband" {
	export SMC_RNICS_ARCH=x86_64 SMC_SYSFS_ROOT="$FIX/x86"
	run --separate-stderr smc_rnics
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	assert_output_file smc_rnics_x86
	run --separate-stderr smc_rnics -a -r -I
	assert_output_file smc_rnics_x86
	run --separate-stderr smc_rnics -j
	assert_output_file smc_rnics_x86_json
}

@test "smc_rnics: x86 adds the soft backend's devices, marked as such" {
	export SMC_RNICS_ARCH=x86_64 SMC_SYSFS_ROOT="$FIX/x86"
	softd_start --roce sr_test=lo
	smc_pnet -a NET7 -D sr_test
	run --separate-stderr smc_rnics
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# the sysfs devices first, as without the daemon, then the soft ones
	[ "$(printf '%s\n' "${lines[@]:0:${#lines[@]}-2}")" = "$(cat "$EXPECTED/smc_rnics_x86")" ]
	[ "${lines[-2]}" = "sr_test         n/a           soft-roce    1     ACTIVE        NET7*              lo" ]
	[ "${lines[-1]}" = "n/a             ffff:00:00.0  soft-ism     n/a   ACTIVE        n/a                n/a" ]
	run --separate-stderr smc_rnics -j
	[[ "$output" == *'{"ib_dev":"sr_test","pci_id":null,"type":"soft-roce","ib_port":1,"port_state":"ACTIVE","pnet_id":"NET7","pnet_user":true,"net_dev":"lo"}'* ]]
	softd_stop
}

@test "smc_rnics: s390 adds the soft backend's devices after the PCI functions, in its columns" {
	softd_start --roce sr_test=lo
	smc_pnet -a NET7 -D sr_test
	run --separate-stderr smc_rnics
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# the PCI functions first, as without the daemon; a soft device has no FID,
	# its port counted from 0 as the net device's, then soft ISM
	[ "$(printf '%s\n' "${lines[@]:0:${#lines[@]}-2}")" = "$(cat "$EXPECTED/smc_rnics_s390")" ]
	[ "${lines[-2]}" = " n/a  n/a    n/a           n/a    soft-roce        n/a   n/a  0     NET7*              lo" ]
	[ "${lines[-1]}" = " n/a  n/a    ffff:00:00.0  n/a    soft-ism         n/a   n/a  n/a   n/a                n/a" ]
	run --separate-stderr smc_rnics -I
	[ "${lines[-2]}" = " n/a  n/a    n/a           n/a    soft-roce        n/a   n/a  1     NET7*              sr_test" ]
	run --separate-stderr smc_rnics -j
	[[ "$output" == *'{"fid":null,"power":null,"pci_id":null,"pchid":null,"type":"soft-roce","pft":null,"pft_name":null,"vf":null,"pport":0,"pnet_id":"NET7","pnet_user":true,"net_dev":"lo"}'* ]]
	# a FID names a PCI function: no soft device matches one
	run --separate-stderr smc_rnics 1
	[[ "$output" != *soft-* ]]
	softd_stop
}

@test "smc_rnics -D: the DIBS devices of class/dibs (ISM function, loopback)" {
	run --separate-stderr smc_rnics -D
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	assert_output_file smc_rnics_dibs_s390
	# -a, -I and -r change nothing here; the default listing has no DIBS rows
	run --separate-stderr smc_rnics --dibs -a -I -r
	assert_output_file smc_rnics_dibs_s390
	run --separate-stderr smc_rnics -D -j
	assert_output_file smc_rnics_dibs_s390_json
	run --separate-stderr smc_rnics -a
	[[ "$output" != *loopback* ]]
	# a FID: the DIBS device of that PCI function, none of another
	run --separate-stderr smc_rnics -D 0x1004
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[2]}" == "ism1004 "* ]]
	run --separate-stderr smc_rnics -D 11
	[ "$status" -eq 8 ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "smc_rnics -D: x86 has the loopback device only; none without class/dibs" {
	export SMC_RNICS_ARCH=x86_64 SMC_SYSFS_ROOT="$FIX/x86"
	run --separate-stderr smc_rnics -D
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[2]}" = "lo              loopback  n/a           n/a       0xffff  6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab" ]
	export SMC_SYSFS_ROOT="$FIX/s390-nodev"
	run --separate-stderr smc_rnics -D
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 2 ]
	run --separate-stderr smc_rnics -D -j
	[ "$output" = '{"rnics":[]}' ]
}

@test "smc_rnics: x86 FID filter matches nothing (exit 8)" {
	export SMC_RNICS_ARCH=x86_64 SMC_SYSFS_ROOT="$FIX/x86"
	run --separate-stderr smc_rnics 3
	[ "$status" -eq 8 ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "smc_rnics: x86 hot-plug through the PCI slot" {
	export SMC_RNICS_ARCH=x86_64
	copy_fixture x86
	run --separate-stderr smc_rnics -d 3
	[ "$status" -eq 0 ]
	[ "$(power 00000003)" = 0 ]
	run --separate-stderr smc_rnics -e 3
	[ "$status" -eq 0 ]
	[ "$(power 00000003)" = 1 ]
	run --separate-stderr smc_rnics -e 3
	[ "$status" -eq 6 ]
	[ "$stderr" = "Error: FID 3 is already enabled" ]
}

@test "smc_rnics: software PNET IDs from the PNET table (soft backend)" {
	softd_start --roce sr_test=lo
	smc_pnet -a NET2 -I ens1168
	smc_pnet -a NETZ -D 0004:00:00.0 -P 1
	smc_pnet -a NETR -I eth0
	run --separate-stderr smc_rnics
	[ "$status" -eq 0 ]
	assert_output_file smc_rnics_s390_softpnet
	SMC_RNICS_ARCH=x86_64 SMC_SYSFS_ROOT="$FIX/x86" run --separate-stderr smc_rnics
	[ "$status" -eq 0 ]
	assert_output_file smc_rnics_x86_softpnet
	softd_stop
}
