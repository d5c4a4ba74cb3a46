#!/usr/bin/env bats
# smc_pnet: command line, validation before any netlink traffic, messages, exit codes.

load helpers

usage_err() { # stderr of an error: the message line, then the usage
	printf '%s\n' "$1"
	cat "$EXPECTED/smc_pnet_usage"
}

@test "smc_pnet -v prints the version" {
	run --separate-stderr smc_pnet -v
	[ "$status" -eq 0 ]
	[ "$output" = "smc_pnet utility, smc-tools-1.8.5" ]
	run --separate-stderr smc_pnet --version
	[ "$output" = "smc_pnet utility, smc-tools-1.8.5" ]
}

@test "smc_pnet -h prints the usage on stdout" {
	run --separate-stderr smc_pnet -h
	[ "$status" -eq 0 ]
	assert_output_file smc_pnet_usage
	[ -z "$stderr" ]
	run --separate-stderr smc_pnet --help
	assert_output_file smc_pnet_usage
}

@test "smc_pnet: unknown option" {
	run --separate-stderr smc_pnet -x
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "$(usage_err "smc_pnet: invalid option -- 'x'")" ]
}

@test "smc_pnet: a second command option prints the usage only" {
	run --separate-stderr smc_pnet -a -d NET1
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(cat "$EXPECTED/smc_pnet_usage")" ]
	run --separate-stderr smc_pnet -s -f
	[ "$status" -eq 1 ]
}

@test "smc_pnet: invalid ib ports" {
	for p in 3 0 '' 1x 0x3 -1; do
		run --separate-stderr smc_pnet -a NET1 -D mlx5_0 -P "$p"
		[ "$status" -eq 1 ]
		[ "$stderr" = "$(usage_err "smc_pnet invalid ib port:$p")" ]
	done
}

@test "smc_pnet: parameter errors in upstream order" {
	run --separate-stderr smc_pnet -a NET1 NET2 -I eth0
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_pnet too many parameters")" ]
	run --separate-stderr smc_pnet NET1
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_pnet: parameters without option")" ]
	run --separate-stderr smc_pnet -f NET1
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_pnet: -f takes no parameters")" ]
	run --separate-stderr smc_pnet -a NET1
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_pnet: interface or device missing")" ]
	run --separate-stderr smc_pnet -a -I eth0
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_pnet: pnetid missing")" ]
	run --separate-stderr smc_pnet -d
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_pnet: pnetid missing")" ]
}

@test "smc_pnet: PNET IDs are checked before anything is sent" {
	run --separate-stderr smc_pnet -a net-1 -I eth0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid PNET ID 'net-1': only letters A-Z, a-z and digits 0-9 are allowed" ]
	run --separate-stderr smc_pnet -a ABCDEFGHIJKLMNOPQ -I eth0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid PNET ID 'ABCDEFGHIJKLMNOPQ': longer than 16 characters" ]
	run --separate-stderr smc_pnet -d '  '
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid PNET ID '  ': empty" ]
	run --separate-stderr smc_pnet -s 'A B'
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid PNET ID 'A B': only letters A-Z, a-z and digits 0-9 are allowed" ]
}

@test "smc_pnet: interface and device names are checked" {
	run --separate-stderr smc_pnet -a NET1 -I abcdefghijklmnop
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid interface name 'abcdefghijklmnop': longer than 15 characters" ]
	run --separate-stderr smc_pnet --add NET1 --interface eth/0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid interface name 'eth/0': contains '/'" ]
	run --separate-stderr smc_pnet -a NET1 -D "$(printf 'd%.0s' {1..64})"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "smc_pnet: invalid device name 'ddd"*"': longer than 63 characters" ]]
}

@test "smc_pnet: valid requests without a backend give the one-line error" {
	for args in "" "-s" "-s net1" "-f" "-d NET1" "-a net1 -I eth0" "-a NET1 -D 0001:00:00.0 -P 2" "-j"; do
		run --separate-stderr smc_pnet $args
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "$stderr" = "$(no_backend_msg smc_pnet)" ]
	done
}

