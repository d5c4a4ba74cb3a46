#!/bin/sh
# Benchmark b2 (bench/softroce_pg.sh, never part of a test run): PostgreSQL,
# a program nobody tuned for us, between two VMs over soft SMC-R (rxe0 in
# PNET NET1, a daemon each) against plain TCP, and against the kernel's own
# SMC-R over the same rxe devices where the guests' kernel has SMC
# (Debian's 6.12; the newest has none).  The server runs one cluster per
# mode, copies of one initdb's: plain on 5432, under smc_run on the soft
# backend on 5433, on the kernel's SMC on 5434, each as user postgres
# (uid 1000) with RLIMIT_MEMLOCK unlimited (as a unit with
# LimitMEMLOCK=infinity would).  Its postmaster
# forks a backend at each accept() and closes its copy
# (doc/soft-roce.md section 4, "A fork at accept()").  The client loads
# pgbench's tables (scale 2) into each, then runs pgbench in interleaved
# rounds whose order turns every round, for B2_SECONDS each:
#   ro: select-only (-S), 4 clients on one thread: round trips of small
#       messages, four backends and pgbench on one CPU each side
#   rw: pgbench's TPC-B-like transaction, the same clients
# The client prints one line per run:
#   RESULT MODE TEST ROUND TPS tps CPU_JIFFIES VIA TRANSACTIONS
# VIA is what smcss listed for the run's connections mid-run (SMCR when all
# of them were, else the first other mode with its count); TPS 0 is a run
# that failed (its pgbench output follows).  CPU: the busy jiffies of
# /proc/stat of both guests over the run (the server's through nc on port
# 9000), the kernel's rxe work included.  Once all rounds ran, each
# cluster's books must balance: the sum of the accounts' balances equals
# the sum of the history's deltas, and so do the tellers' and branches'
# (pgbench's transaction updates all four in one transaction), so a byte
# lost or doubled on either path shows as a failed check, not a number.
SCEN=b2-$VMROLE
. /tests/lib.sh
ROUNDS=$(sed -n 's/.*vmrounds=\([0-9]*\).*/\1/p' /proc/cmdline)
ROUNDS=${ROUNDS:-3}
SECONDS_RUN=${B2_SECONDS:-10}
export SMC_SOFT_SOCKET=/tmp/soft/control TZ=UTC
echo "INFO b2/kernel: Linux version $(uname -r)"

soft_daemon
ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
ok pnet-soft env SMC_BACKEND=soft smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
MODES="tcp soft"
if [ -d /sys/module/smc ]; then
	MODES="tcp kernel soft"
	ok ueid-add env SMC_BACKEND=kernel smcr ueid add SMC-VM-TEST-EID
	ok pnet-kernel env SMC_BACKEND=kernel smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
fi
i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt "$(slow 20)" ]; do i=$((i + 1)); done
ok ping-peer ping -c 1 -W 2 "$VMPEER"
ok postgres-there command -v pgbench
echo "INFO b2/modes: $MODES"

port_of() {
	case $1 in tcp) echo 5432 ;; soft) echo 5433 ;; kernel) echo 5434 ;; esac
}

# run_mode MODE CMD...: CMD as MODE runs it.
run_mode() {
	m=$1; shift
	case $m in
	tcp) "$@" ;;
	soft) SMC_BACKEND=soft smc_run "$@" ;;
	kernel) SMC_BACKEND=kernel smc_run "$@" ;;
	esac
}

STAT_AWK='/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }'
busy() {
	awk "$STAT_AWK" /proc/stat
}

