#!/bin/sh
# Scenario 5: two VMs without kernel SMC, rxe on each: soft SMC-R's building
# blocks between the hosts (tests/progs/smcr/smcr_stream.c).  The SMC-R CLC
# Proposal, Accept and Confirm go over a TCP connection, the server confirms
# the new link with LLC CONFIRM LINK over the queue pair, then the client
# RDMA-writes 200 MiB into the server's 256 KiB RMB with CDC cursor messages
# and the server checks every byte, both through libibverbs opened at run
# time as the preload opens it.
SCEN=s5-$VMROLE
. /tests/lib.sh
PORT=5001
BYTES=209715200

grepcheck() {
	if grep -q -e "$2" "$3"; then echo "PASS $SCEN/$1"; else echo "FAIL $SCEN/$1: no line matching '$2'"; sed 's/^/  > /' "$3"; fi
}

ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); done
ok ping-peer ping -c 1 -W 2 "$VMPEER"

if [ "$VMROLE" = server ]; then
	smcr_stream server $PORT rxe0 $BYTES > /tmp/stream.out 2>&1
	echo "rc=$?" >> /tmp/stream.out
	grepcheck stream-server "^smcr_stream: OK server received $BYTES bytes, every byte checked" /tmp/stream.out
	grepcheck stream-server-exit '^rc=0$' /tmp/stream.out
	sed 's/^/  /' /tmp/stream.out
else
	smcr_stream client "$VMPEER" $PORT rxe0 $BYTES > /tmp/stream.out 2>&1
	echo "rc=$?" >> /tmp/stream.out
	grepcheck stream-client "^smcr_stream: OK client sent $BYTES bytes by RDMA WRITE" /tmp/stream.out
	grepcheck stream-client-exit '^rc=0$' /tmp/stream.out
	sed 's/^/  /' /tmp/stream.out
fi
