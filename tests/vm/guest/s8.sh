#!/bin/sh
# Scenario 8: the socket semantics of tests/progs/sockcheck between two VMs
# without kernel SMC, each end under smc_run with its own smc_softd and
# rxe: every case (or those of vmcases=A,B,... on the kernel command line)
# runs its server on this VM's address and its client on the other VM, one
# port per case, and each end must print "CASE ok" as on plain TCP.  A case
# whose connection negotiated SMC-R in time carries its bytes by RDMA WRITE
# (its ends print "connected by rdma" with SMC_DEBUG=1); each case runs a
# second time with its ends waiting for that first (SOCKCHECK_SETTLE: until
# smcss lists it as SMCR), and that run must be over RDMA unless its case
# keeps TCP by design; the INFO line counts the runs over RDMA.
SCEN=s8-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
export SOCKCHECK_TIMEOUT=90 SOCKCHECK_CONNECT_RETRY=120
BASE=5100

soft_rdma_host

# Known to fail over soft SMC-R, each with its reason (doc/soft-roce.md
# section 4): skipped with a line that says so, until fixed.
known() {
	case $1 in
	pidfd_getfd*) echo "an end on RDMA is its own process's: another process's copy is reset" ;;
	*) return 1 ;;
	esac
}

# Settled, still TCP by design (doc/soft-lifecycle.md sections 1.1, 1.3): over
# RDMA would be a fault.
tcp_by_design() {
	case $1 in
	io_uring) echo "an io_uring instance the library cannot watch, made before the connection" ;;
	zerocopy) echo "SO_ZEROCOPY on the socket before it connected" ;;
	*) return 1 ;;
	esac
}

# Over RDMA as it comes too, not settled: its server waits for it (over TCP would be a fault).
rdma_as_it_comes() {
	case $1 in
	fork_accept) echo "a fork at accept() leaves the new end to the child that uses it" ;;
	creds_late) echo "its server waits for RDMA before it changes its credentials" ;;
	creds_prctl) echo "its server waits for RDMA before it changes its credentials" ;;
	creds_child) echo "its client waits for RDMA before it forks" ;;
	*) return 1 ;;
	esac
}

cases=$(sed -n 's/.*vmcases=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
[ -n "$cases" ] || cases=$(sockcheck list)
# each case twice: as it comes, then settled on RDMA before its first byte
# (SOCKCHECK_SETTLE), its second name CASE+settled
n=0 rdma=0 over= t0=$(date +%s)
for c in $cases $(for c in $cases; do echo "$c+settled"; done); do
	port=$((BASE + n))
	n=$((n + 1))
	name=$c
	c=${c%+settled}
	if [ "$name" = "$c" ]; then unset SOCKCHECK_SETTLE; else export SOCKCHECK_SETTLE=15; fi
	if why=$(known "$name"); then
		echo "SKIP $SCEN/$name: known to fail: $why"
		continue
	fi
	if [ "$VMROLE" = server ]; then
		SOCKCHECK_BIND=${VMIP%/*} smc_run sockcheck server $port "$c" > /tmp/case.out 2> /tmp/case.err
	else
		smc_run sockcheck client "$VMPEER" $port "$c" > /tmp/case.out 2> /tmp/case.err
	fi
	echo "rc=$?" >> /tmp/case.out
	via=TCP
	grep -q 'connected by rdma' /tmp/case.err && rdma=$((rdma + 1)) && over="$over $name" && via=RDMA
	want=
	if [ "$name" != "$c" ]; then
		want=RDMA
		! why=$(tcp_by_design "$c") || want=TCP
	elif why=$(rdma_as_it_comes "$c"); then
		want=RDMA
	fi
	if [ -n "$want" ] && [ "$via" != "$want" ]; then
		echo "FAIL $SCEN/$name: its connection was on $via, not $want${why:+ ($why)}"
		grep -v "^libsmc-preload: .*\(pair\|negotiat\)" /tmp/case.err | tail -n 8 | sed 's/^/  ! /'
	elif [ "$name" = closed_then_gone+settled ] && [ "$VMROLE" = server ] && [ "$via" = RDMA ] &&
		! grep -q "failed (the peer said so)" /tmp/case.err; then
		# the client's process ended: its DELETE LINK ends the links at once (settled:
		# the client's end was on RDMA before its first byte, so it let go of it)
		echo "FAIL $SCEN/$name: the client's end did not end the server's links"
		grep -v "^libsmc-preload: .*\(pair\|negotiat\)" /tmp/case.err | tail -n 8 | sed 's/^/  ! /'
	elif grep -qx "$c ok" /tmp/case.out; then
		echo "PASS $SCEN/$name"
	else
		echo "FAIL $SCEN/$name"
		sed 's/^/  > /' /tmp/case.out
		grep -v "^libsmc-preload: .*\(pair\|negotiat\)" /tmp/case.err | tail -n 8 | sed 's/^/  ! /'
	fi
done
echo "INFO $SCEN/cases: $n cases in $(($(date +%s) - t0)) s, $rdma of them over RDMA:$over"
# the daemon takes in the programs' exits (a TCG guest may take a while)
wait_for 100 sh -c "! smcss -a | grep -q '^ACTIVE .*:5[12][0-9][0-9] '"
smcss -a > /tmp/ss-after.txt 2>&1
ok smcss-no-row-left sh -c "! grep -q '^ACTIVE .*:5[12][0-9][0-9] ' /tmp/ss-after.txt"
kill $SOFTD
wait $SOFTD
ok softd-stopped test ! -e "$SMC_SOFT_SOCKET"
