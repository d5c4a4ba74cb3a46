#!/bin/sh
# Scenario 9: soft SMC-R's link groups with two links for unmodified
# programs (doc/soft-roce.md section 5).  Two VMs without kernel SMC joined
# by two networks, an rxe device on each, both interfaces and both devices
# in PNET NET1, a daemon each.  socat under smc_run sends 2 x MIB MiB of random
# bytes to socat under smc_run; sha256 of what went in and what came out.
# The connection makes the link group (first contact) on rxe0, the daemons
# name the second port and the server adds the second link on rxe1 (LLC
# ADD LINK).  Then the client's eth0 goes down: the connection goes on over
# the second link, every byte once.  eth0 comes back: the client asks (LLC
# REQ ADD LINK) and the server adds the link again; eth1 goes down: the
# connection goes back to the first link.  Then a second connection, and the
# server's daemon is killed in the middle of it: the data path needs no
# daemon, its bytes arrive too.  Each host records the first connection's
# CLC and LLC messages (tests/vm/dumprec.c, as smcdump-ex -m smcr would).
SCEN=s9-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
MIB=200
SUMS=5300               # the server's sums to the client (plain TCP, busybox nc)
KILL=5301               # the client tells the server to kill its daemon
SEEN=5302               # the server tells the client it listed both links

soft_two_links_host
# the first connection's LLC messages, as smcdump-ex -m smcr records them
rec_start llc

# llc_checks: the records of the link group's life on this host
llc_checks() {
	rec_stop
	rec_llc llc-confirm-link-sent 1 0
	rec_llc llc-confirm-link-came 1 1
	rec_llc llc-add-link-sent 2 0
	rec_llc llc-add-link-came 2 1
	ok llc-delete-link sh -c "awk '\$1 == \"llc\" && \$6 == 4' /tmp/rec.txt | grep -q ."
	ok llc-from-this-host grep -q "^llc 0 ${VMIP%/*} " /tmp/rec.txt
	ok llc-group-listed sh -c "awk '\$1 == \"llc\" && \$8 != \"00000000\"' /tmp/rec.txt | grep -q ."
	ok llc-none-refused sh -c "! grep -q '^lost [0-9]* [0-9]* [1-9]' /tmp/rec.txt"
	for t in 1 2 3; do
		ok clc-$t-recorded grep -q "^clc $t " /tmp/rec.txt
	done
}

# smcss -R's row of the first connection on its first link (rxe0 port 1,
# link 1) at each end: the server 10.0.0.1, the client 10.0.0.2
GID=0000:0000:0000:0000:0000:ffff:0a00:000
SSR_SERVER="10.0.0.1:5200 .* SMCR SERV rxe0  *01  *01  *${GID}1  *${GID}2\$"
SSR_CLIENT=":5200 .* SMCR CLNT rxe0  *01  *01  *${GID}2  *${GID}1\$"

