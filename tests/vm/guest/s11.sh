#!/bin/sh
# Scenario 11: a soft SMC-R link whose device is deleted and added again
# (doc/soft-roce.md section 5).  Two VMs without kernel SMC, two networks,
# rxe0 and rxe1 in PNET NET1 on each, a daemon each.  socat under smc_run
# sends MIB MiB of random bytes to socat under smc_run over a link group of
# two links, the connection on rxe0's.  The client deletes rxe0 (rdma link
# delete): the link fails and the connection goes on over rxe1's.  It adds
# rxe0 again (rdma link add, the same interface and GID): the process
# opens the new device, registers its buffers there, and asks the server
# to add the link again (LLC REQ ADD LINK).  Then eth1 goes down: the
# connection moves back to the link on the new device, every byte once
# (sha256 at both ends).
SCEN=s11-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
MIB=400
PORT=5200
SUMS=5300               # the server's sum to the client (plain TCP, busybox nc)

soft_two_links_host

if [ "$VMROLE" = server ]; then
	sum_receive $PORT $SUMS
	ok socat-no-error sh -c "! grep -q ' socat\[[0-9]*\] E ' /tmp/socat.err"
	grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat.err | sed 's/^/  | /'
else
	sum_send $PORT $SUMS $MIB
	t0=$(date +%s)
	wait_for 600 sh -c "smcss -a | grep -q '^ACTIVE .*:$PORT .* SMCR'"
	wait_for 600 grep -q 'second link is up' /tmp/socat.err
	grepcheck second-link-up 'second link is up' /tmp/socat.err
	smcss -R > /tmp/ssr.txt 2>&1
	grepcheck conn-on-rxe0 ":$PORT .*SMCR.* rxe0 " /tmp/ssr.txt
	# the connection's device goes
	timeout 60 rdma link delete rxe0
	echo "rc=$?" > /tmp/delete.rc
	echo "INFO $SCEN/delete: rdma link delete rxe0 after $(($(date +%s) - t0)) s: $(cat /tmp/delete.rc)"
	grepcheck device-deleted '^rc=0$' /tmp/delete.rc
	wait_for 600 grep -q 'link 1 (rxe0) failed: 1 connections moved' /tmp/socat.err
	grepcheck moved-to-second 'link 1 (rxe0) failed: 1 connections moved, 0 reset' /tmp/socat.err
	# and comes back, on the same interface with the same GID
	ok device-added rdma link add rxe0 type rxe netdev eth0
	wait_for 600 grep -q 'its device rxe0 is back' /tmp/socat.err
	grepcheck device-back 'link 1: its device rxe0 is back' /tmp/socat.err
	wait_for 600 grep -q 'failed link is up' /tmp/socat.err
	grepcheck link-back 'failed link is up' /tmp/socat.err
	# the other link's interface goes: the connection moves to the new device's link
	ip link set eth1 down
	echo "INFO $SCEN/failover: eth1 down after $(($(date +%s) - t0)) s"
	wait_for 600 grep -q '(rxe1) failed: 1 connections moved' /tmp/socat.err
	grepcheck moved-back '(rxe1) failed: 1 connections moved, 0 reset' /tmp/socat.err
	# the rest of the transfer; a stall says where it stands
	i=0 last=0 same=0
	while [ ! -s /tmp/sent.rc ] && [ $i -lt 120 ]; do
		sleep 5; i=$((i + 1))
		now=$(sent_pkts rxe0)
		if [ "${now:-0}" = "$last" ]; then same=$((same + 1)); else same=0; fi
		last=${now:-0}
		if [ $same -eq 12 ]; then
			echo "INFO $SCEN/stalled: nothing sent on rxe0 for 60 s"
			sed 's/^/  | /' /tmp/socat.err | tail -n 20
			smcr -d linkgroup link-show 2>&1 | sed 's/^/  | /'
		fi
	done
	echo "INFO $SCEN/transfer: $MIB MiB in $(($(date +%s) - t0)) s"
	sum_check
	grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat.err | sed 's/^/  | /'
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
