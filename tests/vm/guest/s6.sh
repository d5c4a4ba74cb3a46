#!/bin/sh
# Scenario 6: the preload's soft SMC-R layer (preload/smcr/) between two VMs
# without kernel SMC, joined by two networks with an rxe device on each
# (tests/progs/smcr_conns/smcr_conns.c).  One link group joins the two
# processes: the first connection's CLC exchange brings up its first link
# (LLC CONFIRM LINK), the server adds the second (LLC ADD LINK), and three
# more connections join the group, each on the link the server gives it in
# turn, with LLC CONFIRM RKEY for the other.  Every connection carries
# BYTES each way at once, one sender and one receiver thread each, asleep
# on the layer's futex words while its progress thread takes the
# completions.  A quarter through, the client's eth1 goes down: the
# connections on the second link go on over the first, every byte once.
# A second after that failover eth1 comes back, and the group adds the
# link again ("relink": both ends wait for it after the bytes, before
# they close): its ADD LINK and the answer name the four connections'
# rkeys (136 bytes), longer than a message slot (128), so their rest goes
# through the queue pairs' spill and long buffers (doc/soft-roce.md
# section 4).
# rxe's counters of the first link follow the output (retries there
# would mean the in-flight limit of doc/soft-roce.md section 4 failed).
SCEN=s6-$VMROLE
. /tests/lib.sh
PORT=5002
CONNS=4
export SMC_DEBUG=1
BYTES=16777216

rxe_two_networks

if [ "$VMROLE" = server ]; then
	smcr_conns server $PORT rxe0 rxe1 $ME2 $CONNS $BYTES relink > /tmp/conns.out 2>&1
	echo "rc=$?" >> /tmp/conns.out
	rdma statistic show link rxe0/1 >> /tmp/conns.out 2>&1
	grepcheck group "^smcr_conns: $CONNS connections on 2 links$" /tmp/conns.out
	grepcheck conns-server "^smcr_conns: OK server sent $BYTES and received $BYTES bytes on each of $CONNS connections, every byte checked, .*, 1 failovers" /tmp/conns.out
	grepcheck conns-server-exit '^rc=0$' /tmp/conns.out
	grepcheck link-added-again "^smcr_conns: 2 links up after the bytes$" /tmp/conns.out
	sed 's/^/  /' /tmp/conns.out
else
	smcr_conns client "$VMPEER" $PORT rxe0 rxe1 $ME2 $CONNS $BYTES relink > /tmp/conns.out 2>&1 &
	SPID=$!
	wait_quarter /tmp/conns.out
	ip link set eth1 down
	(wait_for 300 grep -q 'connections moved' /tmp/conns.out; sleep 1; ip link set eth1 up) &
	wait_downed $SPID /tmp/conns.out '^smcr_conns: OK' smcr_conns eth1
	echo "rc=$?" >> /tmp/conns.out
	rdma statistic show link rxe0/1 >> /tmp/conns.out 2>&1
	grepcheck conns-client "^smcr_conns: OK client sent $BYTES and received $BYTES bytes on each of $CONNS connections, every byte checked, .*, 1 failovers" /tmp/conns.out
	grepcheck conns-client-exit '^rc=0$' /tmp/conns.out
	grepcheck link-added-again "^smcr_conns: 2 links up after the bytes$" /tmp/conns.out
	sed 's/^/  /' /tmp/conns.out
fi
