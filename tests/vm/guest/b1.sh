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
# 0 is a run that failed (its sockperf output follows).
SCEN=b1-$VMROLE
. /tests/lib.sh
ROUNDS=${B1_ROUNDS:-3}
SECONDS_RUN=${B1_SECONDS:-8}
export SMC_SOFT_SOCKET=/tmp/soft/control
# a sleeping reader or writer takes its link's completions (doc/soft-roce.md section 4)
DRIVE=$(sed -n 's/.*vmdrive=\([01]\).*/\1/p' /proc/cmdline)
DRIVE=${DRIVE:-0}
echo "INFO b1/drive: SMC_SOFT_DRIVE=$DRIVE"
# bench/softroce.sh records the kernel from this line (the console prints no banner)
echo "INFO b1/kernel: Linux version $(uname -r)"
echo "INFO b1/mtu: eth0 $(cat /sys/class/net/eth0/mtu)"

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
	soft) SMC_BACKEND=soft SMC_SOFT_DRIVE=$DRIVE smc_run "$@" ;;
	esac
}

busy() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

if [ "$VMROLE" = server ]; then
	for m in tcp kernel soft; do
		run_mode $m sockperf server --tcp -i 0.0.0.0 -p "$(port_of $m)" > /tmp/srv-$m.out 2>&1 &
	done
	# the client's view of this guest's CPU
	(while :; do nc -l -p 9000 -e awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; done) &
	# until the client is done
	nc -l -p 9001 > /tmp/done.txt
	echo "PASS $SCEN/served"
else
	peer_busy() {
		nc "$VMPEER" 9000 < /dev/null 2>/dev/null
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
				b0=$(busy); s0=$(peer_busy)
				if [ $t = pp ]; then
					run_mode $m sockperf ping-pong --tcp -i "$VMPEER" -p $p -m 14 -t "$SECONDS_RUN" \
						> /tmp/run.out 2>&1 &
				else
					run_mode $m sockperf throughput --tcp -i "$VMPEER" -p $p -m 65000 -t "$SECONDS_RUN" \
						> /tmp/run.out 2>&1 &
				fi
				spid=$!
				sleep $((SECONDS_RUN / 2 + 1))
				via=TCP
				[ $m = tcp ] || via=$(SMC_BACKEND=$m smcss -a 2>/dev/null |
					awk -v p=":$p" '$5 ~ p"$" { print $7; exit }')
				wait $spid
				b1=$(busy); s1=$(peer_busy)
				cpu=$(( b1 - b0 + ${s1:-0} - ${s0:-0} ))
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
	echo "PASS $SCEN/ran"
fi
