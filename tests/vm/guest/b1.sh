#!/bin/sh
# Benchmark b1 (bench/softroce.sh, never part of a test run): soft SMC-R
# against the kernel's own SMC-R over the same rxe devices, and both
# against TCP, between two VMs of a kernel with SMC (Debian's 6.12).  Real
# programs nobody tuned for us: sockperf ping-pong (14-byte messages) and
# sockperf throughput (65,000-byte messages, its largest), each for B1_SECONDS, in
# interleaved rounds whose order turns every round.  Each mode has its own
# sockperf server (tcp: plain, kernel: smc_run on the kernel's SMC, soft:
# smc_run on smc_softd).  CPU: the busy jiffies of /proc/stat of both
# guests over each run (the client asks the server's with nc on port 9000),
# the kernel's rxe work included.  The client prints one line per run:
#   RESULT MODE TEST ROUND VALUE UNIT CPU_JIFFIES VIA COUNT
# VIA is the connection's mode as smcss saw it mid-run (SMCR, TCP, ...);
# COUNT the round trips (latency) or the run's seconds (throughput); VALUE
# 0 is a run that failed (its sockperf output follows).  Where the CPU went,
# one line more per run (jiffies and context switches of each guest, and
# the packets the client's rxe0 sent and received):
#   SPLIT MODE TEST ROUND C_USER C_SYS C_SOFTIRQ C_CTXT S_USER S_SYS S_SOFTIRQ S_CTXT TX_PKTS RX_PKTS
# and "MARK begin|end MODE TEST ROUND" around each sockperf run, where the
# host reads its two QEMUs' CPU time (tests/vm/hostcpu.sh).
# With vmperf=1 (bench/softroce.sh PERF=1) both guests run `perf record -a`
# over the middle of each throughput run of round 1 and print its profile;
# with vmperf=trace (PERF=trace) `perf trace -s -a` instead, and print each
# sockperf thread's system calls (count, errors, milliseconds).
# With vmmemlock=KIB (MEMLOCK=KIB) soft SMC-R's sockperfs run as a user
# (uid 65534, no CAP_IPC_LOCK) whose RLIMIT_MEMLOCK is that many KiB, so
# that their buffers shrink as a user's do (doc/soft-roce.md section 2.2);
# each guest prints the sizes its connections had ("INFO b1/bufs").
SCEN=b1-$VMROLE
. /tests/lib.sh
ROUNDS=$(sed -n 's/.*vmrounds=\([0-9]*\).*/\1/p' /proc/cmdline)
ROUNDS=${ROUNDS:-3}
SECONDS_RUN=${B1_SECONDS:-8}
export SMC_SOFT_SOCKET=/tmp/soft/control
# a sleeping reader or writer takes its link's completions (doc/soft-roce.md section 4)
DRIVE=$(sed -n 's/.*vmdrive=\([01]\).*/\1/p' /proc/cmdline)
DRIVE=${DRIVE:-0}
echo "INFO b1/drive: SMC_SOFT_DRIVE=$DRIVE"
MEMLOCK=$(sed -n 's/.*vmmemlock=\([0-9]*\).*/\1/p' /proc/cmdline)
echo "INFO b1/memlock: ${MEMLOCK:-root, unlimited}"
# bench/softroce.sh records the kernel from this line (the console prints no banner)
echo "INFO b1/kernel: Linux version $(uname -r)"
echo "INFO b1/mtu: eth0 $(cat /sys/class/net/eth0/mtu)"
# what a copied byte costs here in user space and in the kernel (bench/copyrate.c)
echo "INFO b1/copy: $(copyrate 256 2>&1)"

ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
ok ueid-add smcr ueid add SMC-VM-TEST-EID
ok pnet-kernel smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
soft_daemon
ok pnet-soft env SMC_BACKEND=soft smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
ok sockperf-there command -v sockperf
i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); done

port_of() {
	case $1 in tcp) echo 11111 ;; kernel) echo 11112 ;; soft) echo 11113 ;; esac
}

# run_mode MODE CMD...: CMD as MODE runs it.
run_mode() {
	m=$1; shift
	case $m in
	tcp) "$@" ;;
	kernel) SMC_BACKEND=kernel smc_run "$@" ;;
	soft)
		if [ -n "$MEMLOCK" ]; then
			# the library's account of each link group (made, failed, freed) for srvlog below
			(ulimit -l "$MEMLOCK" && SMC_DEBUG=1 SMC_BACKEND=soft SMC_SOFT_DRIVE=$DRIVE exec asuser 65534 smc_run "$@")
		else
			SMC_BACKEND=soft SMC_SOFT_DRIVE=$DRIVE smc_run "$@"
		fi ;;
	esac
}

