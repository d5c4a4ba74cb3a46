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

rxe_two_networks

if [ "$VMROLE" = server ]; then
	smcr_stream server $PORT rxe0 $BYTES rxe1 $ME2 > /tmp/stream.out 2>&1
	echo "rc=$?" >> /tmp/stream.out
	grepcheck stream-server "^smcr_stream: OK server received $BYTES bytes, every byte checked, .*, 1 failovers" /tmp/stream.out
	grepcheck stream-server-exit '^rc=0$' /tmp/stream.out
	sed 's/^/  /' /tmp/stream.out
else
	smcr_stream client "$VMPEER" $PORT rxe0 $BYTES rxe1 $ME2 > /tmp/stream.out 2>&1 &
	SPID=$!
	wait_quarter /tmp/stream.out
	ip link set eth1 down
	wait_downed $SPID /tmp/stream.out '^smcr_stream: OK' smcr_stream eth1
	echo "rc=$?" >> /tmp/stream.out
	grepcheck stream-client "^smcr_stream: OK client sent $BYTES bytes by RDMA WRITE .*, 1 failovers" /tmp/stream.out
	grepcheck failover-line 'link 2 failed (.*), on link 1 now' /tmp/stream.out
	grepcheck stream-client-exit '^rc=0$' /tmp/stream.out
	sed 's/^/  /' /tmp/stream.out
fi