if [ "$VMROLE" = server ]; then
	PGBIN=$(dirname "$(readlink -f "$(command -v pgbench)")")
	mkdir -p /tmp/pg
	chown 1000:1000 /tmp/pg
	t0=$(date +%s)
	# 1 MiB WAL segments: three clusters live in the guest's 512 MiB of RAM
	ok initdb asuser 1000 "$PGBIN/initdb" -D /tmp/pg/tcp -A trust -U postgres --no-sync --locale=C -E UTF8 \
		--wal-segsize=1
	echo "INFO b2/initdb: $(($(date +%s) - t0)) s"
	for m in $MODES; do
		[ $m = tcp ] || cp -a /tmp/pg/tcp /tmp/pg/$m
	done
	for m in $MODES; do
		cat >> /tmp/pg/$m/postgresql.conf <<-EOF
		listen_addresses = '*'
		port = $(port_of $m)
		shared_buffers = 16MB
		max_connections = 20
		jit = off
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		wal_level = minimal
		max_wal_senders = 0
		max_wal_size = 32MB
		min_wal_size = 4MB
		unix_socket_directories = '/tmp/pg/$m'
		log_min_messages = warning
		EOF
		echo "host all all 0.0.0.0/0 trust" >> /tmp/pg/$m/pg_hba.conf
		(ulimit -l unlimited && SMC_DEBUG=1 run_mode $m asuser 1000 "$PGBIN/postgres" -D /tmp/pg/$m \
			> /tmp/pg-$m.out 2>&1) &
	done
	for m in $MODES; do
		wait_for 600 test -S /tmp/pg/$m/.s.PGSQL.$(port_of $m)
		ok "server-$m-up" test -S /tmp/pg/$m/.s.PGSQL.$(port_of $m)
	done
	# the client's view of this guest's CPU
	(while :; do nc -l -p 9000 -e awk "$STAT_AWK" /proc/stat; done) &
	# until the client is done
	nc -l -p 9001 > /tmp/done.txt
	grepcheck client-done done /tmp/done.txt
	echo "INFO b2/conns-rdma: $(grep -c 'connected by rdma' /tmp/pg-soft.out) of the soft cluster's connections over RDMA"
	grep -a 'libsmc-preload' /tmp/pg-soft.out | sed 's/fd [0-9]*/fd N/' | sort | uniq -c | sort -rn | head -n 20 |
		sed 's/^/INFO b2-server\/lib: /'
	grep -a -v 'libsmc-preload' /tmp/pg-soft.out | grep -a -E 'FATAL|PANIC|ERROR' | head -n 10 |
		sed 's/^/INFO b2-server\/pg: /'
	echo "PASS $SCEN/served"
else
	peer_busy() {
		nc "$VMPEER" 9000 < /dev/null 2>/dev/null
	}
	# pg_url MODE: the connection string of MODE's cluster
	pg_url() {
		echo "host=$VMPEER port=$(port_of "$1") user=postgres dbname=postgres"
	}
	i=0; while [ -z "$(peer_busy)" ] && [ $i -lt "$(slow 600)" ]; do sleep 0.5; i=$((i + 1)); done
	ok server-ready test -n "$(peer_busy)"
	for m in $MODES; do
		ok "load-$m" run_mode $m pgbench -i -s 2 -q "$(pg_url $m)"
	done
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		# the modes' order turns every round
		order=$MODES
		k=1
		while [ $k -lt "$r" ]; do
			order="${order#* } ${order%% *}"
			k=$((k + 1))
		done
		for m in $order; do
			for t in ro rw; do
				p=$(port_of $m)
				flags=
				[ $t = rw ] || flags=-S
				b0=$(busy); s0=$(peer_busy)
				run_mode $m pgbench -n $flags -c 4 -j 1 -T "$SECONDS_RUN" "$(pg_url $m)" > /tmp/run.out 2>&1 &
				ppid=$!
				sleep $((SECONDS_RUN / 2 + 1))
				via=TCP
				if [ $m != tcp ]; then
					SMC_BACKEND=$m smcss -a 2>/dev/null | awk -v p=":$p" '$5 ~ p"$" { print $7 }' > /tmp/via
					n=$(wc -l < /tmp/via)
					if [ "$n" -gt 0 ] && [ "$(grep -c '^SMCR$' /tmp/via)" = "$n" ]; then
						via=SMCR
					else
						via="$(grep -v '^SMCR$' /tmp/via | head -n 1)x$n"
						SMC_BACKEND=$m smcss -a 2>/dev/null | awk -v p=":$p" '$5 ~ p"$"' |
							head -n 4 | sed 's/^/INFO b2\/fallback: /'
					fi
				fi
				wait $ppid
				b1=$(busy); s1=$(peer_busy)
				cpu=$(( b1 - b0 + ${s1:-0} - ${s0:-0} ))
				v=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' /tmp/run.out | tail -n 1)
				n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' /tmp/run.out | tail -n 1)
				echo "RESULT $m $t $r ${v:-0} tps $cpu $via ${n:-0}"
				[ -n "$v" ] || sed 's/^/  > /' /tmp/run.out | tail -n 8
			done
		done
		r=$((r + 1))
	done
	# the books of each cluster balance after every run
	for m in $MODES; do
		q="select (select sum(abalance) from pgbench_accounts) - (select sum(delta) from pgbench_history),
			(select sum(tbalance) from pgbench_tellers) - (select sum(delta) from pgbench_history),
			(select sum(bbalance) from pgbench_branches) - (select sum(delta) from pgbench_history),
			(select count(*) from pgbench_history)"
		run_mode $m psql -At -F ' ' -c "$q" "$(pg_url $m)" > /tmp/books-$m.out 2>&1
		echo "INFO b2/books-$m: $(cat /tmp/books-$m.out)"
		grepcheck "books-$m" '^0 0 0 [1-9][0-9]*$' /tmp/books-$m.out
	done
	echo done | nc "$VMPEER" 9001
	echo "PASS $SCEN/ran"
fi
