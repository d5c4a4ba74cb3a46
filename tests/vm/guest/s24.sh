#!/bin/sh
# Scenario 24: socat's forking server, a program nobody tuned for us,
# between two VMs without kernel SMC with soft SMC-R on both (rxe0 in PNET
# NET1 and a daemon each).  socat under smc_run on the server listens with
# "fork": it forks a child for each connection at accept() and closes its
# own copy; the child forks again for the shell of SYSTEM and relays the
# connection's bytes to it.  The client sends three files of 8 MiB with
# socat under smc_run, one connection each; the server's shell writes each
# one's sha256, which must be the client's.  Each connection's end is left
# by the fork to the child that uses it (doc/soft-roce.md section 4, "A
# fork at accept()"), but socat's second child keeps a copy of it (close-
# on-exec, while system() runs the shell), so it stays TCP today, each end
# listed with the reason (the server 0x03060003, SHARED, the client
# 0x05000000/0x03060003), declined before either end set anything up,
# once the grandchild still holds its copy 200 ms on.  The
# INFO lines say how each went (smcss rows, the libraries' lines).  No
# connection is left listed, and socat still runs.
SCEN=s24-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
PORT=8874
DONE=5324               # the client's list of sums (plain TCP, busybox nc)
N=3

soft_rdma_host

if [ "$VMROLE" = server ]; then
	: > /tmp/got.sums
	smc_run socat -u TCP-LISTEN:$PORT,fork,reuseaddr SYSTEM:'sha256sum >> /tmp/got.sums' \
		> /tmp/socat.out 2> /tmp/socat.err &
	SPID=$!
	nc -l -p $DONE > /tmp/want.sums &
	NCPID=$!
	rows_until /tmp/want.sums $PORT
	wait_for 100 sh -c "[ \$(wc -l < /tmp/want.sums) -ge $N ] && [ \$(wc -l < /tmp/got.sums) -ge $N ]"
	ok sums-all sh -c "[ \$(wc -l < /tmp/got.sums) -eq $N ]"
	ok sums-same sh -c "sort /tmp/want.sums > /tmp/w; sort /tmp/got.sums > /tmp/g; cmp /tmp/w /tmp/g"
	echo "INFO $SCEN/conns-rdma: $(grep -c 'connected by rdma' /tmp/socat.err) of socat's $N connections over RDMA"
	wait_for 300 sh -c "! smcss -a | grep -q '^ACTIVE .*:$PORT '"
	smcss -a > /tmp/ss-after.txt 2>&1
	ok no-conn-left sh -c "! grep -q '^ACTIVE .*:$PORT ' /tmp/ss-after.txt"
	ok socat-runs kill -0 $SPID
	sed "s/^/INFO $SCEN\/row: /" /tmp/ss.txt
	grep -a 'libsmc-preload' /tmp/socat.err | sort | uniq -c | sed "s/^/INFO $SCEN\/lib: /"
	grep -a -v 'libsmc-preload' /tmp/socat.err | sed 's/^/  > /' | tail -n 20
	kill $NCPID $SPID 2>/dev/null
	wait $SPID 2>/dev/null
else
	( while [ ! -e /tmp/rows.stop ]; do smcss -a 2>&1 | grep "^ACTIVE .*:$PORT "; sleep 0.3; done ) > /tmp/ss.rows &
	: > /tmp/want.sums
	i=1
	while [ $i -le $N ]; do
		head -c 8388608 /dev/urandom > /tmp/in$i
		sha256sum < /tmp/in$i >> /tmp/want.sums
		# the listener may not be there yet: socat tries again
		smc_run socat -u FILE:/tmp/in$i TCP:$VMPEER:$PORT,retry=300,interval=0.2 2> /tmp/c$i.err
		rc=$?
		ok send-$i test $rc = 0
		grep -a 'libsmc-preload' /tmp/c$i.err | sed "s/^/INFO $SCEN\/lib-$i: /"
		i=$((i + 1))
	done
	touch /tmp/rows.stop
	sleep 1
	last_rows /tmp/ss.rows | sed "s/^/INFO $SCEN\/row: /"
	nc "$VMPEER" $DONE < /tmp/want.sums
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
