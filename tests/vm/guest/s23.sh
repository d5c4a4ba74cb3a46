#!/bin/sh
# Scenario 23: rsync, a program nobody tuned for us, between two VMs without
# kernel SMC with soft SMC-R on both (rxe0 in PNET NET1 and a daemon each).
# rsync's daemon under smc_run on the server forks a child for each
# connection and closes its own copy at once; the client's rsync under
# smc_run forks a generator and a receiver that share the connection (a
# pull), and the daemon's child does the same in a push.  The client pulls
# a tree (a 16 MiB file and 120 small ones, random) and checks every file's
# sha256 against the server's list, then pushes its copy back, which the
# server compares with diff -r; no connection is left listed once the
# client is done, and the daemon still runs.
# These connections stay TCP today: an end another process gets before it
# is paired goes on over TCP (doc/soft-roce.md, "One process per end"),
# and a server that forks at accept() does so while its end still
# negotiates.  The INFO lines say how each connection went (smcss rows, the
# libraries' lines); the bytes must be right either way.
# Needs rsync on the host (deps.sh installs it; mkinitramfs.sh copies it in).
SCEN=s23-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
PORT=8873
DONE=5323               # the client tells the server it is done (plain TCP, busybox nc)

soft_rdma_host
ok rsync-there command -v rsync

if [ "$VMROLE" = server ]; then
	mkdir -p /tmp/mod/orig/small
	head -c 16777216 /dev/urandom > /tmp/mod/orig/big
	i=0; while [ $i -lt 120 ]; do
		head -c $((i * 137 % 20000)) /dev/urandom > /tmp/mod/orig/small/f$i
		i=$((i + 1))
	done
	(cd /tmp/mod/orig && find . -type f | sort | xargs sha256sum) > /tmp/mod/sums
	cat > /tmp/rsyncd.conf <<-EOF
	port = $PORT
	use chroot = no
	uid = 0
	gid = 0
	[data]
	path = /tmp/mod
	read only = no
	EOF
	smc_run rsync --daemon --no-detach --config=/tmp/rsyncd.conf > /tmp/rsyncd.out 2> /tmp/rsyncd.err &
	RPID=$!
	nc -l -p $DONE > /tmp/done &
	NCPID=$!
	rows_until /tmp/done $PORT
	grepcheck client-done done /tmp/done
	ok pushed-tree-same diff -r /tmp/mod/orig /tmp/mod/back
	echo "INFO $SCEN/conns-rdma: $(grep -c 'connected by rdma' /tmp/rsyncd.err) of the daemon's connections over RDMA"
	# the daemon's children ended: none of their connections stays listed
	wait_for 300 sh -c "! smcss -a | grep -q '^ACTIVE .*:$PORT '"
	smcss -a > /tmp/ss-after.txt 2>&1
	ok no-conn-left sh -c "! grep -q '^ACTIVE .*:$PORT ' /tmp/ss-after.txt"
	ok daemon-runs kill -0 $RPID
	sed 's/^/INFO s23-server\/row: /' /tmp/ss.txt
	grep -a 'libsmc-preload' /tmp/rsyncd.err | sort | uniq -c | sed 's/^/INFO s23-server\/lib: /'
	kill $NCPID $RPID 2>/dev/null
	wait $RPID 2>/dev/null
else
	URL=rsync://$VMPEER:$PORT/data
	# the server may still be making its tree
	i=0
	while [ $i -lt "$(slow 300)" ]; do
		smc_run rsync "rsync://$VMPEER:$PORT/" > /tmp/list.out 2> /tmp/list.err && grep -q '^data' /tmp/list.out && break
		sleep 0.5; i=$((i + 1))
	done
	grepcheck module-listed '^data' /tmp/list.out
	# rsync RUN ARGS...: rsync under smc_run, its stderr in /tmp/RUN.err, its exit code checked
	rsync_run() {
		r=$1; shift
		t0=$(date +%s)
		smc_run rsync "$@" > /tmp/$r.out 2> /tmp/$r.err
		rc=$?
		echo "INFO $SCEN/$r: rc $rc in $(($(date +%s) - t0)) s"
		ok $r test $rc = 0
	}
	# the client's rows while its transfers run, each connection's last kept
	( while [ ! -e /tmp/rows.stop ]; do smcss -a 2>&1 | grep "^ACTIVE .*:$PORT "; sleep 0.3; done ) > /tmp/ss.rows &
	rsync_run pull -a --numeric-ids --timeout=600 "$URL/orig/" /tmp/got/
	rsync_run sums --timeout=600 "$URL/sums" /tmp/sums
	ok pulled-tree-sums sh -c "cd /tmp/got && sha256sum -c /tmp/sums"
	ok pulled-files-all sh -c "[ \$(find /tmp/got -type f | wc -l) -eq 121 ]"
	rsync_run push -a --numeric-ids --timeout=600 /tmp/got/ "$URL/back/"
	touch /tmp/rows.stop
	sleep 1
	last_rows /tmp/ss.rows | sed 's/^/INFO s23-client\/row: /'
	for f in pull sums push; do
		grep -a 'libsmc-preload' /tmp/$f.err | sed "s/^/INFO $SCEN\/lib-$f: /"
	done
	echo done | nc "$VMPEER" $DONE
	grep -a -h -v 'libsmc-preload' /tmp/pull.err /tmp/push.err | sed 's/^/  > /' | tail -n 20
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
