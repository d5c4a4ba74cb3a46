#!/bin/sh
# Scenario 7: the preload's soft SMC-R layer when every link of a group
# fails (tests/progs/smcr_conns/smcr_conns.c with "reset").  Two VMs
# without kernel SMC, two networks with an rxe device on each, one link
# group of two links with four connections carrying data both ways; a
# quarter through, the client takes both interfaces down.  Every
# connection must end with ECONNRESET at both ends (the client from its
# devices' port events, the server from its failed work or its watchdog),
# with every byte received before checked, and nothing may hang.
SCEN=s7-$VMROLE
. /tests/lib.sh
PORT=5003
CONNS=4
export SMC_DEBUG=1
BYTES=67108864

rxe_two_networks

if [ "$VMROLE" = server ]; then
	smcr_conns server $PORT rxe0 rxe1 $ME2 $CONNS $BYTES reset > /tmp/conns.out 2>&1
	echo "rc=$?" >> /tmp/conns.out
	grepcheck group "^smcr_conns: $CONNS connections on 2 links$" /tmp/conns.out
	grepcheck reset-server "^smcr_conns: OK server: every connection ended with ECONNRESET, .* every byte checked" /tmp/conns.out
	grepcheck reset-server-exit '^rc=0$' /tmp/conns.out
	sed 's/^/  /' /tmp/conns.out
else
	smcr_conns client "$VMPEER" $PORT rxe0 rxe1 $ME2 $CONNS $BYTES reset > /tmp/conns.out 2>&1 &
	SPID=$!
	wait_quarter /tmp/conns.out
	stuck_watch 60 interfaces-down
	ip link set eth1 down
	ip link set eth0 down
	rm -f /tmp/watch.interfaces-down
	echo "INFO $SCEN: both interfaces down"
	# its exit waits up to 50 s for each queue pair whose packets the downed
	# interfaces hold (doc/kernels.md); they stay down: up again, the
	# server's retries into our stopped queue pairs could freeze this
	# guest's kernel (doc/kernels.md, "a guest freezes")
	wait $SPID
	echo "rc=$?" >> /tmp/conns.out
	grepcheck reset-client "^smcr_conns: OK client: every connection ended with ECONNRESET, .* every byte checked, 2 links failed" /tmp/conns.out
	grepcheck reset-client-exit '^rc=0$' /tmp/conns.out
	sed 's/^/  /' /tmp/conns.out
fi
