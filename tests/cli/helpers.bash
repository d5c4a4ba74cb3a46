# Shared setup of the bats suites: load with `load helpers`.
bats_require_minimum_version 1.5.0
# The tools under test are the sanitizer build of `make check` ($SMC_BIN).
SMC_TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
: "${SMC_BIN:=$SMC_TOP/build/check}"
export SMC_BIN
export PATH="$SMC_BIN:$PATH"
EXPECTED="$BATS_TEST_DIRNAME/expected"

# No backend unless a suite starts one: auto mode finds no kernel SMC here and
# no soft backend on this private path.
export SMC_BACKEND=auto
export SMC_SOFT_SOCKET="${BATS_RUN_TMPDIR:-/tmp}/smc-no-backend.sock"

# The one-line error of a machine with neither backend, for a given tool.
no_backend_msg() {
	echo "$1: no SMC backend: the kernel has no SMC support (load it with 'modprobe smc') and no soft backend answers on $SMC_SOFT_SOCKET (start 'smc_softd')"
}

# True when this kernel offers AF_SMC.
kernel_has_smc() {
	python3 -c 'import socket,sys
try: socket.socket(43, socket.SOCK_STREAM, 0)
except OSError: sys.exit(1)'
}

# Compare $output with an expected file (tests/cli/expected/NAME); show a diff.
assert_output_file() {
	diff -u "$EXPECTED/$1" <(printf '%s\n' "$output")
}

# Start a private soft backend (smc_softd) for this test file or test; extra
# arguments go to the daemon.  Sets SMC_SOFT_SOCKET (SOFTD_SOCKET when set,
# e.g. a path other users can reach) and SMC_BACKEND=soft.
softd_start() {
	SOFTD_DIR=$(mktemp -d "${BATS_RUN_TMPDIR:-/tmp}/softd.XXXXXX")
	export SMC_SOFT_SOCKET="${SOFTD_SOCKET:-$SOFTD_DIR/control}"
	export SMC_BACKEND=soft
	"$SMC_BIN/smc_softd" -f -s "$SMC_SOFT_SOCKET" "$@" 2>"$SOFTD_DIR/log" 3>&- &
	SOFTD_PID=$!
	for _ in $(seq 200); do
		[ -S "$SMC_SOFT_SOCKET" ] && return 0
		kill -0 "$SOFTD_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "smc_softd did not start:" >&2
	cat "$SOFTD_DIR/log" >&2
	return 1
}

# Stop it; fails when the daemon did not exit cleanly (sanitizer reports,
# leaks) or left its socket behind.
softd_stop() {
	local rc=0
	[ -n "${SOFTD_PID:-}" ] || return 0
	kill -TERM "$SOFTD_PID" 2>/dev/null
	wait "$SOFTD_PID" || rc=$?
	SOFTD_PID=
	[ ! -e "$SMC_SOFT_SOCKET" ] || { echo "socket left behind" >&2; rc=1; }
	[ "$rc" -eq 0 ] || cat "$SOFTD_DIR/log" >&2
	return "$rc"
}
