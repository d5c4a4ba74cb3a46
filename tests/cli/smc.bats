#!/usr/bin/env bats
# smcd / smcr front end: global options, object dispatch, exit codes, and
# the input checks every object makes before it talks to a backend.

load helpers

@test "smcd/smcr -v print the version on stderr and exit 255" {
	for t in smcd smcr; do
		for v in -v -ver --version; do
			run --separate-stderr $t $v
			[ "$status" -eq 255 ]
			[ -z "$output" ]
			[ "$stderr" = "$t utility, smc-tools-1.8.5" ]
		done
	done
}

@test "smcd/smcr without object, help, -h print the usage and exit 0 (no backend needed)" {
	for t in smcd smcr; do
		for args in "" "help" "h" "-h" "--help" "-d" "-d help"; do
			run --separate-stderr $t $args
			[ "$status" -eq 0 ]
			[ -z "$output" ]
			[ "$stderr" = "$(cat "$EXPECTED/${t}_usage")" ]
		done
	done
}

@test "smcd usage text" {
	[ "$(cat "$EXPECTED/smcd_usage")" = "Usage: smcd  [ OPTIONS ] OBJECT {COMMAND | help}
where  OBJECT := {info | linkgroup | device | stats | ueid | seid | hslimit}
       OPTIONS := {-v[ersion] | -d[etails] | -a[bsolute] | -j[son]}" ]
	[ "$(cat "$EXPECTED/smcr_usage")" = "Usage: smcr  [ OPTIONS ] OBJECT {COMMAND | help}
where  OBJECT := {info | linkgroup | device | stats | ueid | hslimit}
       OPTIONS := {-v[ersion] | -d[etails] | -dd[etails] | -a[bsolute] | -j[son]}" ]
}

@test "smcd: unknown options" {
	run --separate-stderr smcd -x info
	[ "$status" -eq 255 ]
	[ "$stderr" = 'Error: Option "-x" is unknown, try "smcd help".' ]
	run --separate-stderr smcr --bogus
	[ "$status" -eq 255 ]
	[ "$stderr" = 'Error: Option "-bogus" is unknown, try "smcr help".' ]
	run --separate-stderr smcd -ddd info
	[ "$status" -eq 255 ]
	[ "$stderr" = 'Error: Option "-ddd" is unknown, try "smcd help".' ]
}

@test "smcd: unknown objects and seid on smcr" {
	run --separate-stderr smcd foo
	[ "$status" -eq 1 ]
	[ "$stderr" = 'Error: Object "foo" is unknown, try "smcd help".' ]
	run --separate-stderr smcd devices
	[ "$status" -eq 1 ]
	[ "$stderr" = 'Error: Object "devices" is unknown, try "smcd help".' ]
	run --separate-stderr smcd ''
	[ "$status" -eq 1 ]
	[ "$stderr" = 'Error: Object "" is unknown, try "smcd help".' ]
	run --separate-stderr smcr seid
	[ "$status" -eq 1 ]
	[ "$stderr" = 'Error: Object "seid" is valid for SMC-D only, try "smcr help".' ]
	run --separate-stderr smcr se
	[ "$status" -eq 1 ]
	[ "$stderr" = 'Error: Object "se" is valid for SMC-D only, try "smcr help".' ]
}

@test "smcd: objects by prefix reach the backend (none here: exit 1)" {
	for args in d dev device l link linkgroup i info s stats u ueid se seid hs hslimit "-j hslimit show" "-d info" "-ad stats" "-j device" "-- info" "-a -d linkgroup show"; do
		run --separate-stderr smcd $args
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "$stderr" = "$(no_backend_msg smcd)" ]
	done
	run --separate-stderr smcr -dd linkgroup link-show
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(no_backend_msg smcr)" ]
	run --separate-stderr smcr hslimit enable
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(no_backend_msg smcr)" ]
}

@test "smcd: object usage errors come before any backend access" {
	run --separate-stderr smcd info bogus
	[ "$status" -eq 255 ]
	[ "$stderr" = "Usage: smcd info [show]" ]
	run --separate-stderr smcr info show extra
	[ "$status" -eq 255 ]
	[ "$stderr" = "Usage: smcr info [show]" ]
	run --separate-stderr smcd stats bogus
	[ "$status" -eq 255 ]
	[ "$stderr" = "Usage: smcd stats [show | reset]" ]
	run --separate-stderr smcr linkgroup help
	[ "$status" -eq 255 ]
	[ "$stderr" = "Usage: smcr linkgroup [show | link-show] [all | LG-ID]
                                         [ibdev <dev>]
                                         [netdev <dev>]" ]
	run --separate-stderr smcd device show all x
	[ "$status" -eq 255 ]
	[ "$stderr" = "Usage: smcd device [show] [all]" ]
	run --separate-stderr smcd seid bogus
	[ "$status" -eq 255 ]
	[ "$stderr" = "Usage: smcd seid [show]
       smcd seid enable
       smcd seid disable" ]
	for t in smcd smcr; do
		for args in "help" "bogus" "show x" "enable now" "h"; do
			run --separate-stderr $t hslimit $args
			[ "$status" -eq 255 ]
			[ "$stderr" = "Usage: $t hslimit [show]
       $t hslimit enable
       $t hslimit disable" ]
		done
	done
}

@test "smcd/smcr ueid: usage and client-side EID validation" {
	ueid_usage="Usage: smcd ueid [show]
       smcd ueid add <eid>
       smcd ueid del <eid>
       smcd ueid flush"
	for args in "help" "add" "del" "flush x" "bogus" "show x"; do
		run --separate-stderr smcr ueid $args
		[ "$status" -eq 255 ]
		[ "$stderr" = "$ueid_usage" ]
	done
	run --separate-stderr smcd ueid add ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: Invalid User EID specified: EID is longer than 32 characters" ]
	run --separate-stderr smcd ueid add "   "
	[ "$stderr" = "Error: Invalid User EID specified: EID is empty" ]
	run --separate-stderr smcd ueid del .ABC
	[ "$stderr" = "Error: Invalid User EID specified: first character must be alphanumeric" ]
	run --separate-stderr smcd ueid add A..B
	[ "$stderr" = "Error: Invalid User EID specified: consecutive dots not allowed" ]
	run --separate-stderr smcr ueid add myeid
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: Invalid User EID specified: unsupported character: 'm'
       Supported characters are: A-Z, 0-9, '.' and '-'" ]
	run --separate-stderr smcr ueid add VALID.EID-1
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(no_backend_msg smcr)" ]
}

@test "smcd: called through another name it acts as smcd, as smcr through smcr" {
	ln -sf "$SMC_BIN/smcd" "$BATS_TEST_TMPDIR/smcr"
	run --separate-stderr "$BATS_TEST_TMPDIR/smcr" -v
	[ "$stderr" = "smcr utility, smc-tools-1.8.5" ]
}

@test "smcd: SMC_BACKEND=kernel on a kernel without SMC" {
	kernel_has_smc && skip "this kernel has SMC"
	SMC_BACKEND=kernel run --separate-stderr smcd info
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcd: SMC_BACKEND=kernel: the kernel has no SMC support (load it with 'modprobe smc')" ]
}
