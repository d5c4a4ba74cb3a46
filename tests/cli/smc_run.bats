#!/usr/bin/env bats
# smc_run: options, messages, exit codes, environment handed to the command
# (smc_run(8), with its "Differences from smc-tools 1.8.5").

load helpers
bats_require_minimum_version 1.5.0

RUN="$SMC_BIN/smc_run"
LIB="$SMC_BIN/libsmc-preload.so"

# A fake sysctl first in PATH: the tests never change the real limits.  It
# logs its calls to $SYSCTL_LOG, reports $SYSCTL_VALUE for -n, and fails -w
# like sysctl of a non-root user when SYSCTL_FAIL is set.
setup() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat > "$BATS_TEST_TMPDIR/bin/sysctl" <<'EOF'
#!/bin/bash
echo "sysctl $*" >> "$SYSCTL_LOG"
case "$1" in
-n)	echo "$SYSCTL_VALUE" ;;
-w)	if [ -n "$SYSCTL_FAIL" ]; then
		echo "sysctl: permission denied on key \"${2%%=*}\"" >&2
		exit 1
	fi
	echo "${2%%=*} = ${2#*=}" ;;
esac
EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/sysctl"
	export PATH="$BATS_TEST_TMPDIR/bin:$PATH"
	export SYSCTL_LOG="$BATS_TEST_TMPDIR/sysctl.log" SYSCTL_VALUE=212992
	: > "$SYSCTL_LOG"
	unset SYSCTL_FAIL SMC_DEBUG SMC_SNDBUF SMC_RCVBUF LD_PRELOAD
}

