# Shared helpers of the guest scenarios (busybox ash).
# vmdrive= (VM_DRIVE of tests/vm/run.sh): SMC_SOFT_DRIVE for every soft program
VMDRIVE=$(sed -n 's/.*vmdrive=\([01]\).*/\1/p' /proc/cmdline)
[ -z "$VMDRIVE" ] || { export SMC_SOFT_DRIVE=$VMDRIVE; echo "INFO drive: SMC_SOFT_DRIVE=$VMDRIVE"; }
# vmslow= (run.sh's VM_SLOW: 3 where an s390x guest takes part): the
# guests' waits are that many times longer, as the host's timeouts are
VMSLOW=$(sed -n 's/.*vmslow=\([0-9]*\).*/\1/p' /proc/cmdline)
VMSLOW=${VMSLOW:-1}
[ "$VMSLOW" = 1 ] || echo "INFO slow: waits times $VMSLOW"
# slow N: N looks (or seconds) of a wait, times VMSLOW
slow() {
	echo $(($1 * VMSLOW))
}
# check NAME CMD...: run CMD (stdout+stderr), normalise with $NORM (a sed
# script, may be empty), compare with expected/$SCEN/NAME, or with
# expected/kernel-X.Y/$SCEN/NAME where this kernel (X.Y of uname -r) answers
# otherwise (doc/kernels.md); print PASS/FAIL.
# A missing expected file prints the output (to write expectations from).
NORM=
KSERIES=$(uname -r | cut -d. -f1,2)
check() {
	name=$1; shift
	"$@" > /tmp/out.raw 2>&1
	echo "rc=$?" >> /tmp/out.raw
	if [ -n "$NORM" ]; then sed -e "$NORM" /tmp/out.raw > /tmp/out; else cp /tmp/out.raw /tmp/out; fi
	exp=/tests/expected/$SCEN/$name
	[ ! -f "/tests/expected/kernel-$KSERIES/$SCEN/$name" ] || exp=/tests/expected/kernel-$KSERIES/$SCEN/$name
	if [ -f "$exp" ] && diff -u "$exp" /tmp/out > /tmp/out.diff 2>&1; then
		echo "PASS $SCEN/$name"
	else
		echo "FAIL $SCEN/$name"
		[ -f "$exp" ] && sed 's/^/  | /' /tmp/out.diff || sed 's/^/  > /' /tmp/out
	fi
	NORM=
}
# echo_client PORT HOLD [BYTES [PAUSE]]: tcpecho client under smc_run (ECHO_RUN=: not
# preloaded) against $VMPEER, tried
# again until the server answers (it may still be starting), then waited
# for until it printed its echo; output in /tmp/echo.out, its pid in EPID.
echo_client() {
	i=0
	while [ $i -lt "$(slow 30)" ]; do
		# the last try's words must not answer for this one: the shell empties the
		# file in the child, maybe after the grep below (a refused try's line made
		# the next, connected try look refused; the one after it, the server gone,
		# said "No route to host" over its echo)
		rm -f /tmp/echo.out
		${ECHO_RUN-smc_run} tcpecho client "$VMPEER" "$1" "$2" ${3:-} ${4:-} > /tmp/echo.out 2>&1 &
		EPID=$!
		# connected, refused, or gone, however long a loaded guest takes to say so (a
		# cap here took a slow connect for a refused one, and the next try's output
		# hid the echo that was under way)
		while ! grep -qs -e CONNECTED -e tcpecho: /tmp/echo.out && kill -0 $EPID 2>/dev/null; do sleep 0.1; done
		grep -qs CONNECTED /tmp/echo.out && break
		wait $EPID; sleep 1; i=$((i + 1))
	done
	# connected: its echo, however long the bytes take
	j=0; while ! grep -q -e ECHO -e tcpecho: /tmp/echo.out && kill -0 $EPID 2>/dev/null && [ $j -lt "$(slow 1800)" ]; do
		sleep 0.1; j=$((j + 1))
	done
}
# ok NAME CMD...: PASS when CMD succeeds.
ok() {
	name=$1; shift
	if "$@" > /tmp/ok.out 2>&1; then echo "PASS $SCEN/$name"; else echo "FAIL $SCEN/$name"; sed 's/^/  > /' /tmp/ok.out; fi
}
# fixtures NAME: with vmrecord=1 on the kernel command line, record the raw
# netlink replies of every query (nldump) and, at the same moment, the text
# the tools print for them; print each file as a base64 block on the console
# ("=== fixture NAME/FILE" ... "=== fixture end"), for run.sh to extract
# (RECORD_FIXTURES=1).  Without vmrecord=1 it does nothing.
fixtures() {
	grep -q 'vmrecord=1' /proc/cmdline || return 0
	d=/tmp/fx-$1
	rm -rf "$d"; mkdir -p "$d"
	uname -r > "$d/uname.txt"
	smc_pnet > "$d/smc_pnet.txt" 2>&1
	smcr info > "$d/smcr_info.txt" 2>&1
	smcd info > "$d/smcd_info.txt" 2>&1
	smcr linkgroup > "$d/smcr_linkgroup.txt" 2>&1
	smcr -d linkgroup link-show > "$d/smcr_d_linkgroup_link-show.txt" 2>&1
	smcd linkgroup > "$d/smcd_linkgroup.txt" 2>&1
	smcr -d device > "$d/smcr_d_device.txt" 2>&1
	smcd device > "$d/smcd_device.txt" 2>&1
	smcr ueid show > "$d/smcr_ueid_show.txt" 2>&1
	smcd seid > "$d/smcd_seid.txt" 2>&1
	smcr -a stats > "$d/smcr_a_stats.txt" 2>&1
	smcr -a -d stats > "$d/smcr_a_d_stats.txt" 2>&1
	smcd -a stats > "$d/smcd_a_stats.txt" 2>&1
	smcss -a -d > "$d/smcss_a_d.txt" 2>&1
	smcss -a -R > "$d/smcss_a_R.txt" 2>&1
	nldump "$d" 2> "$d/nldump.err" || echo "FAIL $SCEN/nldump"
	[ -s "$d/nldump.err" ] || rm -f "$d/nldump.err"
	for f in "$d"/*; do
		echo "=== fixture $1/${f##*/}"
		base64 < "$f"
		echo "=== fixture end"
	done
}
# grepcheck NAME REGEX FILE: PASS when a line of FILE matches REGEX, else the file.
grepcheck() {
	if grep -q -e "$2" "$3"; then echo "PASS $SCEN/$1"; else echo "FAIL $SCEN/$1: no line matching '$2'"; sed 's/^/  > /' "$3"; fi
}
# soft_daemon: this VM's smc_softd on $SMC_SOFT_SOCKET (SOFTD its pid).
soft_daemon() {
	smc_softd -f -s "$SMC_SOFT_SOCKET" > /tmp/softd.log 2>&1 &
	SOFTD=$!
	i=0; while [ ! -S "$SMC_SOFT_SOCKET" ] && [ $i -lt "$(slow 100)" ]; do sleep 0.1; i=$((i + 1)); done
	ok softd-started test -S "$SMC_SOFT_SOCKET"
}
# soft_rdma_host: this VM's smc_softd on $SMC_SOFT_SOCKET (SOFTD its pid),
# rxe0 on eth0 in PNET NET1, and the peer answering pings (s4, s8).
soft_rdma_host() {
	soft_daemon
	ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
	ok pnet-add smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
	i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt "$(slow 20)" ]; do i=$((i + 1)); done
	ok ping-peer ping -c 1 -W 2 "$VMPEER"
}
# rxe_two_networks: the second network (eth1, 10.0.1.0/24: ME2 this VM's
# address there), an rxe device on each interface (rxe0, rxe1), and both
# peers answering pings (the s5 to s7 scenarios of soft SMC-R).
rxe_two_networks() {
	if [ "$VMROLE" = server ]; then ME2=10.0.1.1 PEER2=10.0.1.2; else ME2=10.0.1.2 PEER2=10.0.1.1; fi
	ip addr add $ME2/24 dev eth1
	[ -z "${VMMTU:-}" ] || ip link set eth1 mtu "$VMMTU"
	ip link set eth1 up
	ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
	ok rdma-link-add-second rdma link add rxe1 type rxe netdev eth1
	for p in "$VMPEER" $PEER2; do
		i=0; while ! ping -c 1 -W 1 "$p" >/dev/null 2>&1 && [ $i -lt "$(slow 20)" ]; do i=$((i + 1)); done
	done
	ok ping-peer ping -c 1 -W 2 "$VMPEER"
	ok ping-peer-second ping -c 1 -W 2 $PEER2
}
# soft_two_links_host: this VM's smc_softd, the two networks with an rxe
# device each, both in PNET NET1 (a link group of two links), and socat
# (the s9 to s11 scenarios).
soft_two_links_host() {
	soft_daemon
	rxe_two_networks
	ok pnet-first smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
	ok pnet-second smc_pnet -a NET1 -I eth1 -D rxe1 -P 1
	ok socat-there command -v socat
}
# rec_start [llc]: this VM's SMC-R dump records (dumprec) into /tmp/rec.txt
# (REC its pid) until rec_stop.
rec_start() {
	rm -f /tmp/rec.txt
	dumprec "$@" > /tmp/rec.txt 2>&1 &
	REC=$!
	wait_for 100 grep -q '^capturing' /tmp/rec.txt
	grepcheck dump-capturing '^capturing' /tmp/rec.txt
}
rec_stop() {
	kill -TERM $REC
	wait $REC
	grepcheck dump-ended '^end$' /tmp/rec.txt
	echo "INFO $SCEN/records: $(awk '{ n[$1 ($1 == "llc" ? "-" $6 : "")]++ } END { for (k in n) printf "%s %d, ", k, n[k] }' /tmp/rec.txt)"
}
# rec_llc NAME LLC-TYPE RX: PASS when an LLC record of that type went (RX 0) or came (RX 1).
rec_llc() {
	ok "$1" sh -c "awk '\$1 == \"llc\" && \$2 == $3 && \$6 == $2' /tmp/rec.txt | grep -q ."
}
# rec_data TOTAL: PASS data-records-sent and -came when each direction's
# DATA records run on from offset 0 without a gap or an overlap and add up to
# at most TOTAL bytes (those before the cut-over went by TCP: how many is the
# negotiation's time, more than the program's first write beside two busy
# loops), or there are none (a direction whose reader slept in the kernel's
# read() over the cut-over stays on TCP for a small transfer); INFO says how
# many; and cdc-records when our CDCs were recorded (the only ones the
# processes see).
rec_data() {
	for rx in 0 1; do
		way=sent; [ $rx = 1 ] && way=came
		ok "data-records-$way" awk -v rx=$rx -v total="$1" '
			$1 == "data" && $2 == rx { if ((n == 0 && $5 != 0) || (n && $5 != nx)) bad++; nx = $5 + $6; sum += $6; n++ }
			END { if (!n || (!bad && sum <= total)) exit 0
			      print n " records, " sum " bytes, " bad + 0 " out of place"; exit 1 }' /tmp/rec.txt
		awk -v rx=$rx -v way=$way -v scen="$SCEN" '$1 == "data" && $2 == rx { sum += $6; n++ }
			END { print "INFO " scen "/data-records-" way ": " n + 0 " records, " sum + 0 " bytes" }' /tmp/rec.txt
	done
	ok cdc-records sh -c "awk '\$1 == \"cdc\" && \$2 == 0' /tmp/rec.txt | grep -q ."
}
# sent_pkts DEV: rxe's packets sent on DEV's port 1 so far.
sent_pkts() {
	rdma statistic show link "$1/1" 2>/dev/null | sed -n 's/.* sent_pkts \([0-9]*\).*/\1/p'
}
# wait_quarter FILE: until FILE says a quarter was sent (at most 90 s, times VMSLOW); PASS quarter-sent.
wait_quarter() {
	i=0; while ! grep -qs 'a quarter sent' "$1" && [ $i -lt "$(slow 900)" ]; do sleep 0.1; i=$((i + 1)); done
	ok quarter-sent grep -q 'a quarter sent' "$1"
}
# wait_for COUNT CMD...: until CMD succeeds, at most COUNT tenths of a second (times VMSLOW).
wait_for() {
	n=$(slow "$1"); shift
	i=0; while ! "$@" >/dev/null 2>&1 && [ $i -lt "$n" ]; do sleep 0.1; i=$((i + 1)); done
	"$@" >/dev/null 2>&1
}
# last_rows FILE: each connection's last smcss row in FILE (by its addresses).
last_rows() {
	awk '{ last[$4 " " $5] = $0 } END { for (c in last) print last[c] }' "$1"
}
# rows_until FILE PORT: the smcss -a rows of connections to or from PORT,
# taken each second until FILE is not empty (at most 540 s: connections may
# be short), each connection's last row in /tmp/ss.txt.
rows_until() {
	: > /tmp/ss.rows
	i=0; while ! test -s "$1" && [ $i -lt "$(slow 540)" ]; do
		smcss -a 2>&1 | grep "^ACTIVE .*:$2 " >> /tmp/ss.rows
		sleep 1; i=$((i + 1))
	done
	last_rows /tmp/ss.rows > /tmp/ss.txt
}
# proc_calls NAME: where each thread of each NAME process is (its system
# call's number and arguments, /proc/PID/task/TID/syscall), for a failure.
proc_calls() {
	for p in $(pidof "$1"); do
		for t in /proc/$p/task/*; do
			echo "  > $1 $p thread ${t##*/}: $(cat $t/syscall 2>&1) ($(cat $t/wchan 2>&1), $(sed -n 's/^State:\t//p' $t/status 2>&1))"
			sed 's/^/  >   /' $t/stack 2>/dev/null
		done
	done
}
# stuck_echo PROG PORT: for an echo that did not finish, where PROG's
# threads are, the TCP sockets on PORT with their queues (/proc/net/tcp,
# hex: local and remote address, state, tx_queue:rx_queue), and the end
# of this VM's daemon's log.
stuck_echo() {
	echo "INFO $SCEN: $1 did not finish"
	proc_calls "$1"
	hex=$(printf ':%04X ' "$2")
	grep -h "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null | sed 's/^/  > tcp: /'
	tail -20 /tmp/softd.log 2>/dev/null | sed 's/^/  > softd: /'
}
# stuck_watch SECONDS WHAT: if this script has not removed /tmp/watch.WHAT
# within SECONDS, every task asleep in the kernel (state D) with its
# stack, for a step that hung (the watch runs in the background).
stuck_watch() {
	touch "/tmp/watch.$2"
	(
		sleep "$1"
		[ -e "/tmp/watch.$2" ] || exit 0
		echo "INFO $SCEN: $2 still under way after $1 s; tasks in the kernel:"
		for t in /proc/[0-9]*/task/[0-9]*; do
			st=$(sed -n 's/^State:\t\(.\).*/\1/p' "$t/status" 2>/dev/null)
			[ "$st" = D ] || continue
			echo "  > $(cat "$t/comm" 2>/dev/null) ${t#/proc/}: $(cat "$t/wchan" 2>/dev/null)"
			sed 's/^/  >   /' "$t/stack" 2>/dev/null
		done
		dmesg | tail -40 | sed 's/^/  > dmesg: /'
	) &
}
# wait_downed PID FILE LAST PROG IFACE...: waits for PROG (process PID), which
# ran while the interfaces IFACE went down, until FILE says LAST (its
# result) or it ends, then brings IFACE up again and waits for its end;
# its exit status.  A program's exit destroys its queue pairs, and rxe's
# destroy of each waits up to 50 s for its packets that a downed virtio
# interface still holds (doc/kernels.md): the interfaces come back first,
# as that wait is the kernel's, not what these scenarios test.  Where
# PROG's threads are if it does not end.
wait_downed() {
	wpid=$1 wfile=$2 wlast=$3 wprog=$4; shift 4
	# however long its bytes take (the host's timeout bounds it); kill -0 in
	# this shell, which reaped an ended child that another's would find a zombie
	while ! grep -q "$wlast" "$wfile" && kill -0 "$wpid" 2>/dev/null; do sleep 0.2; done
	for i in "$@"; do ip link set "$i" up; done
	if ! wait_for 600 eval "! kill -0 $wpid"; then
		echo "INFO $SCEN: $wprog still running 60 s after its interfaces came back"
		proc_calls "$wprog"
		dmesg | tail -20 | sed 's/^/  > dmesg: /'
	fi
	wait "$wpid"
}
# sum_receive PORT SUMS (server): socat under smc_run takes a stream on
# PORT; the sha256 of what came goes to the client's SUMS (plain TCP).
sum_receive() {
	(smc_run socat -u TCP-LISTEN:$1,reuseaddr STDOUT 2>/tmp/socat.err | sha256sum > /tmp/got.sum) &
	wait_for 6000 test -s /tmp/got.sum
	cut -d' ' -f1 /tmp/got.sum > /tmp/sum
	i=0; while ! nc "$VMPEER" "$2" < /tmp/sum && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
}
# sum_send PORT SUMS MIB (client): MIB MiB of random bytes to the server's
# PORT by socat under smc_run, in the background: their sha256 in
# /tmp/sent.sum, socat's exit in /tmp/sent.rc, the server's sum from SUMS
# in /tmp/peer.sum (its listener NCPID); sum_check checks them once
# /tmp/sent.rc is there.
sum_send() {
	nc -l -p "$2" > /tmp/peer.sum &
	NCPID=$!
	rm -f /tmp/fifo
	mkfifo /tmp/fifo
	sha256sum < /tmp/fifo > /tmp/sent.sum &
	(dd if=/dev/urandom bs=1048576 count="$3" 2>/dev/null | tee /tmp/fifo |
		smc_run socat -u STDIN TCP:$VMPEER:$1,retry=100,interval=0.2 2>/tmp/socat.err
		echo "rc=$?" > /tmp/sent.rc) &
}
sum_check() {
	grepcheck socat-exit '^rc=0$' /tmp/sent.rc
	wait_for 600 test -s /tmp/peer.sum
	wait $NCPID
	ok bytes-intact grep -qx "$(cut -d' ' -f1 /tmp/sent.sum)" /tmp/peer.sum
}
