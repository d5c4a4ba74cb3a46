#!/bin/sh
# Scenario 4: two VMs (vmrole=server / client) without kernel SMC, each with
# rxe and its own smc_softd: an unmodified TCP echo program under smc_run
# on both.  The daemons ask each other on the control port, the libraries
# negotiate SMC-R through them (doc/soft-roce.md section 2.2) and the
# connection cuts over to RDMA: both daemons list it as SMCR, rxe carried
# the bytes (its packet counters), every byte arrives, no hang, no ring in
# either daemon and nothing left after; the guest's verbs see rxe0.  Then
# a small echo recorded on both hosts as smcdump-ex -m smcr would (dumprec):
# its CDC records each way, and data records that cover every byte after
# the cut-over once.  Last, a program that is not preloaded against one
# that is, each way: their echo over TCP, the preloaded end listed with
# 0x03010000 (the peer did not offer SMC); the server pins its buffers and
# its link's small message slots, no more.  Then a user's program (no
# CAP_IPC_LOCK: the locked-memory limit holds) with $MANY connections at
# once: one link group at each end, not one per connection, and each
# connection SMC-R, or TCP with ERR_REGBUF (its own or the peer's) where
# even the smallest buffers no longer fit the limit, or 0x03010000 where its turn came after the
# negotiation's 10 s in a slow guest (0x02010000: its first contact's
# CONFIRM LINK after 6 s); no other code.
SCEN=s4-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
PORT=5000
BYTES=134217728
# an IBM Z guest (TCG, three times slower) echoes a quarter of it: three of
# the project's CI runs lost the guests' network during the 128 MiB there
# (doc/kernels.md, "The IBM Z guests' network under a long echo")
[ "$VMSLOW" = 1 ] || BYTES=33554432
PORT2=5001
SMALL=65536
PORT3=5002      # the client not preloaded
PORT4=5003      # the server not preloaded
PORT5=5004      # a user's program with many connections
MANY=30

# smcss -a into /tmp/ss.txt once the connection's row (to port $1, else
# $PORT) is decided (not INIT), and the daemon's descriptors meanwhile into
# /tmp/fds.txt.
decided_row() {
	p=${1:-$PORT}
	i=0
	while [ $i -lt "$(slow 100)" ]; do
		smcss -a > /tmp/ss.txt 2>&1
		grep -q -e "^ACTIVE .*:$p .* TCP 0x" -e "^ACTIVE .*:$p .* SMCR" /tmp/ss.txt && break
		sleep 0.1; i=$((i + 1))
	done
	ls -l /proc/$SOFTD/fd > /tmp/fds.txt 2>&1
}

# What the library said of its link group (a failure, a rebuild, a relay's error), for the log.
link_events() {
	grep -h 'soft SMC-R:' "$1" | sed "s/^/INFO $SCEN\/link: /"
}

# The peer pinged every half second during the echo (/tmp/ping.txt: seconds
# since the start, ok or lost), and the longest run of lost pings, for the
# log: a link that failed in a network that stopped as well.
ping_watch() {
	t=$(date +%s)
	while :; do
		if ping -c 1 -W 1 "$VMPEER" > /dev/null 2>&1; then r=ok; else r=lost; fi
		echo "$(($(date +%s) - t)) $r"
		sleep 0.5
	done > /tmp/ping.txt
}
ping_gaps() {
	awk -v scen="$SCEN" '$2 == "lost" { if (!run) from = $1; run++; if (run > most) { most = run; at = from } }
		$2 == "ok" { run = 0 } { n++ }
		END { printf "INFO %s/ping: %d pings, longest loss %d in a row from %d s\n", scen, n, most, at }' /tmp/ping.txt
}

# net_check WHEN: the peer still answers pings after WHEN (the guests'
# network, under soft SMC-R); if not, what this guest's interface,
# neighbour table and rxe counters say, and the pings during the echo.
net_check() {
	i=0
	while ! ping -c 1 -W 1 "$VMPEER" > /dev/null 2>&1 && [ $i -lt "$(slow 10)" ]; do i=$((i + 1)); done
	if [ $i -lt "$(slow 10)" ]; then
		echo "PASS $SCEN/peer-answers-after-$1"
		return
	fi
	echo "FAIL $SCEN/peer-answers-after-$1: $(slow 10) pings unanswered"
	{
		[ ! -s /tmp/ping.txt ] || ping_gaps
		ip -s link show eth0
		ip neigh show
		rdma statistic show link rxe0/1
	} 2>&1 | sed 's/^/  > /'
}

