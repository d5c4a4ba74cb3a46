#!/bin/sh
# Scenario 20: both links of a soft SMC-R link group flap at once
# (tests/progs/smcr_conns/smcr_conns.c, as s6).  Two VMs without kernel
# SMC, two networks with an rxe device on each, one link group of two
# links with four connections carrying data both ways; a quarter through,
# the client takes both interfaces down and, 2 s later, up again.  The
# link that fails first moves its connections to the other (or, at the
# server, where the client's offer of the other came first, they wait
# for its rebuild there); the other,
# the group's last, waits for its port and is rebuilt on new queue pairs
# (doc/soft-roce.md section 5, "The only link"), then the first is added
# again: nothing is reset, every byte arrives once.
SCEN=s20-$VMROLE
. /tests/lib.sh
PORT=5004
CONNS=4
export SMC_DEBUG=1
BYTES=16777216
OK_LINE="^smcr_conns: OK $VMROLE sent $BYTES and received $BYTES bytes on each of $CONNS connections, every byte checked"

rxe_two_networks
if [ -n "${VMKSYMS:-}" ] || grep -q vmksyms /proc/cmdline; then
	echo 0 > /proc/sys/kernel/kptr_restrict
	grep ' [tT] ' /proc/kallsyms | sed 's/^/KSYM /'
fi

if [ "$VMROLE" = server ]; then
	smcr_conns server $PORT rxe0 rxe1 $ME2 $CONNS $BYTES > /tmp/conns.out 2>&1
	echo "rc=$?" >> /tmp/conns.out
else
	smcr_conns client "$VMPEER" $PORT rxe0 rxe1 $ME2 $CONNS $BYTES > /tmp/conns.out 2>&1 &
	SPID=$!
	wait_quarter /tmp/conns.out
	stuck_watch 60 flap
	ip link set eth1 down
	ip link set eth0 down
	sleep 2
	ip link set eth0 up
	ip link set eth1 up
	rm -f /tmp/watch.flap
	echo "INFO $SCEN: both interfaces down for 2 s and up again"
	# the rest of its bytes, or where its threads are
	wait_for 1200 eval "! kill -0 $SPID" || { proc_calls smcr_conns; sed 's/^/  | /' /tmp/conns.out; }
	wait $SPID
	echo "rc=$?" >> /tmp/conns.out
	grepcheck last-link-waited 'failed.*: rebuilt on new queue pairs, 4 connections wait' /tmp/conns.out
fi
grepcheck group "^smcr_conns: $CONNS connections on 2 links$" /tmp/conns.out
# the first link's connections move to the other, or, where the client's
# offer of the other came first, wait for its rebuild there
grepcheck first-link-moved 'failed.*: 2 connections moved, 0 reset\|failed (the peer rebuilds link [0-9]*): 2 connections wait there' /tmp/conns.out
grepcheck rebuilt 'rebuilt (number [0-9]*): 4 connections go on' /tmp/conns.out
grepcheck other-link-back "the link group's failed link is up" /tmp/conns.out
grepcheck every-byte "$OK_LINE" /tmp/conns.out
grepcheck exit '^rc=0$' /tmp/conns.out
sed 's/^/  /' /tmp/conns.out
