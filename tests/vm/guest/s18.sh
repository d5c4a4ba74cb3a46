#!/bin/sh
# Scenario 18: a link group's only link rebuilt (doc/soft-roce.md section
# 5, "The only link").  Two VMs without kernel SMC, one network, rxe0 in
# PNET NET1 on each, a daemon each.  socat under smc_run sends MIB MiB of
# random bytes to socat under smc_run over SMC-R.  Midway the client's
# eth0 takes an MTU of 576: its RoCE packets of 1 KiB are dropped as too
# big (rxe sends them with DF), the small ones (acknowledgements, CDCs,
# the daemons' datagrams) still go, and both ports stay up, as when rxe
# parks a queue pair.  The client's link fails (its writes are never
# acknowledged) and, its port up, is rebuilt: its connection waits, its
# library hands its new queue pair's address to its daemon, the server's
# daemon carries it to the server's library, which fails its end of the
# link too and answers.  Once the client's library said the link failed,
# the MTU is back: the server confirms the new link (LLC CONFIRM LINK)
# and the connection goes on over it from its last delivered CDC, every
# byte once (sha256 at both ends).  (A blackhole route does not stop
# rxe's packets.)  s19.sh runs this with CUT=flap instead: the client's
# eth0 goes down for 2 s and comes back.
CUT=${CUT:-mtu}
SCEN=${SCEN:-s18-$VMROLE}
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
MIB=96
PORT=5210
SUMS=5310               # the server's sum to the client (plain TCP, busybox nc)

soft_rdma_host
ok socat-there command -v socat

if [ "$VMROLE" = server ]; then
	sum_receive $PORT $SUMS
	grepcheck rebuilt-server 'soft SMC-R: link on rxe0 rebuilt (number 2): 1 connections go on' /tmp/socat.err
	ok socat-no-error sh -c "! grep -q ' socat\[[0-9]*\] E ' /tmp/socat.err"
	grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat.err | sed 's/^/  | /'
else
	sum_send $PORT $SUMS $MIB
	t0=$(date +%s)
	wait_for 600 sh -c "smcss -a | grep -q '^ACTIVE .*:$PORT .* SMCR'"
	smcss -a > /tmp/ss.txt 2>&1
	grepcheck conn-smcr "^ACTIVE .*:$PORT .* SMCR" /tmp/ss.txt
	# a few MiB over RDMA first
	i=0; n=$(sent_pkts rxe0)
	while [ "${n:-0}" -lt 4000 ] && [ $i -lt "$(slow 600)" ]; do sleep 0.1; i=$((i + 1)); n=$(sent_pkts rxe0); done
	if [ $CUT = flap ]; then
		ip link set eth0 down
		echo "INFO $SCEN/down: after $(($(date +%s) - t0)) s"
		sleep 2
		ip link set eth0 up
		echo "INFO $SCEN/up: after $(($(date +%s) - t0)) s"
		# its port went down: the link waits for it (the log says so when
		# the port's event came before a flushed work request, not after)
		why='.*'
	else
		ip link set eth0 mtu 576
		echo "INFO $SCEN/mtu-576: after $(($(date +%s) - t0)) s"
		wait_for 600 grep -q 'failed: rebuilt on new queue pairs' /tmp/socat.err
		ip link set eth0 mtu "${VMMTU:-1500}"
		echo "INFO $SCEN/mtu-back: after $(($(date +%s) - t0)) s"
		why=
	fi
	grepcheck link-failed-kept "link 1 (rxe0) failed$why: rebuilt on new queue pairs, 1 connections wait" /tmp/socat.err
	wait_for 600 grep -q 'link on rxe0 rebuilt\|not rebuilt' /tmp/socat.err
	grepcheck rebuilt-client 'soft SMC-R: link on rxe0 rebuilt (number 2): 1 connections go on' /tmp/socat.err
	wait_for 1800 test -s /tmp/sent.rc
	echo "INFO $SCEN/transfer: $MIB MiB in $(($(date +%s) - t0)) s"
	sum_check
	ok socat-no-error sh -c "! grep -q ' socat\[[0-9]*\] E ' /tmp/socat.err"
	grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat.err | sed 's/^/  | /'
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
