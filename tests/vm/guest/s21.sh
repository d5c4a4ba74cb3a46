#!/bin/sh
# Scenario 21: redis, a server nobody tuned for us (epoll, non-blocking
# sockets, writev, pipelined replies), between two VMs without kernel SMC
# over soft SMC-R: redis-server under smc_run on the server, redis-cli and
# redis-benchmark under smc_run on the client, rxe0 in PNET NET1 and a
# daemon each.  A 4 MiB random value goes in and comes back with the same
# sha256; redis-benchmark's connections (8 at once, pipelined and not)
# finish every request; the library says each connection of the client's
# programs and of the server negotiated SMC-R (SMC_DEBUG=1: "connected by
# rdma"), and smcss lists the server's connections as SMCR while they run.
# Needs redis on the host (deps.sh installs it; mkinitramfs.sh copies it in).
SCEN=s21-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
PORT=6379
DONE=5321               # the client tells the server it is done (plain TCP, busybox nc)

soft_rdma_host
ok redis-there command -v redis-server redis-cli redis-benchmark

if [ "$VMROLE" = server ]; then
	smc_run redis-server --port $PORT --bind "${VMIP%/*}" --protected-mode no --save '' \
		--appendonly no --daemonize no > /tmp/redis.out 2> /tmp/redis.err &
	RPID=$!
	# the client's benchmark runs: the server's connections, as smcss lists them
	nc -l -p $DONE > /tmp/done &
	NCPID=$!
	rows_until /tmp/done $PORT
	grepcheck server-conn-smcr "^ACTIVE .*:$PORT .* SMCR" /tmp/ss.txt
	kill $NCPID 2>/dev/null
	wait $NCPID 2>/dev/null
	# the client's SHUTDOWN NOSAVE ends it
	wait_for 300 sh -c "! kill -0 $RPID 2>/dev/null"
	ok redis-server-ended sh -c "! kill -0 $RPID 2>/dev/null"
	# each listed connection once: SMCR, or TCP with its code (the client's
	# last benchmark is not preloaded: 0x03010000 there)
	awk '{ print / SMCR/ ? "SMCR" : $(NF-1) " " $NF }' /tmp/ss.txt | sort | uniq -c |
		sed 's/^/INFO s21-server\/rows: /'
	conns=$(grep -c 'connected by rdma' /tmp/redis.err)
	echo "INFO s21-server/conns-rdma: $conns of the server's connections over RDMA"
	# the benchmarks' 56, the cli's own
	ok server-conns-over-rdma test "$conns" -ge 56
	grep -a -e 'soft SMC-R' -e 'reset' /tmp/redis.err | sed -E 's/ [0-9]+([ :,)]|$)/ N\1/g' | sort | uniq -c | sort -rn |
		head -n 12 | sed 's/^/  | /'
else
	# the server may still be starting
	i=0
	while [ $i -lt "$(slow 100)" ]; do
		smc_run redis-cli -h "$VMPEER" -p $PORT PING > /tmp/ping.out 2>/dev/null
		grep -qx PONG /tmp/ping.out && break
		sleep 0.5; i=$((i + 1))
	done
	grepcheck ping '^PONG$' /tmp/ping.out
	dd if=/dev/urandom of=/tmp/blob bs=1048576 count=4 2>/dev/null
	smc_run redis-cli -h "$VMPEER" -p $PORT -x SET blob < /tmp/blob > /tmp/set.out 2> /tmp/set.err
	grepcheck set-ok '^OK$' /tmp/set.out
	smc_run redis-cli -h "$VMPEER" -p $PORT --raw GET blob 2> /tmp/get.err | head -c 4194304 > /tmp/back
	ok value-intact sh -c "[ \"\$(sha256sum < /tmp/blob)\" = \"\$(sha256sum < /tmp/back)\" ]"
	ok get-over-rdma grep -q 'connected by rdma' /tmp/get.err
	# pipelined and not, small and large values (an error ends a benchmark)
	smc_run redis-benchmark -h "$VMPEER" -p $PORT -c 8 -n 4000 -d 1024 -t set,get,lpush,lrange_100 -q \
		> /tmp/bench.out 2> /tmp/bench.err
	echo "rc=$?" >> /tmp/bench.out
	smc_run redis-benchmark -h "$VMPEER" -p $PORT -c 8 -n 20000 -P 16 -d 16 -t set,get -q \
		>> /tmp/bench.out 2>> /tmp/bench.err
	echo "rc=$?" >> /tmp/bench.out
	tr '\r' '\n' < /tmp/bench.out | grep -a -e 'requests per second' -e '^rc=' | sed 's/^/INFO s21-client\/bench: /'
	ok bench-exit sh -c "[ \$(grep -c '^rc=0\$' /tmp/bench.out) = 2 ]"
	ok bench-every-test sh -c "[ \$(tr '\r' '\n' < /tmp/bench.out | grep -c 'requests per second') -ge 6 ]"
	ok bench-no-error sh -c "! grep -a -i -e 'error' -e 'reset' /tmp/bench.out /tmp/bench.err | grep -v 'soft SMC-R'"
	conns=$(grep -c 'connected by rdma' /tmp/bench.err)
	echo "INFO s21-client/bench-rdma: $conns connections of the benchmarks over RDMA"
	# 8 clients for each of its 7 tests (LRANGE's LPUSH counts): 56
	ok bench-over-rdma test "$conns" -ge 56
	ok bench-no-fallback sh -c "! grep -a -i -e 'fall' -e 'declin' /tmp/bench.err"
	grep -a 'connected by\|fall\|declin' /tmp/bench.err | sort | uniq -c | head -n 8 | sed 's/^/  | /'
	# the same first benchmark from a program not preloaded (TCP to the same
	# server): what these guests do without SMC-R, for the INFO lines only
	redis-benchmark -h "$VMPEER" -p $PORT -c 8 -n 4000 -d 1024 -t set,get -q 2>/dev/null |
		tr '\r' '\n' | grep -a 'requests per second' | sed 's/^/INFO s21-client\/bench-tcp: /'
	smc_run redis-cli -h "$VMPEER" -p $PORT SHUTDOWN NOSAVE > /dev/null 2>&1
	i=0; while ! echo done | nc "$VMPEER" $DONE && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
fi
kill $SOFTD 2>/dev/null
wait $SOFTD 2>/dev/null