# the soft connections' buffers: smcr -d stats's RX (RMB) and TX rows of sizes
bufs() {
	echo "INFO b1/bufs: $(SMC_BACKEND=soft smcr -d stats 2>&1 | grep -E '^ +(Bufs|Buffer downgrades)' | tr -s ' ' | tr '\n' ';')"
}

# this guest's "BUSY USER SYS SOFTIRQ CTXT" (jiffies, context switches) of /proc/stat
STAT_AWK='/^cpu / { b = $2 + $3 + $4 + $7 + $8 + $9; u = $2 + $3; s = $4; q = $7 + $8 }
	/^ctxt / { c = $2 } END { print b, u, s, q, c }'
busy() {
	awk "$STAT_AWK" /proc/stat | awk '{ print $1 }'
}

# split: this guest's "USER SYS SOFTIRQ CTXT"
split() {
	awk "$STAT_AWK" /proc/stat | awk '{ print $2, $3, $4, $5 }'
}

# rxe_pkts: "SENT RECEIVED" packets of rxe0's port so far
rxe_pkts() {
	rdma statistic show link rxe0/1 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) { if ($i == "sent_pkts") t = $(i + 1); if ($i == "rcvd_pkts") r = $(i + 1) } }
			END { print t + 0, r + 0 }'
}

