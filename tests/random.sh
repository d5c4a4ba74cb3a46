#!/usr/bin/env bash
# tests/random.sh BIN [SOCKFUZZ-OPTION...]: the randomized socket test
# (tests/progs/sockfuzz.c) with both ends under BIN/smc_run, against a
# private smc_softd of BIN, as tests/cli/helpers.bash's softd_start starts
# one.  `make check-random SEED=N` and `make check-random-long` run it.
# SMC_DEBUG=1 in the environment reaches the preloaded ends.
set -u
bin=$(cd "${1:?usage: tests/random.sh BIN [SOCKFUZZ-OPTION...]}" && pwd) || exit 2
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/smc-random.XXXXXX") || exit 2
export SMC_SOFT_SOCKET="$dir/control" SMC_BACKEND=soft
unset LD_PRELOAD SMC_SNDBUF SMC_RCVBUF

"$bin/smc_softd" -f -s "$SMC_SOFT_SOCKET" 2>"$dir/softd.log" &
softd=$!
for _ in $(seq 200); do
	[ -S "$SMC_SOFT_SOCKET" ] && break
	kill -0 "$softd" 2>/dev/null || break
	sleep 0.05
done
if [ ! -S "$SMC_SOFT_SOCKET" ]; then
	echo "smc_softd did not start:" >&2
	cat "$dir/softd.log" >&2
	exit 2
fi

"$bin/tests/sockfuzz" "$@" "$bin/smc_run"
rc=$?

kill -TERM "$softd"
wait "$softd" || { echo "smc_softd exited with status $?" >&2; rc=1; }
if [ "$rc" -ne 0 ]; then
	echo "smc_softd log: $dir/softd.log" >&2
	tail -n 20 "$dir/softd.log" >&2
else
	rm -rf "$dir"
fi
exit "$rc"
