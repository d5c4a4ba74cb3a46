#!/bin/sh
# Scenario 22: a soft SMC-R peer killed (doc/soft-roce.md section 4).  Two
# VMs without kernel SMC, rxe0 in PNET NET1 on each, a daemon each.  socat
# under smc_run on both ends: the server writes 4 MiB and then nothing,
# the client only reads (its input is open, and silent), and stays after
# the end of the stream until its input ends.  Once the client has the bytes, the server's socat is killed
# (SIGKILL): its library says nothing.  Its kernel ends the TCP connection
# under the SMC-R one (a FIN: it had read all the client sent, nothing),
# so the client reads its 4 MiB and then EOF, with no reset.  Its link
# group's link would stay up until the links' keepalive, 30 s and more;
# but the server's daemon sees the killed process's control connection
# hang up and tells the client's daemon, whose library hears it at its
# next question and probes the group's link.  The probe is unanswered
# (the process's queue pairs went with it), and the link fails without a
# rebuild nobody would answer, while the client still runs; then the
# client's input ends, and so does it.
SCEN=s22-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
PORT=5222
BYTES=4194304
GO=5322                 # the client's words to the server: kill, then done

soft_rdma_host
ok socat-there command -v socat

# word WORD: WORD to the server's $GO, tried for a while
word() {
	i=0; while ! echo "$1" | nc "$VMPEER" $GO && [ $i -lt "$(slow 50)" ]; do sleep 0.2; i=$((i + 1)); done
}

if [ "$VMROLE" = server ]; then
	( (head -c $BYTES /dev/zero; sleep 600) | smc_run socat -u STDIN TCP-LISTEN:$PORT,reuseaddr 2>/tmp/socat.err) &
	nc -l -p $GO > /tmp/go.word
	grepcheck told-to-kill kill /tmp/go.word
	ok writer-killed kill -KILL "$(pidof socat)"
	# up until the client is done: its probe must find this host there
	nc -l -p $GO > /tmp/done.word
	grepcheck client-done done /tmp/done.word
	grep -a -e 'libsmc-preload' /tmp/socat.err | grep -v ': a probe$' | sed 's/^/  > /' | tail -n 20
else
	# both ways, its input open and silent until HOLD goes: after the end of the stream it waits for its input's
	mkfifo /tmp/in.fifo
	sleep 1200 > /tmp/in.fifo &
	HOLD=$!
	{ smc_run socat -d -d -t 1200 TCP:$VMPEER:$PORT,retry=100,interval=0.2 STDIO < /tmp/in.fifo > /tmp/got.txt 2>/tmp/socat.err
		echo "rc=$?" > /tmp/socat.rc; } &
	wait_for 600 sh -c "[ \$(wc -c < /tmp/got.txt) -eq $BYTES ]"
	ok bytes-came sh -c "[ \$(wc -c < /tmp/got.txt) -eq $BYTES ]"
	wait_for 300 sh -c "smcss -a | grep -q '^ACTIVE .*:$PORT .* SMCR'"
	smcss -a > /tmp/ss.txt 2>&1
	grepcheck conn-smcr "^ACTIVE .*:$PORT .* SMCR" /tmp/ss.txt
	word kill
	t0=$(date +%s)
	# what the library logs from here on (a TEST LINK before the kill is no matter)
	n0=$(wc -l < /tmp/socat.err)
	# bounded: a guest beside busy host CPUs may take its time
	wait_for 600 grep -q 'socket 1 (fd [0-9]*) is at EOF' /tmp/socat.err
	echo "INFO $SCEN/eof: the reader read the end of the stream $(($(date +%s) - t0)) s after the kill"
	wait_for 600 grep -q "failed (its peer's process is gone)" /tmp/socat.err
	echo "INFO $SCEN/told: its link failed $(($(date +%s) - t0)) s after the kill"
	# its input ends: so does the reader
	kill $HOLD
	wait_for 600 test -s /tmp/socat.rc || proc_calls socat
	word done
	grepcheck peer-gone-told "link group [0-9]*: the peer's daemon says its process is gone: 1 links probed" /tmp/socat.err
	grepcheck link-does-not-answer "link 1: the peer's process is gone (its daemon said so, the link does not answer)" /tmp/socat.err
	grepcheck link-failed-gone "link 1 (rxe0) failed (its peer's process is gone): 0 connections moved" /tmp/socat.err
	ok no-keepalive sh -c "! tail -n +$((n0 + 1)) /tmp/socat.err | grep -q 'nothing heard for 30 s'"
	grepcheck reader-eof 'socat\[[0-9]*\] N socket 1 (fd [0-9]*) is at EOF' /tmp/socat.err
	# (a W of its first connect, before the server listened, is no matter)
	ok reader-not-reset sh -c "! grep -q -e 'socat\[[0-9]*\] E ' -e 'socat\[[0-9]*\] W .*reset' /tmp/socat.err"
	grepcheck reader-ended 'rc=0' /tmp/socat.rc
	ok bytes-all sh -c "[ \$(wc -c < /tmp/got.txt) -eq $BYTES ]"
	sed 's/^/  rc> /' /tmp/socat.rc
	grep -a -e 'libsmc-preload' -e 'socat\[[0-9]*\] [EWN] ' /tmp/socat.err | grep -v ': a probe$' | sed 's/^/  > /' | tail -n 30
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
