#!/bin/sh
# Scenario 10: the keepalive of soft SMC-R's links (doc/soft-roce.md
# section 4).  Two VMs without kernel SMC, two networks, rxe0 and rxe1 in
# PNET NET1 on each, a daemon each.  socat under smc_run on both ends: the
# server writes 4 MiB and then nothing, the client only reads (a pure
# receiver; past the first bytes, which TCP carries until the writer cuts
# over, it reads from its RMB).  Once the client has them, the server's
# host takes its second interface down (the client hears of it with LLC
# DELETE LINK) and then the first, the connection's, without a word: no
# port event and no message reaches the client, whose link hears nothing.
# After 30 s of silence the link sends an LLC TEST LINK, which no one
# acknowledges: the link fails, as on the kernel's SMC-R.  Its port is
# up, so the client tries to rebuild it (doc/soft-roce.md section 5, "The
# only link"), and the peer's daemon, its host silent, never answers: the
# connection is reset: the reader, asleep in select(), wakes and its read
# fails with ECONNRESET (socat -d says so as a warning), while the TCP
# connection under it would have waited for ever.
SCEN=s10-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
PORT=5202
BYTES=4194304
GO=5302                 # the client's word to the server: go silent

soft_two_links_host

if [ "$VMROLE" = server ]; then
	( (head -c $BYTES /dev/zero; sleep 600) | smc_run socat -u STDIN TCP-LISTEN:$PORT,reuseaddr 2>/tmp/socat.err) &
	nc -l -p $GO > /tmp/go.word
	grepcheck told-to-go-silent go /tmp/go.word
	# the second link first: its DELETE LINK reaches the client over the first
	ip link set eth1 down
	sleep 5
	ip link set eth0 down
	# the client's links find out in about 35 s; this host stays up (silent) meanwhile
	sleep 90
else
	(smc_run socat -d -u TCP:$VMPEER:$PORT,retry=100,interval=0.2 STDOUT > /tmp/got.txt 2>/tmp/socat.err
		echo "rc=$?" > /tmp/socat.rc) &
	wait_for 600 sh -c "[ \$(wc -c < /tmp/got.txt) -eq $BYTES ]"
	ok bytes-came sh -c "[ \$(wc -c < /tmp/got.txt) -eq $BYTES ]"
	wait_for 300 sh -c "smcss -a | grep -q '^ACTIVE .*:$PORT .* SMCR'"
	smcss -a > /tmp/ss.txt 2>&1
	grepcheck conn-smcr "^ACTIVE .*:$PORT .* SMCR" /tmp/ss.txt
	# both links up before the peer goes
	wait_for 300 grep -q 'second link is up' /tmp/socat.err
	grepcheck second-link-up 'second link is up' /tmp/socat.err
	i=0; while ! echo go | nc "$VMPEER" $GO && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
	t0=$(date +%s)
	wait_for 1200 grep -q 'not rebuilt: no answer from the peer: 1 connections reset' /tmp/socat.err
	echo "INFO $SCEN/told: the last link failed after $(($(date +%s) - t0)) s"
	grepcheck second-link-deleted 'link 2 (rxe1) failed (the peer said so): 0 connections moved' /tmp/socat.err
	grepcheck keepalive-test 'link 1: nothing heard for 30 s: TEST LINK' /tmp/socat.err
	grepcheck silent-link-failed 'link 1 (rxe0) failed: rebuilt on new queue pairs, 1 connections wait' /tmp/socat.err
	grepcheck not-rebuilt 'link on rxe0 not rebuilt: no answer from the peer: 1 connections reset' /tmp/socat.err
	# the reset wakes the reader at once; a guest beside busy host CPUs may take its time
	wait_for 600 test -s /tmp/socat.rc || proc_calls socat
	grepcheck reader-reset 'W read(5, .*): Connection reset by peer' /tmp/socat.err
	grepcheck reader-ended 'rc=0' /tmp/socat.rc
	grep -q 'rc=0' /tmp/socat.rc 2>/dev/null || sed 's/^/  > /' /tmp/socat.rc
	grep -a -e 'soft SMC-R' -e ' E ' /tmp/socat.err | sed 's/^/  > /'
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
