#!/bin/sh
# Scenario 19: an interface flap under a link group's only link
# (doc/soft-roce.md section 5, "The only link").  Two VMs without kernel
# SMC, one network, rxe0 in PNET NET1 on each, a daemon each.  socat under
# smc_run sends MIB MiB of random bytes to socat under smc_run over SMC-R.
# Midway the client's eth0 goes down for FLAP seconds and comes back: its
# rxe port goes down with it, so its library fails the link and, instead of
# resetting the connection, waits for the port; the server's link fails
# too (its writes are never acknowledged) and offers a new queue pair
# through the daemons.  Once the port is back both ends connect new queue
# pairs, the server confirms the new link (number 2), and the connection
# goes on from its last delivered CDC, every byte once (sha256 at both
# ends), as a TCP connection outlives a cable pulled for a moment.
SCEN=s19-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
MIB=96
FLAP=2
PORT=5211
SUMS=5311               # the server's sum to the client (plain TCP, busybox nc)

soft_rdma_host
ok socat-there command -v socat

if [ "$VMROLE" = server ]; then
	(smc_run socat -u TCP-LISTEN:$PORT,reuseaddr STDOUT 2>/tmp/socat.err | sha256sum > /tmp/got.sum) &
	wait_for 6000 test -s /tmp/got.sum
	cut -d' ' -f1 /tmp/got.sum > /tmp/sum
	i=0; while ! nc "$VMPEER" $SUMS < /tmp/sum && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	grepcheck rebuilt-server 'soft SMC-R: link on rxe0 rebuilt (number 2): 1 connections go on' /tmp/socat.err
	ok socat-no-error sh -c "! grep -q ' socat\[[0-9]*\] E ' /tmp/socat.err"
	grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat.err | sed 's/^/  | /'
else
	nc -l -p $SUMS > /tmp/peer.sum &
	NCPID=$!
	rm -f /tmp/fifo
	mkfifo /tmp/fifo
	sha256sum < /tmp/fifo > /tmp/sent.sum &
	(dd if=/dev/urandom bs=1048576 count=$MIB 2>/dev/null | tee /tmp/fifo |
		smc_run socat -u STDIN TCP:$VMPEER:$PORT,retry=100,interval=0.2 2>/tmp/socat.err
		echo "rc=$?" > /tmp/sent.rc) &
	t0=$(date +%s)
	wait_for 600 sh -c "smcss -a | grep -q '^ACTIVE .*:$PORT .* SMCR'"
	smcss -a > /tmp/ss.txt 2>&1
	grepcheck conn-smcr "^ACTIVE .*:$PORT .* SMCR" /tmp/ss.txt
	# a few MiB over RDMA first
	i=0; n=$(sent_pkts rxe0)
	while [ "${n:-0}" -lt 4000 ] && [ $i -lt "$(slow 600)" ]; do sleep 0.1; i=$((i + 1)); n=$(sent_pkts rxe0); done
	ip link set eth0 down
	echo "INFO $SCEN/down: after $(($(date +%s) - t0)) s"
	sleep $FLAP
	ip link set eth0 up
	echo "INFO $SCEN/up: after $(($(date +%s) - t0)) s"
	wait_for 600 grep -q 'link on rxe0 rebuilt\|not rebuilt' /tmp/socat.err
	grepcheck link-waits 'link 1 (rxe0) failed (its port is down): rebuilt on new queue pairs, 1 connections wait' /tmp/socat.err
	grepcheck rebuilt-client 'soft SMC-R: link on rxe0 rebuilt (number 2): 1 connections go on' /tmp/socat.err
	wait_for 1800 test -s /tmp/sent.rc
	echo "INFO $SCEN/transfer: $MIB MiB in $(($(date +%s) - t0)) s"
	grepcheck socat-exit '^rc=0$' /tmp/sent.rc
	wait_for 600 test -s /tmp/peer.sum
	wait $NCPID
	ok bytes-intact grep -qx "$(cut -d' ' -f1 /tmp/sent.sum)" /tmp/peer.sum
	ok socat-no-error sh -c "! grep -q ' socat\[[0-9]*\] E ' /tmp/socat.err"
	grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat.err | sed 's/^/  | /'
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
