#!/bin/sh
# Scenario 5: two VMs without kernel SMC joined by two networks (eth0,
# eth1), rxe on each: soft SMC-R's building blocks between the hosts
# (tests/progs/smcr/smcr_stream.c).  The SMC-R CLC Proposal, Accept and
# Confirm go over a TCP connection on eth0, the server confirms the first
# link (rxe0) with LLC CONFIRM LINK, adds the second (rxe1) with LLC ADD
# LINK and confirms it, then the client RDMA-writes 200 MiB over the second
# link into the server's 256 KiB RMB with CDC cursor messages
# (wire/smcr_conn.h), both through libibverbs opened at run time as the
# preload opens it.  A quarter through, the client's eth1 goes down: both
# ends fail over to the first link and the server still checks every byte.
SCEN=s5-$VMROLE
. /tests/lib.sh
PORT=5001
BYTES=209715200

grepcheck() {
	if grep -q -e "$2" "$3"; then echo "PASS $SCEN/$1"; else echo "FAIL $SCEN/$1: no line matching '$2'"; sed 's/^/  > /' "$3"; fi
}

if [ "$VMROLE" = server ]; then ME2=10.0.1.1 PEER2=10.0.1.2; else ME2=10.0.1.2 PEER2=10.0.1.1; fi
ip addr add $ME2/24 dev eth1
ip link set eth1 up
ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
ok rdma-link-add-second rdma link add rxe1 type rxe netdev eth1
for p in "$VMPEER" $PEER2; do
	i=0; while ! ping -c 1 -W 1 "$p" >/dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); done
done
ok ping-peer ping -c 1 -W 2 "$VMPEER"
ok ping-peer-second ping -c 1 -W 2 $PEER2

if [ "$VMROLE" = server ]; then
	smcr_stream server $PORT rxe0 $BYTES rxe1 $ME2 > /tmp/stream.out 2>&1
	echo "rc=$?" >> /tmp/stream.out
	grepcheck stream-server "^smcr_stream: OK server received $BYTES bytes, every byte checked, .*, 1 failovers" /tmp/stream.out
	grepcheck stream-server-exit '^rc=0$' /tmp/stream.out
	sed 's/^/  /' /tmp/stream.out
else
	smcr_stream client "$VMPEER" $PORT rxe0 $BYTES rxe1 $ME2 > /tmp/stream.out 2>&1 &
	SPID=$!
	i=0; while ! grep -q 'a quarter sent' /tmp/stream.out && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	ok quarter-sent grep -q 'a quarter sent' /tmp/stream.out
	ip link set eth1 down
	wait $SPID
	echo "rc=$?" >> /tmp/stream.out
	grepcheck stream-client "^smcr_stream: OK client sent $BYTES bytes by RDMA WRITE .*, 1 failovers" /tmp/stream.out
	grepcheck failover-line 'link 2 failed (.*), on link 1 now' /tmp/stream.out
	grepcheck stream-client-exit '^rc=0$' /tmp/stream.out
	sed 's/^/  /' /tmp/stream.out
fi
