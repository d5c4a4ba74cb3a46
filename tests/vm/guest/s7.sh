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
BYTES=67108864

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
	smcr_conns server $PORT rxe0 rxe1 $ME2 $CONNS $BYTES reset > /tmp/conns.out 2>&1
	echo "rc=$?" >> /tmp/conns.out
	grepcheck group "^smcr_conns: $CONNS connections on 2 links$" /tmp/conns.out
	grepcheck reset-server "^smcr_conns: OK server: every connection ended with ECONNRESET, .* every byte checked" /tmp/conns.out
	grepcheck reset-server-exit '^rc=0$' /tmp/conns.out
	sed 's/^/  /' /tmp/conns.out
else
	smcr_conns client "$VMPEER" $PORT rxe0 rxe1 $ME2 $CONNS $BYTES reset > /tmp/conns.out 2>&1 &
	SPID=$!
	i=0; while ! grep -q 'a quarter sent' /tmp/conns.out && [ $i -lt 900 ]; do sleep 0.1; i=$((i + 1)); done
	ok quarter-sent grep -q 'a quarter sent' /tmp/conns.out
	ip link set eth1 down
	ip link set eth0 down
	wait $SPID
	echo "rc=$?" >> /tmp/conns.out
	grepcheck reset-client "^smcr_conns: OK client: every connection ended with ECONNRESET, .* every byte checked, 2 links failed" /tmp/conns.out
	grepcheck reset-client-exit '^rc=0$' /tmp/conns.out
	sed 's/^/  /' /tmp/conns.out
fi