# The $MANY connections' rows once all are decided (or the program ended),
# counted by mode and code, and the link groups: checks and INFO lines.
many_rows() {
	i=0
	while [ $i -lt "$(slow 600)" ]; do
		smcss -a > /tmp/ss5.txt 2>&1
		[ "$(grep -c -e "^ACTIVE .*:$PORT5 .* TCP 0x" -e "^ACTIVE .*:$PORT5 .* SMCR" /tmp/ss5.txt)" -ge $MANY ] && break
		grep -q -e 'EOF' -e 'MANY OK' -e 'tcpecho:' /tmp/echo5.out && break
		sleep 0.1; i=$((i + 1))
	done
	smcr linkgroup > /tmp/lg5.txt 2>&1
	smcr=$(grep -c "^ACTIVE .*:$PORT5 .* SMCR" /tmp/ss5.txt)
	# its own ERR_REGBUF, or the peer's
	regbuf=$(grep -c -e "^ACTIVE .*:$PORT5 .* TCP 0x09990003" -e "^ACTIVE .*:$PORT5 .* TCP 0x05000000/0x09990003" /tmp/ss5.txt)
	# its turn came after the negotiation's 10 s, or its first contact's
	# CONFIRM LINK after 6 s (TIMEOUT_CL), in a slow guest
	late=$(grep -c -e "^ACTIVE .*:$PORT5 .* TCP 0x03010000" -e "^ACTIVE .*:$PORT5 .* TCP 0x02010000" /tmp/ss5.txt)
	groups=$(grep -c '^[0-9a-f]\{8\} ' /tmp/lg5.txt)
	echo "INFO $SCEN/many: $smcr SMCR, $regbuf ERR_REGBUF, $late late (0x03010000, 0x02010000) of $MANY; $groups link group(s)"
	ok many-smcr-or-regbuf test $((smcr + regbuf + late)) = $MANY
	[ $((smcr + regbuf + late)) = $MANY ] || sed 's/^/  > /' /tmp/ss5.txt
	# some 21 fit the user's 8 MiB at full size: more, as the buffers shrink;
	# in an IBM Z guest late ones may leave fewer, none refused for memory
	if [ "$VMSLOW" = 1 ]; then
		ok many-more-than-full-size test "$smcr" -ge 23
	else
		ok many-more-than-full-size test "$smcr" -ge 23 -o "$regbuf" = 0
	fi
	ok many-one-link-group test "$groups" = 1
	[ "$groups" = 1 ] || sed 's/^/  > /' /tmp/lg5.txt
}

soft_rdma_host
ibv_devinfo -d rxe0 > /tmp/verbs.txt 2>&1
grepcheck verbs-port-active 'state:.*PORT_ACTIVE' /tmp/verbs.txt

