#!/bin/sh
# make check-kernel: the kernel matrix (doc/kernels.md).  Each row is one of
# Debian's kernels with the scenarios of tests/vm/run.sh that apply to it:
#
#   6.12  bookworm-backports  s1 s2 s3 s15 s16  the tools, a real SMC-R connection,
#                             the soft backend, a link group of two links, a decline
#                             code newer than smc-tools 1.8.5
#   6.1   bookworm            s1 s13        the tools; SMC-Rv2 over rxe hangs (s13 asserts it)
#   6.17  trixie-backports    s1 s2 s15 s16  the newest kernel with SMC
#   newest trixie-backports   s14       no SMC at all: every tool says so
#
# Each check is printed as run.sh prints it, its name prefixed with the
# kernel ("PASS 6.1:s1/pnet-add"); the last line is "N passed, N failed"
# over all rows.  KERNELS="6.1 6.17" runs only those rows.
set -u
cd "$(dirname "$0")/../.." || exit 2
KERNELS=${KERNELS:-6.12 6.1 6.17 newest}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
pass=0 fail=0
for k in $KERNELS; do
	case $k in
	6.12) suite=bookworm-backports kver='' scen="s1 s2 s3 s15 s16" ;;
	6.1) suite=bookworm kver=6.1 scen="s1 s13" ;;
	6.17) suite=trixie-backports kver=6.17 scen="s1 s2 s15 s16" ;;
	newest) suite=trixie-backports kver='' scen="s14" ;;
	*) echo "FAIL matrix: no kernel row $k (6.12, 6.1, 6.17, newest)"; fail=$((fail + 1)); continue ;;
	esac
	start=$(date +%s)
	# shellcheck disable=SC2086 # the scenarios' words
	VM_SUITE=$suite VM_KVER=$kver tests/vm/run.sh $scen >"$out" 2>&1
	sed -n "s/^\(PASS\|FAIL\|SKIP\|INFO\) /\1 $k:/p; /^  [>|] /p" "$out"
	last=$(tail -n 1 "$out")
	case $last in
	*" passed, "*" failed") set -- $last ;;
	*) tail -n 20 "$out" | sed 's/^/  > /'; set -- 0 passed 1 failed ;;
	esac
	echo "INFO $k: $1 passed, $3 failed in $(($(date +%s) - start)) s ($suite${kver:+ $kver}: $scen)"
	pass=$((pass + $1)) fail=$((fail + $3))
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
