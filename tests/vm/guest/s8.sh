#!/bin/sh
# Scenario 8: the socket semantics of tests/progs/sockcheck between two VMs
# without kernel SMC, each end under smc_run with its own smc_softd and
# rxe: every case (or those of vmcases=A,B,... on the kernel command line)
# runs its server on this VM's address and its client on the other VM, one
# port per case, and each end must print "CASE ok" as on plain TCP.  A case
# whose connection negotiated SMC-R in time carries its bytes by RDMA WRITE
# (its ends print "connected by rdma" with SMC_DEBUG=1); the INFO line
# counts them.
SCEN=s8-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
export SOCKCHECK_TIMEOUT=90 SOCKCHECK_CONNECT_RETRY=120
BASE=5100

smc_softd -f -s "$SMC_SOFT_SOCKET" > /tmp/softd.log 2>&1 &
SOFTD=$!
i=0; while [ ! -S "$SMC_SOFT_SOCKET" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ok softd-started test -S "$SMC_SOFT_SOCKET"
ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
ok pnet-add smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); done
ok ping-peer ping -c 1 -W 2 "$VMPEER"

cases=$(sed -n 's/.*vmcases=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
[ -n "$cases" ] || cases=$(sockcheck list)
n=0 rdma=0 t0=$(date +%s)
for c in $cases; do
	port=$((BASE + n))
	n=$((n + 1))
	if [ "$VMROLE" = server ]; then
		SOCKCHECK_BIND=${VMIP%/*} smc_run sockcheck server $port "$c" > /tmp/case.out 2> /tmp/case.err
	else
		smc_run sockcheck client "$VMPEER" $port "$c" > /tmp/case.out 2> /tmp/case.err
	fi
	echo "rc=$?" >> /tmp/case.out
	grep -q 'connected by rdma' /tmp/case.err && rdma=$((rdma + 1))
	if grep -qx "$c ok" /tmp/case.out; then
		echo "PASS $SCEN/$c"
	else
		echo "FAIL $SCEN/$c"
		sed 's/^/  > /' /tmp/case.out
		grep -v "^libsmc-preload: .*\(pair\|negotiat\)" /tmp/case.err | tail -n 8 | sed 's/^/  ! /'
	fi
done
echo "INFO $SCEN/cases: $n cases in $(($(date +%s) - t0)) s, $rdma of them over RDMA"
sleep 1
smcss -a > /tmp/ss-after.txt 2>&1
ok smcss-no-row-left sh -c "! grep -q '^ACTIVE .*:51[0-9][0-9] ' /tmp/ss-after.txt"
kill $SOFTD
wait $SOFTD
ok softd-stopped test ! -e "$SMC_SOFT_SOCKET"