@test "smc_pnet: options ignored by show and delete are reported" {
	run --separate-stderr smc_pnet -s NET1 -I eth0 -D mlx5_0 -P 2
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: interface eth0 ignored
smc_pnet: device mlx5_0 ignored
smc_pnet: ibport 2 ignored
$(no_backend_msg smc_pnet)" ]
}

@test "smc_pnet: the program name in messages is the one it was called by" {
	ln -sf "$SMC_BIN/smc_pnet" "$BATS_TEST_TMPDIR/pnet"
	run --separate-stderr "$BATS_TEST_TMPDIR/pnet" NET1
	[ "$status" -eq 1 ]
	[ "${stderr%%$'\n'*}" = "pnet: parameters without option" ]
}

@test "smc_pnet: SMC_BACKEND=kernel on a kernel without SMC" {
	kernel_has_smc && skip "this kernel has SMC"
	SMC_BACKEND=kernel run --separate-stderr smc_pnet
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: SMC_BACKEND=kernel: the kernel has no SMC support (load it with 'modprobe smc')" ]
	SMC_BACKEND=soft run --separate-stderr smc_pnet
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: SMC_BACKEND=soft: no soft backend answers on $SMC_SOFT_SOCKET: No such file or directory (start 'smc_softd')" ]
}

@test "smc_pnet: names follow the kernel's rules, the reason names the fault" {
	# dev_valid_name(): no '/', ':' or white space (the kernel's, byte 0xa0 too)
	run --separate-stderr smc_pnet -a NET1 -I eth0:1
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid interface name 'eth0:1': contains ':'" ]
	run --separate-stderr smc_pnet -a NET1 -I 'eth 0'
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid interface name 'eth 0': contains white space" ]
	run --separate-stderr smc_pnet -a NET1 -I "voilà"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid interface name 'voilà': contains byte 0xa0, white space to the kernel" ]
	run --separate-stderr smc_pnet -a NET1 -I ..
	[ "$stderr" = "smc_pnet: invalid interface name '..': not an interface name" ]
	run --separate-stderr smc_pnet -a NET1 -I "éééééééé"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid interface name 'éééééééé': longer than 15 bytes" ]
	run --separate-stderr smc_pnet -a NET1 -D 'mlx5 0'
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid device name 'mlx5 0': contains white space" ]
	run --separate-stderr smc_pnet -a NET1 -D a/b
	[ "$stderr" = "smc_pnet: invalid device name 'a/b': contains '/'" ]
}

@test "smc_pnet: a non-ASCII name is valid and reaches the backend" {
	# without a backend: the names pass the checks, the request finds no one
	run --separate-stderr smc_pnet -a NET1 -I "été"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(no_backend_msg smc_pnet)" ]
	run --separate-stderr smc_pnet -a NET1 -D "réseau0"
	[ "$stderr" = "$(no_backend_msg smc_pnet)" ]
	[ "$(id -u)" -eq 0 ] || skip "needs CAP_NET_ADMIN for smc_pnet -a"
	softd_start
	# the kernel keeps entries of interfaces that do not exist (yet), so does the soft backend
	run --separate-stderr smc_pnet -a NET1 -I "été"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run --separate-stderr smc_pnet -s NET1
	[ "$status" -eq 0 ]
	[ "$output" = "NET1 été n/a 255" ]
	softd_stop
}

@test "smc_pnet: control bytes in a refused name are printed escaped" {
	run --separate-stderr smc_pnet -a NET1 -I $'a\x01/b'
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid interface name 'a\\x01/b': contains '/'" ]
	run --separate-stderr smc_pnet -a NET1 -D $'\e[2J/'
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid device name '\\x1b[2J/': contains '/'" ]
	run --separate-stderr smc_pnet -a $'N\x01' -I eth0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: invalid PNET ID 'N\\x01': only letters A-Z, a-z and digits 0-9 are allowed" ]
}
