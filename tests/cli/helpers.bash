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