if [ "$VMROLE" = server ]; then
	for p in 5200 5201; do
		(smc_run socat -u TCP-LISTEN:$p,reuseaddr STDOUT 2>/tmp/socat$p.err | sha256sum > /tmp/got$p.sum) &
	done
	# the client's word: kill this host's daemon while the second connection runs
	(nc -l -p $KILL > /tmp/kill.word; kill -9 $SOFTD; echo killed >> /tmp/kill.word) &
	wait_for 600 sh -c 'smcss -a | grep -q "^ACTIVE .*:5200 .* SMCR"'
	smcss -a > /tmp/ss1.txt 2>&1
	grepcheck first-conn-smcr '^ACTIVE .*:5200 .* SMCR' /tmp/ss1.txt
	# the server's end as the kernel lists it: role, device, port, link, both GIDs
	smcss -R > /tmp/ssr.txt 2>&1
	grepcheck smcss-R-server-link "$SSR_SERVER" /tmp/ssr.txt
	wait_for 300 sh -c '[ $(smcr linkgroup link-show | grep -c LINK_ACTIVE) -eq 2 ]'
	smcr linkgroup link-show > /tmp/lg.txt 2>&1
	sed 's/^/  | /' /tmp/lg.txt
	ok linkgroup-two-links sh -c '[ $(grep -c "SERV .*SYM .*LINK_ACTIVE" /tmp/lg.txt) -eq 2 ]'
	# only now may the client take a link down
	i=0; while ! echo seen | nc "$VMPEER" $SEEN && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	# the first connection's process goes: its group with it (the second makes its own)
	lgid=$(sed -n 's/^\([0-9a-f]\{8\}\) SERV .*/\1/p' /tmp/lg.txt | head -n 1)
	wait_for 3000 test -s /tmp/got5200.sum
	llc_checks
	wait_for 50 sh -c "! smcr linkgroup | grep -q '^$lgid '"
	smcr linkgroup > /tmp/lg-after.txt 2>&1
	echo "rc=$?" >> /tmp/lg-after.txt
	ok first-linkgroup-gone sh -c "[ -n '$lgid' ] && ! grep -q '^$lgid ' /tmp/lg-after.txt && grep -qx rc=0 /tmp/lg-after.txt"
	wait_for 3000 test -s /tmp/got5201.sum
	grepcheck daemon-killed killed /tmp/kill.word
	# what came, to the client
	for p in 5200 5201; do
		printf '%s %s\n' "$p" "$(cut -d' ' -f1 /tmp/got$p.sum)"
	done > /tmp/sums
	sed 's/^/  sum /' /tmp/sums
	i=0; while ! nc "$VMPEER" $SUMS < /tmp/sums && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	grepcheck server-second-link 'second link is up' /tmp/socat5200.err
	for p in 5200 5201; do
		ok socat-$p-no-error sh -c "! grep -q ' socat\[[0-9]*\] E ' /tmp/socat$p.err"
		grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat$p.err | sed 's/^/  > /'
	done