# Compare a value with what was expected, showing both on failure.
same() { # $1 = expected, $2 = actual
	diff -u <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

@test "smc_run -v prints the version" {
	run --separate-stderr "$RUN" -v
	[ "$status" -eq 0 ]
	same "smc_run utility, smc-tools-1.8.5" "$output"
	[ -z "$stderr" ]
}

@test "smc_run -h prints the usage on stdout" {
	run --separate-stderr "$RUN" -h
	[ "$status" -eq 0 ]
	assert_output_file smc_run_usage
	[ -z "$stderr" ]
}

@test "smc_run -h wins over a command that follows" {
	run --separate-stderr "$RUN" -h false
	[ "$status" -eq 0 ]
	assert_output_file smc_run_usage
}

@test "smc_run: invalid option" {
	run --separate-stderr "$RUN" -x true
	[ "$status" -eq 1 ]
	same "smc_run: Error: Invalid option: -" "$output"
	same "$RUN: illegal option -- x" "$stderr"
}

@test "smc_run: option without its argument" {
	run --separate-stderr "$RUN" -r
	[ "$status" -eq 1 ]
	same "smc_run: Error: Invalid option: -" "$output"
	same "$RUN: option requires an argument -- r" "$stderr"
}

@test "smc_run: missing command" {
	run --separate-stderr "$RUN"
	[ "$status" -eq 1 ]
	same "smc_run: Error: Missing command parameter" "$output"
	[ -z "$stderr" ]
	run --separate-stderr "$RUN" -d
	[ "$status" -eq 1 ]
	same "smc_run: Error: Missing command parameter" "$output"
}

@test "smc_run: messages name the program as it was called" {
	ln -s "$RUN" "$BATS_TEST_TMPDIR/my_run"
	run --separate-stderr "$BATS_TEST_TMPDIR/my_run"
	[ "$status" -eq 1 ]
	same "my_run: Error: Missing command parameter" "$output"
	run --separate-stderr "$BATS_TEST_TMPDIR/my_run" -q true
	[ "$status" -eq 1 ]
	same "my_run: Error: Invalid option: -" "$output"
	same "$BATS_TEST_TMPDIR/my_run: illegal option -- q" "$stderr"
}

@test "smc_run -r/-t export the size in bytes" {
	run --separate-stderr "$RUN" -r 16k printenv SMC_RCVBUF
	[ "$status" -eq 0 ]
	same 16384 "$output"
	run --separate-stderr "$RUN" -t 2m printenv SMC_SNDBUF
	[ "$status" -eq 0 ]
	same 2097152 "$output"
	run --separate-stderr "$RUN" -r 100 printenv SMC_RCVBUF
	[ "$status" -eq 0 ]
	same 100 "$output"
	run --separate-stderr "$RUN" -r 3K -t 1M printenv SMC_RCVBUF SMC_SNDBUF
	[ "$status" -eq 0 ]
	same $'3072\n1048576' "$output"
	[ -z "$stderr" ]
}

@test "smc_run: sizes are decimal even with leading zeros" {
	run "$RUN" -t 010k printenv SMC_SNDBUF
	[ "$status" -eq 0 ]
	same 10240 "$output"
}

@test "smc_run: without -r/-t no buffer size is exported" {
	run "$RUN" env
	[ "$status" -eq 0 ]
	! grep -q '^SMC_SNDBUF=' <<<"$output"
	! grep -q '^SMC_RCVBUF=' <<<"$output"
}

@test "smc_run: invalid sizes are refused" {
	local size
	for size in '5|' '1g' 'abc' '' '-5' '16kk' 'k' '1 k' '2048m' '99999999999'; do
		run --separate-stderr "$RUN" -r "$size" echo ran
		[ "$status" -eq 1 ]
		same "Error: Invalid buffer size specified: '$size'" "$output"
		same "" "$stderr"
		run --separate-stderr "$RUN" -t "$size" echo ran
		[ "$status" -eq 1 ]
		same "Error: Invalid buffer size specified: '$size'" "$output"
		same "" "$stderr"
	done
	# nothing was touched
	[ ! -s "$SYSCTL_LOG" ]
}

@test "smc_run: the largest size the kernel takes is accepted" {
	run "$RUN" -t 2047m printenv SMC_SNDBUF
	[ "$status" -eq 0 ]
	same 2146435072 "$output"
}

@test "smc_run -r raises net.core.rmem_max when it is lower" {
	run --separate-stderr "$RUN" -r 1m true
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	same $'sysctl -n net.core.rmem_max\nsysctl -w net.core.rmem_max=1048576' "$(cat "$SYSCTL_LOG")"
}

@test "smc_run -t raises net.core.wmem_max when it is lower" {
	run --separate-stderr "$RUN" -t 300000 true
	[ "$status" -eq 0 ]
	same $'sysctl -n net.core.wmem_max\nsysctl -w net.core.wmem_max=300000' "$(cat "$SYSCTL_LOG")"
}

@test "smc_run: a limit that is high enough is left alone" {
	run "$RUN" -r 212992 -t 16k true
	[ "$status" -eq 0 ]
	same $'sysctl -n net.core.rmem_max\nsysctl -n net.core.wmem_max' "$(cat "$SYSCTL_LOG")"
}

@test "smc_run: a failing sysctl -w is reported on stderr and the command still runs" {
	export SYSCTL_FAIL=1
	run --separate-stderr "$RUN" -r 1m printenv SMC_RCVBUF
	[ "$status" -eq 0 ]
	same 1048576 "$output"
	same 'sysctl: permission denied on key "net.core.rmem_max"' "$stderr"
}

@test "smc_run: arguments reach the command unchanged" {
	cd "$BATS_TEST_TMPDIR"
	touch match-me
	run --separate-stderr "$RUN" printf '[%s]\n' 'two words' '*' '$HOME' '' \
		"it's" '"q"' ' lead' 'tab	x' '-d'
	[ "$status" -eq 0 ]
	same "$(printf '[%s]\n' 'two words' '*' '$HOME' '' "it's" '"q"' ' lead' 'tab	x' '-d')" "$output"
}

@test "smc_run: options stop at the first non-option" {
	run "$RUN" sh -c 'echo "SMC_DEBUG=$SMC_DEBUG $0"' -d
	[ "$status" -eq 0 ]
	same "SMC_DEBUG=0 -d" "$output"
	run "$RUN" -- printf '%s\n' -x
	[ "$status" -eq 0 ]
	same -x "$output"
}

@test "smc_run: exit status is the command's" {
	run "$RUN" sh -c 'exit 42'
	[ "$status" -eq 42 ]
	run "$RUN" false
	[ "$status" -eq 1 ]
	run "$RUN" true
	[ "$status" -eq 0 ]
}

@test "smc_run: a missing command fails like exec" {
	run -127 --separate-stderr "$RUN" smc-no-such-command-here
	[[ $stderr == *smc-no-such-command-here* ]]
}

@test "smc_run -d exports SMC_DEBUG=1" {
	run "$RUN" -d printenv SMC_DEBUG
	[ "$status" -eq 0 ]
	same 1 "$output"
	SMC_DEBUG=0 run "$RUN" -d printenv SMC_DEBUG
	same 1 "$output"
}

@test "smc_run: without -d, SMC_DEBUG=0 unless the caller set it" {
	run "$RUN" printenv SMC_DEBUG
	[ "$status" -eq 0 ]
	same 0 "$output"
	SMC_DEBUG=1 run "$RUN" printenv SMC_DEBUG
	same 1 "$output"
	SMC_DEBUG=yes run "$RUN" printenv SMC_DEBUG
	same yes "$output"
	# set but empty: kept as it is (the library reads it as "off")
	SMC_DEBUG= run "$RUN" sh -c 'echo "${SMC_DEBUG+set}[$SMC_DEBUG]"'
	same "set[]" "$output"
}

@test "smc_run: LD_PRELOAD is the build tree's library, no leading colon" {
	run "$RUN" printenv LD_PRELOAD
	[ "$status" -eq 0 ]
	same "$LIB" "$output"
	LD_PRELOAD= run "$RUN" printenv LD_PRELOAD
	same "$LIB" "$output"
}

@test "smc_run: the library path is absolute when called by a relative path" {
	cd "$SMC_BIN"
	run ./smc_run printenv LD_PRELOAD
	[ "$status" -eq 0 ]
	same "$LIB" "$output"
	cd "$SMC_BIN/tests"
	run ../smc_run printenv LD_PRELOAD
	same "$LIB" "$output"
}

@test "smc_run: an existing LD_PRELOAD stays in front" {
	local first="$SMC_BIN/tests/libfakesmc.so"
	LD_PRELOAD="$first" run "$RUN" printenv LD_PRELOAD
	[ "$status" -eq 0 ]
	same "$first:$LIB" "$output"
}

# The lookup order of an installed smc_run: LIBDIR, then the bare name.
@test "smc_run: outside the build tree the library comes from LIBDIR, else by name" {
	local dir="$BATS_TEST_TMPDIR"
	mkdir -p "$dir/bin2" "$dir/lib"
	sed -e 's|@VERSION@|1.8.5|g' -e "s|@LIBDIR@|$dir/lib|g" \
		"$SMC_TOP/smc_run.sh" > "$dir/bin2/smc_run"
	chmod +x "$dir/bin2/smc_run"
	# ld.so cannot find the bare name here and says so on stderr
	run --separate-stderr "$dir/bin2/smc_run" printenv LD_PRELOAD
	[ "$status" -eq 0 ]
	same libsmc-preload.so "$output"
	cp "$LIB" "$dir/lib/"
	run "$dir/bin2/smc_run" printenv LD_PRELOAD
	same "$dir/lib/libsmc-preload.so" "$output"
	run "$dir/bin2/smc_run" -v
	same "smc_run utility, smc-tools-1.8.5" "$output"
}

@test "smc_run: the generated script carries the release string" {
	! grep -q '@VERSION@\|@LIBDIR@' "$RUN"
	[ -x "$RUN" ]
}
