#!/usr/bin/env bats
# smcss: options, messages and exit codes without a backend (smcss(8)
# OPTIONS and EXIT STATUS; backend errors as lib/nl.c words them).  The rows themselves are
# covered by the unit tests (tests/unit/test_smcss.c).

load helpers
bats_require_minimum_version 1.5.0

# Compare a value with what was expected, showing both on failure.
same() { # $1 = expected, $2 = actual
	diff -u <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# $stderr must be the message followed by the usage text.
assert_usage_error() { # $1 = message, $2 = program name (default smcss)
	local usage
	usage=$(sed "s/^Usage: smcss /Usage: ${2:-smcss} /" "$EXPECTED/smcss_usage")
	same "$1"$'\n'"$usage" "$stderr"
}

@test "smcss -v prints the version on stdout" {
	run --separate-stderr smcss -v
	[ "$status" -eq 0 ]
	same "smcss utility, smc-tools-1.8.5" "$output"
	[ -z "$stderr" ]
}

@test "smcss --version prints the version on stdout" {
	run --separate-stderr smcss --version
	[ "$status" -eq 0 ]
	same "smcss utility, smc-tools-1.8.5" "$output"
	[ -z "$stderr" ]
}

@test "smcss -h prints the usage on stdout" {
	run --separate-stderr smcss -h
	[ "$status" -eq 0 ]
	assert_output_file smcss_usage
	[ -z "$stderr" ]
}

@test "smcss --help prints the usage on stdout, before any backend is needed" {
	run --separate-stderr smcss -a --help
	[ "$status" -eq 0 ]
	assert_output_file smcss_usage
	[ -z "$stderr" ]
}

@test "smcss -D -R is refused" {
	run --separate-stderr smcss -D -R
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	assert_usage_error "--smcd together with --smcr is not supported"
}

@test "smcss -l -d is refused" {
	run --separate-stderr smcss -ld
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	assert_usage_error "--listening together with --debug is not supported"
}

@test "smcss -l -a is refused" {
	run --separate-stderr smcss --listening --all
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	assert_usage_error "--listening together with --all is not supported"
}

@test "smcss -l -R is refused" {
	run --separate-stderr smcss -l --smcr
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	assert_usage_error "--listening together with --smcr is not supported"
}

@test "smcss -l -D is refused" {
	run --separate-stderr smcss -lD
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	assert_usage_error "--listening together with --smcd is not supported"
}

@test "smcss: the combination checks run in upstream's order" {
	run --separate-stderr smcss -l -a -d -R -D
	[ "$status" -eq 1 ]
	assert_usage_error "--smcd together with --smcr is not supported"
	run --separate-stderr smcss -D -a -d -l
	[ "$status" -eq 1 ]
	assert_usage_error "--listening together with --debug is not supported"
	run --separate-stderr smcss -R -a -l
	[ "$status" -eq 1 ]
	assert_usage_error "--listening together with --all is not supported"
}

@test "smcss: positional arguments do not hide option errors" {
	run --separate-stderr smcss foo -D bar -R
	[ "$status" -eq 1 ]
	assert_usage_error "--smcd together with --smcr is not supported"
}

@test "smcss: unknown short option" {
	run --separate-stderr smcss -x
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	assert_usage_error "smcss: invalid option -- 'x'"
}

@test "smcss: unknown long option" {
	run --separate-stderr smcss --extended
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	assert_usage_error "smcss: unrecognized option '--extended'"
}

@test "smcss: the old -e and -V of earlier releases are unknown" {
	run --separate-stderr smcss -V
	[ "$status" -eq 1 ]
	assert_usage_error "smcss: invalid option -- 'V'"
	run --separate-stderr smcss -e
	[ "$status" -eq 1 ]
	assert_usage_error "smcss: invalid option -- 'e'"
}

@test "smcss without a backend: one line, no header, exit 1" {
	run --separate-stderr smcss
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	same "$(no_backend_msg smcss)" "$stderr"
}

@test "smcss without a backend: the same for every option set" {
	for opts in -a -l -d -R -D -W -j "-a -d -R -W" "-a -d -D -j" "--json --all" ignored; do
		run --separate-stderr smcss $opts
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		same "$(no_backend_msg smcss)" "$stderr"
	done
}

@test "smcss SMC_BACKEND=kernel on a kernel without SMC" {
	if kernel_has_smc; then
		skip "this kernel has AF_SMC"
	fi
	SMC_BACKEND=kernel run --separate-stderr smcss -a
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	same "smcss: SMC_BACKEND=kernel: the kernel has no SMC support (load it with 'modprobe smc')" "$stderr"
}

@test "smcss SMC_BACKEND=bogus" {
	SMC_BACKEND=bogus run --separate-stderr smcss
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	same "smcss: SMC_BACKEND: invalid value 'bogus' (use auto, kernel or soft)" "$stderr"
}

@test "smcss: option errors come before the backend is looked at" {
	SMC_BACKEND=bogus run --separate-stderr smcss -lR
	[ "$status" -eq 1 ]
	assert_usage_error "--listening together with --smcr is not supported"
}

@test "smcss names itself in messages by the basename of argv[0]" {
	ln -s "$SMC_BIN/smcss" "$BATS_TEST_TMPDIR/mysmcss"
	run --separate-stderr "$BATS_TEST_TMPDIR/mysmcss" -v
	[ "$status" -eq 0 ]
	same "smcss utility, smc-tools-1.8.5" "$output"
	run --separate-stderr "$BATS_TEST_TMPDIR/mysmcss" -D -R
	[ "$status" -eq 1 ]
	assert_usage_error "--smcd together with --smcr is not supported" mysmcss
	run --separate-stderr "$BATS_TEST_TMPDIR/mysmcss"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	same "$(no_backend_msg mysmcss)" "$stderr"
}