PERF=$(sed -n 's/.*vmperf=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
command -v perf >/dev/null || PERF=
PERF=${PERF:-0}

# perf_run NAME SECONDS: profile the whole guest for that long
perf_run() {
	if [ $PERF = trace ]; then
		perf trace -s -a -o "/tmp/perf-$1.trace" -- sleep "$2" >/dev/null 2>&1
	else
		perf record -q -a -o "/tmp/perf-$1.data" -- sleep "$2" >/dev/null 2>&1
	fi
}

# perf_show: every profile taken, as text on the console
perf_show() {
	for f in /tmp/perf-*.trace; do
		[ -e "$f" ] || continue
		echo "INFO b1/trace: $f"
		# a thread's block starts " comm (tid), N events, P%"
		awk '/^ [^ ].* \([0-9]+\), [0-9]+ events/ { show = $1 == "sockperf" }
			show && NF' "$f" | sed 's/^/  trace | /'
	done
	for f in /tmp/perf-*.data; do
		[ -e "$f" ] || continue
		echo "INFO b1/perf: $f"
		for sort in comm dso,sym; do
			perf report -i "$f" --stdio --sort $sort --percent-limit 0.4 2>/dev/null |
				grep -v '^#' | grep -v '^$' | head -n 45 | sed "s/^/  $sort | /"
		done
		# the program's own threads (the library's progress thread among them)
		perf report -i "$f" --stdio --comms sockperf --percentage relative --sort pid,dso,sym \
			--percent-limit 0.7 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 60 | sed "s/^/  sockperf | /"
	done
}

if [ "$VMROLE" = server ]; then
	for m in tcp kernel soft; do
		run_mode $m sockperf server --tcp -i 0.0.0.0 -p "$(port_of $m)" > /tmp/srv-$m.out 2>&1 &
	done
	# the client's view of this guest's CPU: "BUSY USER SYS SOFTIRQ CTXT"
	(while :; do nc -l -p 9000 -e awk "$STAT_AWK" /proc/stat; done) &
	# profiles the client asks for: "NAME SECONDS"
	[ $PERF = 0 ] || (while :; do
		read -r name secs < /tmp/perf.req 2>/dev/null && perf_run "$name" "$secs"
		rm -f /tmp/perf.req
		nc -l -p 9002 > /tmp/perf.req
	done) &
	# until the client is done
	nc -l -p 9001 > /tmp/done.txt
	sleep 1
	bufs
	# under a user's limit: what the soft server's library said of its link groups
	if [ -n "$MEMLOCK" ]; then
		grep -a 'libsmc-preload' /tmp/srv-soft.out | tail -n 60 | sed 's/^/INFO b1\/srvlog: /'
		for d in /proc/[0-9]*; do
			grep -qs '^Name:.*sockperf' "$d/status" && grep -qs '^Uid:.*65534' "$d/status" &&
				echo "INFO b1/srvpin: $(grep -E '^(VmPin|VmLck)' "$d/status" | tr -s ' \t' ' ' | tr '\n' ';')"
		done
	fi
	[ $PERF = 0 ] || perf_show
	echo "PASS $SCEN/served"
else
	peer_stat() {
		nc "$VMPEER" 9000 < /dev/null 2>/dev/null
	}
	peer_busy() {
		peer_stat | awk '{ print $1 }'
	}
	i=0; while [ -z "$(peer_busy)" ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	sleep 2
	r=1
	while [ $r -le "$ROUNDS" ]; do
		case $((r % 3)) in
		1) order="tcp kernel soft" ;;
		2) order="kernel soft tcp" ;;
		0) order="soft tcp kernel" ;;
		esac
		for m in $order; do
			for t in pp tp; do
				p=$(port_of $m)
				b0=$(busy); p0=$(peer_stat); s0=${p0%% *}; c0=$(split); x0=$(rxe_pkts)
				# the host reads its QEMUs' CPU at each MARK (tests/vm/hostcpu.sh)
				echo "MARK begin $m $t $r"
				if [ $t = pp ]; then
					run_mode $m sockperf ping-pong --tcp -i "$VMPEER" -p $p -m 14 -t "$SECONDS_RUN" \
						> /tmp/run.out 2>&1 &
				else
					run_mode $m sockperf throughput --tcp -i "$VMPEER" -p $p -m 65000 -t "$SECONDS_RUN" \
						> /tmp/run.out 2>&1 &
				fi
				spid=$!
				ppid=
				if [ $PERF != 0 ] && [ $r = 1 ] && [ $t = tp ]; then
					sleep 1
					echo "$m-$t $((SECONDS_RUN - 3))" | nc "$VMPEER" 9002
					perf_run "$m-$t" $((SECONDS_RUN - 3)) &
					ppid=$!
					sleep $((SECONDS_RUN / 2))
				else
					sleep $((SECONDS_RUN / 2 + 1))
				fi
				via=TCP
				[ $m = tcp ] || via=$(SMC_BACKEND=$m smcss -a 2>/dev/null |
					awk -v p=":$p" '$5 ~ p"$" { print $7; exit }')
				# an SMC-R run on TCP: its row, with the reason
				[ $m = tcp ] || [ "$via" = SMCR ] || SMC_BACKEND=$m smcss -a 2>/dev/null |
					awk -v p=":$p" '$5 ~ p"$" { print "INFO b1/fallback:", $0; exit }'
				wait $spid
				echo "MARK end $m $t $r"
				[ -z "$ppid" ] || wait $ppid
				b1=$(busy); p1=$(peer_stat); s1=${p1%% *}; c1=$(split); x1=$(rxe_pkts)
				cpu=$(( b1 - b0 + ${s1:-0} - ${s0:-0} ))
				echo "SPLIT $m $t $r $(echo "$c0 $c1 ${p0#* } ${p1#* } $x0 $x1" | awk '{
					print $5 - $1, $6 - $2, $7 - $3, $8 - $4, $13 - $9, $14 - $10, $15 - $11, $16 - $12, $19 - $17, $20 - $18 }')"
				if [ $t = pp ]; then
					v=$(sed -n 's/.*Summary: Latency is \([0-9.]*\) usec.*/\1/p' /tmp/run.out | tail -n 1)
					n=$(sed -n 's/.*ReceivedMessages=\([0-9]*\).*/\1/p' /tmp/run.out | tail -n 1)
					echo "RESULT $m latency $r ${v:-0} usec $cpu ${via:-none} $n"
				else
					v=$(sed -n 's/.*BandWidth is \([0-9.]*\) MBps.*/\1/p' /tmp/run.out | tail -n 1)
					echo "RESULT $m throughput $r ${v:-0} MBps $cpu ${via:-none} $SECONDS_RUN"
				fi
				[ -n "$v" ] || sed 's/^/  > /' /tmp/run.out | tail -n 5
			done
		done
		r=$((r + 1))
	done
	echo done | nc "$VMPEER" 9001
	bufs
	[ $PERF = 0 ] || perf_show
	echo "PASS $SCEN/ran"
fi