if [ "$VMROLE" = server ]; then
	smc_run tcpecho server $PORT > /tmp/echo.out 2>&1 &
	EPID=$!
	i=0; while ! grep -q ACCEPTED /tmp/echo.out && [ $i -lt "$(slow 300)" ]; do sleep 0.1; i=$((i + 1)); done
	ok echo-accepted grep -q ACCEPTED /tmp/echo.out
	decided_row
	grepcheck smcss-server-smcr "^ACTIVE .*:$PORT .* SMCR" /tmp/ss.txt
	# what the kernel pins for it (RLIMIT_MEMLOCK counts it for a user): the
	# connection's RMB (128 KiB) and send buffer (256 KiB), and the link's
	# message slots, some 40 KiB (about 520 KiB until 2026-12-06)
	pin=$(sed -n 's/^VmPin:[[:space:]]*\([0-9]*\) kB$/\1/p' /proc/$EPID/status)
	echo "INFO $SCEN/server-pinned: ${pin:-no VmPin} kB"
	ok server-pins-buffers-and-little-more test "${pin:-999999}" -le 512
	i=0; while ! grep -q 'SERVER EOF' /tmp/echo.out && [ $i -lt "$(slow 1200)" ]; do sleep 0.1; i=$((i + 1)); done
	grepcheck echo-server-eof 'SERVER EOF' /tmp/echo.out
	grepcheck server-connected-by-rdma 'connected by rdma' /tmp/echo.out
	link_events /tmp/echo.out
	net_check echo
	rec_start
	smc_run tcpecho server $PORT2 > /tmp/echo2.out 2>&1 &
	i=0; while ! grep -q 'SERVER EOF' /tmp/echo2.out && [ $i -lt "$(slow 900)" ]; do sleep 0.1; i=$((i + 1)); done
	grepcheck small-echo-server-eof 'SERVER EOF' /tmp/echo2.out
	rec_stop
	rec_data $SMALL
	cp /tmp/fds.txt /tmp/fds-echo.txt
	# a client that is not preloaded
	smc_run tcpecho server $PORT3 > /tmp/echo3.out 2>&1 &
	i=0; while ! grep -q ACCEPTED /tmp/echo3.out && [ $i -lt "$(slow 600)" ]; do sleep 0.1; i=$((i + 1)); done
	decided_row $PORT3
	grepcheck plain-client-server-lists-0x03010000 "^ACTIVE .*:$PORT3 .* TCP 0x03010000" /tmp/ss.txt
	i=0; while ! grep -q 'SERVER EOF' /tmp/echo3.out && [ $i -lt "$(slow 900)" ]; do sleep 0.1; i=$((i + 1)); done
	grepcheck plain-client-echo-server-eof 'SERVER EOF' /tmp/echo3.out
	# a server that is not preloaded
	tcpecho server $PORT4 > /tmp/echo4.out 2>&1 &
	i=0; while ! grep -q 'SERVER EOF' /tmp/echo4.out && [ $i -lt "$(slow 900)" ]; do sleep 0.1; i=$((i + 1)); done
	grepcheck plain-server-echo-server-eof 'SERVER EOF' /tmp/echo4.out
	smcss -a > /tmp/ss.txt 2>&1
	ok plain-server-not-listed sh -c "! grep -q ':$PORT4 ' /tmp/ss.txt"
	# a user's program with many connections
	asuser 65534 smc_run tcpecho server-many $PORT5 $MANY > /tmp/echo5.out 2>&1 &
	i=0; while ! grep -q ACCEPTED /tmp/echo5.out && [ $i -lt "$(slow 900)" ]; do sleep 0.1; i=$((i + 1)); done
	many_rows
	i=0; while ! grep -q 'SERVER EOF' /tmp/echo5.out && [ $i -lt "$(slow 900)" ]; do sleep 0.1; i=$((i + 1)); done
	grepcheck many-server-eof "SERVER EOF $MANY" /tmp/echo5.out
	link_events /tmp/echo5.out
	cp /tmp/fds-echo.txt /tmp/fds.txt
