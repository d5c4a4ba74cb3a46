#!/bin/sh
# Scenario 12: a peer stopped for a while (SIGSTOP, a debugger, Ctrl-Z)
# while the other end's writer waits for room.  Two VMs without kernel SMC,
# rxe and a daemon each, socat under smc_run on both ends: the client
# writes 64 MiB, the server's reader takes two MiB, the second over RDMA,
# and is then stopped for 60 s, its whole process (the library's progress
# thread with it).  The writer's link is watched meanwhile by zero-byte
# RDMA WRITEs, which the stopped peer's device acknowledges without its
# program (doc/soft-roce.md section 4): about a hundred of them, more than
# the peer's 64 receive slots, which LLC messages as probes used up (the
# link failed half a minute into the stop).  A TCP connection outlives
# such a stop, and so must the link: once the reader goes on, every byte
# arrives.
SCEN=s12-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
PORT=5204
BYTES=67108864
STOP=60

soft_rdma_host

if [ "$VMROLE" = server ]; then
	smc_run socat -u TCP-LISTEN:$PORT,reuseaddr OPEN:/tmp/got.bin,creat,trunc 2>/tmp/socat.err &
	RPID=$!
	# on RDMA (the writer pauses after its first MiB meanwhile), then a MiB more
	wait_for 600 sh -c "smcss -a | grep -q '^ACTIVE .*:$PORT .* SMCR'"
	wait_for 1200 sh -c "[ \$(wc -c < /tmp/got.bin) -ge 2097152 ]"
	kill -STOP $RPID
	got=$(wc -c < /tmp/got.bin)
	echo "INFO $SCEN/stopped: the reader stopped after $got bytes, for $STOP s"
	ok stopped-midway test "$got" -lt $BYTES
	smcss -a > /tmp/ss.txt 2>&1
	grepcheck conn-smcr "^ACTIVE .*:$PORT .* SMCR" /tmp/ss.txt
	sleep $STOP
	rdma statistic show link rxe0/1 > /tmp/rxe-stopped.txt 2>&1
	kill -CONT $RPID
	wait $RPID
	ok reader-exit test $? = 0
	ok bytes-intact sh -c "[ \"\$(head -c $BYTES /dev/zero | sha256sum)\" = \"\$(sha256sum < /tmp/got.bin)\" ]"
	# the library's lines, probes left out: a reason a connection stayed on TCP among them
	grep -a -e 'libsmc-preload' /tmp/socat.err | grep -v ': a probe$' | sed 's/^/  > /' | tail -n 20
	sed 's/^/  rxe while stopped> /' /tmp/rxe-stopped.txt
else
	# a MiB, 10 s for the libraries to negotiate, the rest
	(head -c 1048576 /dev/zero; sleep 10; head -c $((BYTES - 1048576)) /dev/zero) |
		smc_run socat -u STDIN TCP:$VMPEER:$PORT,retry=100,interval=0.2 2>/tmp/socat.err
	ok writer-exit test $? = 0
	n=$(grep -c 'work outstanding, nothing completed for .* ms: a probe' /tmp/socat.err)
	echo "INFO $SCEN/probes: $n"
	ok writer-probed test "$n" -gt 64
	ok link-not-failed sh -c "! grep -q 'failed' /tmp/socat.err"
	# the library's lines, probes left out: a reason a connection stayed on TCP among them
	grep -a -e 'libsmc-preload' /tmp/socat.err | grep -v ': a probe$' | sed 's/^/  > /' | tail -n 20
	rdma statistic show link rxe0/1 | sed 's/^/  rxe> /'
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