else
	nc -l -p $SUMS > /tmp/peer.sums &
	NCPID=$!
	nc -l -p $SEEN > /tmp/seen.word &
	# send PORT: MIB MiB of random bytes to the server's PORT, their sum in /tmp/sentPORT.sum
	send() {
		mib=${2:-$MIB}
		rm -f /tmp/f$1
		mkfifo /tmp/f$1
		sha256sum < /tmp/f$1 > /tmp/sent$1.sum &
		# the listener may not be there yet: socat tries again
		(dd if=/dev/urandom bs=1048576 count=$mib 2>/dev/null | tee /tmp/f$1 |
			smc_run socat -u STDIN TCP:$VMPEER:$1,retry=100,interval=0.2 2>/tmp/socat$1.err
			echo "rc=$?" > /tmp/sent$1.rc) &
	}
	t0=$(date +%s)
	# long enough for a failover, the link's return and a failover back
	# (all three within 30 s; the rest takes minutes beside other work)
	send 5200 $((MIB * 2))
	wait_for 600 sh -c 'smcss -a | grep -q "^ACTIVE .*:5200 .* SMCR"'
	smcss -a > /tmp/ss1.txt 2>&1
	grepcheck first-conn-smcr '^ACTIVE .*:5200 .* SMCR' /tmp/ss1.txt
	# the group's second link comes up beside the connection's
	wait_for 300 grep -q 'second link is up' /tmp/socat5200.err
	grepcheck second-link-up 'second link is up' /tmp/socat5200.err
	# the listings show the group with both links, the connection on one
	wait_for 300 sh -c '[ $(smcr linkgroup link-show | grep -c LINK_ACTIVE) -eq 2 ]'
	smcr -d linkgroup > /tmp/lg.txt 2>&1; smcr -d linkgroup link-show >> /tmp/lg.txt 2>&1
	smcss -R > /tmp/ssr.txt 2>&1
	sed 's/^/  | /' /tmp/lg.txt /tmp/ssr.txt
	ok linkgroup-two-links sh -c '[ $(grep -c "CLNT .*SYM .*LINK_ACTIVE" /tmp/lg.txt) -eq 2 ]'
	grepcheck smcss-R-link "$SSR_CLIENT" /tmp/ssr.txt
	# the server listed both links too (it may look later than this host)
	wait_for 300 test -s /tmp/seen.word
	grepcheck server-saw-two-links seen /tmp/seen.word
	# the connection's own link goes: its interface down (TCP waits meanwhile)
	before=$(sent_pkts rxe1)
	echo "INFO $SCEN/packets: rxe0 $(sent_pkts rxe0), rxe1 ${before:-0} after $(($(date +%s) - t0)) s"
	ip link set eth0 down
	echo "INFO $SCEN/failover: eth0 down after $(($(date +%s) - t0)) s"
	wait_for 600 sh -c "[ \$(rdma statistic show link rxe1/1 | sed -n 's/.* sent_pkts \([0-9]*\).*/\1/p') -gt $((${before:-0} + 4096)) ]"
	echo "INFO $SCEN/packets: rxe0 $(sent_pkts rxe0), rxe1 $(sent_pkts rxe1) after $(($(date +%s) - t0)) s"
	ok second-link-took-over sh -c "[ $(sent_pkts rxe1) -gt $((${before:-0} + 4096)) ]"
	# one link left in the listings, the connection on it
	wait_for 300 sh -c '[ $(smcr linkgroup link-show | grep -c LINK_ACTIVE) -eq 1 ]'
	smcr linkgroup link-show > /tmp/lg1.txt 2>&1; smcss -R > /tmp/ssr1.txt 2>&1
	sed 's/^/  | /' /tmp/lg1.txt /tmp/ssr1.txt
	ok linkgroup-one-link sh -c '[ $(grep -c "CLNT .*SINGLE .*eth1 .*LINK_ACTIVE" /tmp/lg1.txt) -eq 1 ]'
	grepcheck smcss-R-moved ':5200 .*SMCR.* rxe1 ' /tmp/ssr1.txt
	# the interface comes back: the client asks, the server adds the link again
	ip link set eth0 up
	wait_for 300 grep -q 'failed link is up' /tmp/socat5200.err
	grepcheck first-link-back 'failed link is up' /tmp/socat5200.err
	# and the second link's interface goes: the connection moves back to the first
	before=$(sent_pkts rxe0)
	ip link set eth1 down
	echo "INFO $SCEN/failover: eth1 down after $(($(date +%s) - t0)) s"
	wait_for 3000 test -s /tmp/sent5200.rc
	echo "INFO $SCEN/packets: rxe0 $(sent_pkts rxe0), rxe1 $(sent_pkts rxe1) after $(($(date +%s) - t0)) s"
	llc_checks
	ok back-on-the-first-link sh -c "[ $(sent_pkts rxe0) -gt $((${before:-0} + 4096)) ]"
	# smcr stats counts the connection and its bytes as SMC-R's, none as SMC-D's
	smcr stats > /tmp/stats-r.txt 2>&1; smcd stats > /tmp/stats-d.txt 2>&1
	sed 's/^/  | /' /tmp/stats-r.txt
	ok smcr-stats-connection sh -c "awk '/^  SMC connections/ { print \$3 }' /tmp/stats-r.txt | grep -qx 1"
	# all but what went over TCP before the cut-over, which the kernel does not count either
	sent_r=$(awk '/^TX Stats/ { t = 1 } t && /Data transmitted/ { print $4; exit }' /tmp/stats-r.txt)
	ok smcr-stats-bytes sh -c "[ ${sent_r:-0} -le $((MIB * 2 * 1048576)) ] && [ ${sent_r:-0} -ge $((MIB * 2 * 1048576 / 10 * 9)) ]"
	ok smcd-stats-none sh -c "awk '/^  SMC connections/ { print \$3 }' /tmp/stats-d.txt | grep -qx 0"
	ip link set eth1 up
	i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); done
	# the second connection: the server's daemon goes in its middle
	send 5201
	wait_for 600 sh -c 'smcss -a | grep -q "^ACTIVE .*:5201 .* SMCR"'
	smcss -a > /tmp/ss2.txt 2>&1
	grepcheck second-conn-smcr '^ACTIVE .*:5201 .* SMCR' /tmp/ss2.txt
	sleep 2
	echo kill | nc "$VMPEER" $KILL
	wait_for 3000 test -s /tmp/sent5201.rc
	echo "INFO $SCEN/transfers: $((MIB * 3)) MiB in $(($(date +%s) - t0)) s"
	wait_for 600 test -s /tmp/peer.sums
	wait $NCPID
	sed 's/^/  peer sum /' /tmp/peer.sums
	for p in 5200 5201; do
		grepcheck socat-$p-exit '^rc=0$' /tmp/sent$p.rc
		grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat$p.err | sed 's/^/  > /'
		want=$(cut -d' ' -f1 /tmp/sent$p.sum)
		ok bytes-$p-intact grep -qx "$p $want" /tmp/peer.sums
	done
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