else
	# a first echo, then 3 s asleep (the libraries negotiate meanwhile), then the rest
	t0=$(date +%s)
	ping_watch &
	PW=$!
	echo_client $PORT 12 $BYTES 3
	echo "INFO $SCEN/echo: $BYTES bytes each way in $(($(date +%s) - t0 - 3)) s after the pause"
	kill $PW 2>/dev/null
	ping_gaps
	net_check echo
	# not done: what the client said (its library's debug lines among them)
	grep -q ECHO /tmp/echo.out || sed 's/^/  echo> /' /tmp/echo.out | tail -n 20
	decided_row
	grepcheck smcss-client-smcr "^ACTIVE .*:$PORT .* SMCR" /tmp/ss.txt
	j=0; while ! grep -q 'ECHO' /tmp/echo.out && [ $j -lt "$(slow 1200)" ]; do sleep 0.1; j=$((j + 1)); done
	grepcheck echo-data "ECHO OK $BYTES" /tmp/echo.out
	grepcheck client-connected-by-rdma 'connected by rdma' /tmp/echo.out
	link_events /tmp/echo.out
	rdma statistic show link rxe0/1 > /tmp/rxe.txt 2>&1
	sent=$(sed -n 's/.* sent_pkts \([0-9]*\).*/\1/p' /tmp/rxe.txt)
	# rxe carried the bytes: at least a packet per MTU's worth (rxe's MTU: 1024
	# on Ethernet's 1500, 4096 on jumbo frames)
	pkt=1024
	[ "$(cat /sys/class/net/eth0/mtu)" -lt 4200 ] || pkt=4096
	if [ "${sent:-0}" -ge $((BYTES / pkt)) ]; then
		echo "PASS $SCEN/rxe-carried-the-bytes"
	else
		echo "FAIL $SCEN/rxe-carried-the-bytes: ${sent:-no} packets sent"; sed 's/^/  > /' /tmp/rxe.txt
	fi
	wait $EPID
	ok echo-client-exit test $? = 0
	# the small echo: 4096 bytes by TCP, 3 s asleep, the rest after the cut-over
	rec_start
	echo_client $PORT2 1 $SMALL 3
	grepcheck small-echo-data "ECHO OK $SMALL" /tmp/echo.out
	grepcheck small-echo-by-rdma 'connected by rdma' /tmp/echo.out
	wait $EPID
	rec_stop
	rec_data $SMALL
	cp /tmp/fds.txt /tmp/fds-echo.txt
	# not preloaded against a preloaded server, held 8 s for its daemon's decision
	ECHO_RUN= echo_client $PORT3 8 $SMALL
	grepcheck plain-client-echo-data "ECHO OK $SMALL" /tmp/echo.out
	smcss -a > /tmp/ss.txt 2>&1
	ok plain-client-not-listed sh -c "! grep -q ':$PORT3 ' /tmp/ss.txt"
	wait $EPID
	# preloaded against a server that is not
	echo_client $PORT4 8 $SMALL
	decided_row $PORT4
	grepcheck plain-server-client-lists-0x03010000 "^ACTIVE .*:$PORT4 .* TCP 0x03010000" /tmp/ss.txt
	grepcheck plain-server-echo-data "ECHO OK $SMALL" /tmp/echo.out
	wait $EPID
	# a user's program with many connections, held 20 s between two echoes on each
	i=0
	while [ $i -lt "$(slow 30)" ]; do
		rm -f /tmp/echo5.out
		asuser 65534 smc_run tcpecho client-many "$VMPEER" $PORT5 $MANY 20 > /tmp/echo5.out 2>&1 &
		EPID=$!
		while ! grep -qs -e CONNECTED -e tcpecho: /tmp/echo5.out && kill -0 $EPID 2>/dev/null; do sleep 0.1; done
		grep -qs CONNECTED /tmp/echo5.out && break
		wait $EPID; sleep 1; i=$((i + 1))
	done
	many_rows
	wait $EPID
	ok many-client-exit test $? = 0
	grepcheck many-echo-data "MANY OK $MANY" /tmp/echo5.out
	link_events /tmp/echo5.out
	cp /tmp/fds-echo.txt /tmp/fds.txt
fi
grepcheck control-port 'control port 7609/udp' /tmp/softd.log
# the peer is on another host: no ring for it, even while it lives
ok no-ring-for-a-remote-peer sh -c "! grep -q 'memfd:smc-dmb' /tmp/fds.txt"
# the daemon takes in the programs' exits (a TCG guest may take a while)
wait_for 100 sh -c "! smcss -a | grep -q '^ACTIVE .*:$PORT '"
wait_for 100 sh -c "! ls -l /proc/$SOFTD/fd | grep -q 'memfd:smc-dmb'"
smcss -a > /tmp/ss-after.txt 2>&1
ok smcss-no-row-left sh -c "! grep -q '^ACTIVE .*:$PORT ' /tmp/ss-after.txt"
ok no-ring-left sh -c "! ls -l /proc/$SOFTD/fd | grep -q 'memfd:smc-dmb'"
kill $SOFTD
wait $SOFTD
ok softd-stopped test ! -e "$SMC_SOFT_SOCKET"
