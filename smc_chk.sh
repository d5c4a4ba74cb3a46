#!/bin/bash
#
# smc_chk - check the SMC setup of this host
#
# Command line compatible with smc_chk of IBM smc-tools (s390 only upstream);
# this one runs on every architecture and on either backend (kernel or the
# soft backend smc_softd).  Modes:
#   -i IFACE      print the interface's PNET ID
#   -s [IFACE..]  static analysis: PNET ID, SMC-D/SMC-R devices, EIDs, verdict
#   -l [IFACE..]  live test: echo server and client through smc_run; the mode
#                 of the connection (SMC-D, SMC-R, TCP and the reason) is read
#                 from smcss
#   -C IP         live test against an echo server started with smc_chk -S,
#                 then the replay check of -r on the same port (a finding only)
#   -S            start the echo server
#   -r IP         replay check: does IP's port echo a TCP option it cannot
#                 know in its SYN-ACK?  Such a peer or middlebox makes a plain
#                 TCP peer look SMC-capable (see replay_check)
# On the soft backend the live test's connection is paired when it is
# established, as with the kernel's SMC (smc_run(8)).

VERSION="@VERSION@"
SELF_DIR="$(cd "$(dirname "$0")" 2>/dev/null && pwd)"

usage() {
	echo
	echo "Usage: smc_chk [OPTIONS] -C <IP>"
	echo "       smc_chk [OPTIONS] -S"
	echo "       smc_chk [OPTIONS] -r <IP>"
	echo "       smc_chk -i <iface>"
	echo
	echo "Check SMC setup"
	echo
	echo "   -C, --connect <IP>           connect to specified IP"
	echo "   -d, --debug                  show debug messages"
	echo "   -h, --help                   display this message"
	echo "   -i, --pnetid <IFACE>         print PNET ID and exit"
	echo "   -l, --live-test              live test on the interfaces given"
	echo "   -p, --port <PORT>            use the next free port starting"
	echo "                                with PORT (default: 37373)"
	echo "   -r, --replay-check <IP>      check whether IP's port echoes unknown"
	echo "                                TCP options (needs CAP_NET_RAW)"
	echo "   -s, --static-analysis        static analysis of the interfaces given"
	echo "   -S, --server                 start server only"
	echo "   -v, --version                display version info"
	echo "   -6, --ipv6                   IP address is IPv6"
	echo
}

# The connection whose peer is $1 (ip:port, or [ip6]:port) in `smcss -j`:
# prints "mode", then "client: code text" and "server: code text" lines for
# a fallback; "INIT" while its handshake runs (the soft backend asking the
# peer host's daemon); nothing when smcss does not list it.  The reason texts come from
# the tools' one table (lib/names.c), through smcss.
smcss_result() {
	tool smcss -j 2>/dev/null | python3 -c '
import json, sys
want = sys.argv[1]
try:
    socks = json.load(sys.stdin)["sockets"]
except Exception:
    sys.exit(0)
for s in socks:
    addr = s.get("peer_address", "")
    peer = ("[%s]" % addr if ":" in addr else addr) + ":%s" % s.get("peer_port", "")
    if peer != want and "%s:%s" % (addr, s.get("peer_port", "")) != want:
        continue
    if s.get("state", "").strip() == "INIT":
        print("INIT")
        break
    print(s["mode"])
    if s["mode"] == "TCP":
        print("client: %s %s" % (s.get("fallback_reason_hex", ""),
              s.get("fallback_reason_text", "(Unknown error code)")))
        if s.get("peer_diagnosis"):
            print("server: 0x%08x %s" % (s["peer_diagnosis"],
                  s.get("peer_diagnosis_text", "(Unknown error code)")))
    break
' "$1"
}

debug=0
dbg() {
	[ "$debug" -gt 0 ] && echo "[DEBUG] $*"
	return 0
}

# Path of a tool: PATH first, then next to smc_chk itself.
find_tool() {
	local p
	if p=$(command -v "$1" 2>/dev/null) && [ -n "$p" ]; then
		echo "$p"
	elif [ -x "$SELF_DIR/$1" ]; then
		echo "$SELF_DIR/$1"
	else
		return 1
	fi
}

tool() {
	local t="$1" p
	shift
	p=$(find_tool "$t") || { echo "$t: command not found" >&2; return 127; }
	"$p" "$@"
}

TMPFILES=()
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	PIDS=()
	[ ${#TMPFILES[@]} -gt 0 ] && rm -rf "${TMPFILES[@]}"
	TMPFILES=()
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM

mode=
mode_name() {
	case "$1" in
	STATIC) echo "'-s/--static-analysis'" ;;
	LIVE) echo "'-l/--live-test'" ;;
	PNETID) echo "'-i/--pnetid'" ;;
	CONNECT) echo "'-C/--connect'" ;;
	SERVER) echo "'-S/--server'" ;;
	REPLAY) echo "'-r/--replay-check'" ;;
	esac
}
set_mode() {
	if [ -z "$mode" ] || [ "$mode" = "$1" ]; then
		mode="$1"
	elif [ "$mode" = LIVE ] && [ "$1" = STATIC ]; then
		mode=ALL
	elif [ "$mode" = ALL ] && { [ "$1" = STATIC ] || [ "$1" = LIVE ]; }; then
		:
	else
		echo "Error: Cannot combine options $(mode_name "$mode") and $(mode_name "$1")"
		exit 1
	fi
}

port=37373
ipv6=0
target=
pnet_if=
args=$(getopt -u -o C:dhi:lp:r:sSv6 -l connect:,debug,help,port:,pnetid:,replay-check:,server,static-analysis,live-test,version,ipv6 -n smc_chk -- "$@") || exit 2
set -- $args
while [ $# -gt 0 ]; do
	case "$1" in
	-C|--connect) set_mode CONNECT; target="$2"; shift ;;
	-d|--debug) debug=$((debug + 1)) ;;
	-h|--help) usage; exit 0 ;;
	-i|--pnetid) set_mode PNETID; pnet_if="$2"; shift ;;
	-l|--live-test) set_mode LIVE ;;
	-p|--port) port="$2"; shift ;;
	-r|--replay-check) set_mode REPLAY; target="$2"; shift ;;
	-s|--static-analysis) set_mode STATIC ;;
	-S|--server) set_mode SERVER ;;
	-v|--version) echo "smc_chk utility, smc-tools-$VERSION"; exit 0 ;;
	-6|--ipv6) ipv6=1 ;;
	--) shift; break ;;
	esac
	shift
done
IFACES=("$@")

if [ -z "$mode" ]; then
	usage
	exit 0
fi
if ! [[ $port =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65534 ]; then
	echo "Error: Invalid port '$port'"
	exit 1
fi

# ---- interfaces ---------------------------------------------------------

# Real name of an interface or alternative name; fails when there is none.
real_ifname() {
	local n
	n=$(ip -o link show dev "$1" 2>/dev/null | awk -F': ' 'NR==1 {sub(/@.*/, "", $2); print $2}')
	[ -n "$n" ] || return 1
	echo "$n"
}

if_up() {
	ip -o link show dev "$1" 2>/dev/null | grep -q '[<,]UP[,>]'
}

up_ifaces() {
	ip -o link show up 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}'
}

# PNET ID of an interface: smc_rnics, s390 CCW util_string, software table
# (the last with a trailing '*').
pnetid_of() {
	local ifc="$1" id chpid portno us
	if find_tool smc_rnics >/dev/null; then
		id=$(tool smc_rnics 2>/dev/null | awk -v i="$ifc" 'NR > 2 && $NF == i && NF >= 10 { print $9; exit }')
		if [ -n "$id" ] && [ "$id" != "$ifc" ]; then
			echo "$id"
			return 0
		fi
	fi
	if [ -r "/sys/class/net/$ifc/device/chpid" ] && [ -r "/sys/class/net/$ifc/device/portno" ]; then
		chpid=$(tr 'A-F' 'a-f' < "/sys/class/net/$ifc/device/chpid")
		portno=$(cat "/sys/class/net/$ifc/device/portno")
		us="/sys/devices/css0/chp0.$chpid/util_string"
		if [ -r "$us" ]; then
			id=$(iconv -f IBM-1047 -t ASCII "$us" 2>/dev/null | tr -d '\0' |
			     cut -c $((portno * 16 + 1))-$((portno * 16 + 16)) | sed 's/ *$//')
			if [ -n "$id" ]; then
				echo "$id"
				return 0
			fi
		fi
	fi
	id=$(tool smc_pnet -s 2>/dev/null | awk -v i="$ifc" '$2 == i { print $1; exit }')
	if [ -n "$id" ]; then
		echo "$id*"
		return 0
	fi
	return 1
}

# ---- backend ------------------------------------------------------------

kernel_smc() {
	python3 -c 'import socket,sys
try: socket.socket(43, socket.SOCK_STREAM, 0).close()
except OSError: sys.exit(1)' 2>/dev/null
}

backend_name() {
	case "${SMC_BACKEND:-auto}" in
	kernel) echo kernel ;;
	soft) echo soft ;;
	*) if kernel_smc; then echo kernel
	   elif tool smcd info >/dev/null 2>&1; then echo soft
	   else echo none; fi ;;
	esac
}

# ---- known kernel problems ----------------------------------------------

SYSFS=${SMC_SYSFS_ROOT:-/sys}

# The soft-RoCE devices (rxe) of this host, comma-separated: their device
# is virtual (a RoCE NIC's is a PCI function) and a channel adapter (siw,
# also virtual, is an RNIC).
rxe_devices() {
	local d list=
	for d in "$SYSFS"/class/infiniband/*; do
		[ -e "$d" ] || continue
		case $(readlink -f "$d") in
		*/devices/virtual/*)
			case $(cat "$d/node_type" 2>/dev/null) in
			1:*) list="${list:+$list, }${d##*/}" ;;
			esac
			;;
		esac
	done
	echo "$list"
}

# Lines naming what the kernel matrix found broken in the running kernel
# (doc/kernels.md), where it concerns this host.
known_problems() {
	local series rxe
	[ "$(backend_name)" = kernel ] || return 0
	series=$(uname -r | cut -d. -f1,2)
	case $series in
	6.1)
		rxe=$(rxe_devices)
		[ -n "$rxe" ] || return 0
		printf '     %-20s%s\n' "Known problem:" "SMC-Rv2 over $rxe hangs in Linux $series (smc_wr_drain_cq)"
		printf '     %-20s%s\n' "" "use Linux 6.12 or later, or SMC_BACKEND=soft (smc_softd)"
		;;
	esac
}

# ---- static analysis ----------------------------------------------------

# Lines "TYPE|NAME|PNETID|NETDEV" of the devices smcd/smcr list.
device_list() {
	{ tool smcd -j device 2>/dev/null; echo; tool smcr -j device 2>/dev/null; echo; } | python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        doc = json.loads(line)
    except ValueError:
        continue
    for d in doc.get("devices", []):
        # absent values are null or missing; fid is a number (older: a hex string)
        v = lambda k: "" if d.get(k) is None else str(d[k])
        fid = "%04x" % d["fid"] if isinstance(d.get("fid"), int) else v("fid")
        if "ib_dev" in d:
            print("R|%s/%s|%s|%s" % (v("ib_dev"), v("ib_port"), v("pnet_id").strip(), v("net_dev")))
        else:
            print("D|FID %s (%s)|%s|" % (fid, v("pci_id"), v("pnet_id").strip()))
'
}

static_analysis() {
	local ifc="$1" pnet bare devs smcd_v1='' smcd_v2='' smcr='' info seid ueids first=1 u t name dp nd
	echo "  Static Analysis"
	pnet=$(pnetid_of "$ifc")
	bare="${pnet%\*}"
	devs=$(device_list)
	dbg "devices: $devs"
	while IFS="|" read -r t name dp nd; do
		[ -n "$t" ] || continue
		if [ "$t" = D ]; then
			if [ -z "$dp" ]; then
				smcd_v2="${smcd_v2:+$smcd_v2, }$name"
			elif [ "$dp" = "$bare" ]; then
				smcd_v1="${smcd_v1:+$smcd_v1, }$name"
				smcd_v2="${smcd_v2:+$smcd_v2, }$name"
			fi
		else
			if [ "$nd" = "$ifc" ] || { [ -n "$dp" ] && [ "$dp" = "$bare" ]; }; then
				smcr="${smcr:+$smcr, }$name"
			fi
		fi
	done <<< "$devs"
	printf '     %-20s%s\n' "Backend:" "$(backend_name)"
	printf '     %-20s%s\n' "PNET ID:" "${pnet:-n/a}"
	info=$(tool smcd info 2>/dev/null)
	if [ -n "$smcd_v1" ]; then
		printf '     %-20s%s\n' "SMC-Dv1:" "$smcd_v1"
	fi
	if [ -n "$smcd_v2" ]; then
		printf '     %-20s%s\n' "SMC-Dv2:" "$smcd_v2"
	fi
	[ -n "$smcd_v1$smcd_v2" ] || printf '     %-20s%s\n' "SMC-D:" "no usable ISM device"
	printf '     %-20s%s\n' "SMC-R:" "${smcr:-no usable RoCE device}"
	seid=$(tool smcd seid show 2>/dev/null | awk '/\[enabled\]/ { print $1; exit }')
	printf '     %-20s%s\n' "Advertising SEID:" "${seid:-n/a}"
	ueids=$(tool smcd ueid show 2>/dev/null)
	if [ -z "$ueids" ]; then
		printf '     %-20s%s\n' "Advertising UEIDs:" "n/a"
	else
		while read -r u; do
			if [ "$first" -eq 1 ]; then
				printf '     %-20s%s\n' "Advertising UEIDs:" "$u"
				first=0
			else
				printf '     %-20s%s\n' "" "$u"
			fi
		done <<< "$ueids"
	fi
	if [ -n "$smcd_v1$smcd_v2" ] || [ -n "$smcr" ]; then
		local what=
		[ -n "$smcd_v1$smcd_v2" ] && what="SMC-D"
		[ -n "$smcr" ] && what="${what:+$what and }SMC-R"
		echo "     Verdict:            $what possible on $ifc"
	else
		echo "     Verdict:            SMC not possible on $ifc (no usable device)"
	fi
	known_problems
	dbg "info: $info"
	echo
}

# ---- live test ----------------------------------------------------------

SRV_PY='import socket, sys, threading
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
def echo(c):
    with c:
        while True:
            d = c.recv(4096)
            if not d:
                return
            c.sendall(d)
while True:
    c, _ = s.accept()
    threading.Thread(target=echo, args=(c,), daemon=True).start()
'
CLT_PY='import socket, sys, time
try:
    c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
    c.sendall(b"smc_chk")
    if c.recv(64) != b"smc_chk":
        sys.exit(1)
except OSError:
    sys.exit(1)
open(sys.argv[3], "w").write("ok\n")
time.sleep(float(sys.argv[4]))
c.close()
'

need_python() {
	if ! command -v python3 >/dev/null 2>&1; then
		echo "Error: python3 is not available"
		exit 1
	fi
}

# True when $1 is an IPv4 address in any form getaddrinfo() takes (inet_aton).
ipv4_literal() {
	python3 -c 'import socket, sys; socket.inet_aton(sys.argv[1])' "$1" 2>/dev/null
}

# Next port from $1 on that no TCP socket uses.
free_port() {
	local p="$1"
	while [ "$p" -le 65535 ]; do
		if [ -z "$(ss -tanH "( sport = :$p or dport = :$p )" 2>/dev/null)" ]; then
			echo "$p"
			return 0
		fi
		p=$((p + 1))
	done
	return 1
}

# start_server IP PORT: echo server through smc_run, waits until it listens.
start_server() {
	local f pid i run
	f=$(mktemp "${TMPDIR:-/tmp}/echo-srv.XXXXXX") || return 1
	TMPFILES+=("$f")
	printf '%s' "$SRV_PY" > "$f"
	run=$(find_tool smc_run) || { echo "smc_run: command not found" >&2; return 1; }
	"$run" python3 "$f" "$1" "$2" &
	pid=$!
	PIDS+=("$pid")
	SRV_PID=$pid
	for i in $(seq 100); do
		if [ -n "$(ss -tlnH "( sport = :$2 )" 2>/dev/null)" ]; then
			dbg "server listening on $1 port $2 (pid $pid)"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# live_result IP PORT: client through smc_run, result from smcss; the
# result's lines without the blank line that ends them.
live_result() {
	local ip="$1" p="$2" f ok pid res i m addr run
	f=$(mktemp "${TMPDIR:-/tmp}/echo-clt.XXXXXX") || return 1
	ok="$f.ok"
	TMPFILES+=("$f" "$ok")
	printf '%s' "$CLT_PY" > "$f"
	if [[ $ip == *:* ]]; then addr="[$ip]:$p"; else addr="$ip:$p"; fi
	run=$(find_tool smc_run) || { echo "     Failed, smc_run not found"; return 0; }
	"$run" python3 "$f" "$ip" "$p" "$ok" 3 &
	pid=$!
	PIDS+=("$pid")
	res=
	for i in $(seq 100); do
		res=$(smcss_result "$addr")
		[ -n "$res" ] && [ "$res" != INIT ] && break
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		[ -s "$ok" ] && [ "$i" -ge 10 ] && [ "$res" != INIT ] && break
		sleep 0.1
	done
	wait "$pid" 2>/dev/null
	dbg "smcss result: '$res'"
	if [ -z "$res" ]; then
		if [ -s "$ok" ]; then
			echo "     Failed  (TCP fallback), the connection is not an SMC socket (not listed by smcss)"
		else
			echo "     Failed, no connection"
		fi
		return 0
	fi
	m="${res%%$'\n'*}"
	case "$m" in
	INIT)
		echo "     Failed  (TCP fallback), the SMC handshake had not ended when the client closed"
		;;
	TCP)
		echo "     Failed  (TCP fallback), reasons:"
		printf '%s\n' "$res" | sed -n 's/^client: /          Client: /p; s/^server: /          Server: /p'
		;;
	SMC*)
		echo "     Success, using ${m:0:3}-${m:3:1}"
		;;
	*)
		echo "     Failed, unexpected mode '$m'"
		;;
	esac
}

live_test() {
	live_result "$@"
	echo
}

# First global address of an interface (IPv4 before IPv6), or nothing.
if_addr() {
	local a
	a=$(ip -o -4 addr show dev "$1" 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	[ -n "$a" ] || a=$(ip -o -6 addr show dev "$1" scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	echo "$a"
}

if_live() {
	local ifc="$1" ip p
	echo "  Live test (SMC-D and SMC-R)"
	ip=$(if_addr "$ifc")
	if [ -z "$ip" ]; then
		echo "     No usable IP address configured, skipping"
		echo
		return 0
	fi
	p=$(free_port "$port") || { echo "     Failed, no free port"; echo; return 0; }
	if ! start_server "$ip" "$p"; then
		echo "     Failed, cannot start the echo server on $ip port $p"
		echo
		cleanup
		return 0
	fi
	dbg "testing $ip port $p"
	live_test "$ip" "$p"
	cleanup
}

# ---- replay check -------------------------------------------------------

# A peer, or a box in the path, that echoes the SYN's TCP options in its
# SYN-ACK echoes SMC's option too (kind 254, magic E2 D4 C3 D9): a plain TCP
# server behind it looks SMC-capable, and the client's SMC sends its CLC
# proposal into the application's byte stream (curl fails, ping works).
# The probe tells such a peer from a genuine SMC peer and from a plain one
# without disturbing either: one SYN from a raw socket with the options Linux
# sends and an experimental option (kind 254, RFC 6994) whose magic is random
# and not SMC's, so that no TCP stack echoes it but one that replays what it
# got.  A genuine SMC server answers SMC's option only, and only to a SYN that
# has it; this SYN has not.  The SYN's source port is held by a bound TCP
# socket that never connects, so this host's kernel answers the SYN-ACK with
# an RST and the peer drops the half-open connection: nothing reaches its
# application.  An RST may come from the peer's kernel while a box in the path
# answers too, so an RST ends the wait only 0.2 s later.
#
# Output: "debug: ..." lines, then one verdict line: echo, plain, reset,
# silent, noperm, or "unreach TEXT" / "error TEXT".
REPLAY_WAIT=3
REPLAY_PY='import os, select, socket, struct, sys, time
SMC_MAGIC = bytes((0xE2, 0xD4, 0xC3, 0xD9))

def say(*words):
    print(*words, flush=True)

def out(verdict, detail=""):
    say(verdict, detail) if detail else say(verdict)
    sys.exit(0)

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF

def options(seg):
    """(kind, data) of each option of a TCP header; None when malformed."""
    res, i, end = [], 20, (seg[12] >> 4) * 4
    if end < 20 or end > len(seg):
        return None
    while i < end and seg[i] != 0:
        if seg[i] == 1:
            i += 1
            continue
        if i + 1 >= end or seg[i + 1] < 2 or i + seg[i + 1] > end:
            return None
        res.append((seg[i], bytes(seg[i + 2:i + seg[i + 1]])))
        i += seg[i + 1]
    return res

def probe(dst, port, wait):
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    try:
        sa = socket.getaddrinfo(dst, port, fam, socket.SOCK_STREAM)[0][4]
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.connect(sa)
        src = u.getsockname()[0]
        u.close()
    except OSError as e:
        out("unreach", os.strerror(e.errno) if e.errno else str(e))
    try:
        raw = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_TCP)
    except PermissionError:
        out("noperm")
    # connected: the segments from the destination only, and the ICMP errors
    # about packets to it, which come back as the errors of recvfrom()
    if fam == socket.AF_INET:
        raw.setsockopt(socket.IPPROTO_IP, 11, 1)        # IP_RECVERR
    else:
        raw.setsockopt(socket.IPPROTO_IPV6, 25, 1)      # IPV6_RECVERR
    raw.connect((sa[0], 0) if fam == socket.AF_INET else (sa[0], 0, 0, sa[3]))
    hold = socket.socket(fam, socket.SOCK_STREAM)
    hold.bind((src, 0))
    sport = hold.getsockname()[1]
    magic = os.urandom(4)
    while magic == SMC_MAGIC:
        magic = os.urandom(4)
    isn, tsval = struct.unpack("!II", os.urandom(8))
    opts = (struct.pack("!BBH", 2, 4, 1460 if fam == socket.AF_INET else 1440) +
            bytes((4, 2)) + struct.pack("!BBII", 8, 10, tsval, 0) +
            bytes((1, 3, 3, 7)) + bytes((1, 1, 254, 6)) + magic)
    a_src = socket.inet_pton(fam, src.split("%")[0])
    a_dst = socket.inet_pton(fam, sa[0].split("%")[0])
    hdr = struct.pack("!HHIIBBHHH", sport, port, isn, 0,
                      (20 + len(opts)) // 4 << 4, 0x02, 64240, 0, 0) + opts
    if fam == socket.AF_INET:
        pseudo = a_src + a_dst + struct.pack("!BBH", 0, 6, len(hdr))
    else:
        pseudo = a_src + a_dst + struct.pack("!IxxxB", len(hdr), 6)
    seg = hdr[:16] + struct.pack("!H", csum(pseudo + hdr)) + hdr[18:]
    say("debug: SYN from %s port %d, option 254 magic %s" % (src, sport, magic.hex()))
    try:
        raw.send(seg)
    except OSError as e:
        out("unreach", os.strerror(e.errno))
    deadline = time.monotonic() + wait
    reset = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            out("reset" if reset else "silent")
        if not select.select([raw], [], [], left)[0]:
            continue
        try:
            pkt, frm = raw.recvfrom(65535)
        except OSError as e:
            if reset:
                continue
            out("unreach", os.strerror(e.errno))
        if fam == socket.AF_INET:       # IPv4 raw sockets read the IP header too
            if len(pkt) < 20 or pkt[12:16] != a_dst:
                continue
            pkt = pkt[(pkt[0] & 15) * 4:]
        elif socket.inet_pton(fam, frm[0].split("%")[0]) != a_dst:
            continue
        if len(pkt) < 20:
            continue
        p_sport, p_dport, _, ack, _, flags = struct.unpack("!HHIIBB", pkt[:14])
        if p_sport != port or p_dport != sport or ack != (isn + 1) & 0xFFFFFFFF:
            continue
        if flags & 0x04:
            reset = True
            deadline = min(deadline, time.monotonic() + 0.2)
            continue
        if flags & 0x12 != 0x12:
            continue
        got = options(pkt)
        if got is None:
            say("debug: SYN-ACK with malformed options")
            out("plain")
        say("debug: SYN-ACK options %s" % " ".join("%d:%s" % (k, d.hex()) for k, d in got))
        out("echo" if (254, magic) in got else "plain")

try:
    probe(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
except Exception as e:
    out("error", str(e))
'

# replay_probe IP PORT: the probe's verdict in replay_verdict, its text in
# replay_detail; its debug lines as [DEBUG].
replay_probe() {
	local line
	replay_verdict=error
	replay_detail="python3 gave no verdict"
	while IFS= read -r line; do
		case $line in
		"debug: "*) dbg "replay check: ${line#debug: }" ;;
		?*) replay_verdict=${line%% *}
		    replay_detail=${line#"$replay_verdict"}
		    replay_detail=${replay_detail# } ;;
		esac
	done < <(python3 -c "$REPLAY_PY" "$1" "$2" "$REPLAY_WAIT")
}

# How to keep DEST on TCP today.  Offload rules, when they come, add their
# per-destination rule here.
keep_on_tcp() {
	echo "Keep $1 on TCP: run the programs that connect to it without smc_run, or under smc_run with SMC_BACKEND=soft (the soft backend adds no TCP option); no per-destination rule yet, see smc_chk(8)"
}

# replay_text IP PORT: the line for the probe's verdict (two for an echo).
replay_text() {
	local ip="$1" p="$2"
	case $replay_verdict in
	echo)
		echo "Warning: $ip port $p echoes unknown TCP options in its SYN-ACK (a replaying peer or middlebox): SMC would send a CLC proposal into a plain TCP connection"
		keep_on_tcp "$ip" ;;
	plain) echo "$ip port $p answers without echoing unknown TCP options: no replaying peer or middlebox seen" ;;
	reset) echo "$ip port $p resets the probe (nothing listens there): the replay check cannot tell" ;;
	silent) echo "$ip port $p does not answer within $REPLAY_WAIT seconds: the replay check cannot tell" ;;
	unreach) echo "$ip port $p is unreachable ($replay_detail): the replay check cannot tell" ;;
	noperm) echo "The replay check needs CAP_NET_RAW (its SYN goes out through a raw socket): skipped" ;;
	*) echo "The replay check failed: $replay_detail" ;;
	esac
}

# After -C's live test: the finding only (indented as the live test's
# lines), so that the output stays as it was when there is none.
replay_note() {
	replay_probe "$1" "$2"
	if [ "$replay_verdict" = echo ]; then
		replay_text "$1" "$2" | sed 's/^/     /'
	else
		dbg "replay check: $(replay_text "$1" "$2")"
	fi
}

# destination NAME: the address of -C and -r in ip (IPv6 with -6), or an
# error and exit status 1.
destination() {
	local target="$1"
	if [ "$ipv6" -eq 0 ]; then
		ip=$(getent ahosts "$target" 2>/dev/null | awk 'NR == 1 { print $1 }')
	elif ipv4_literal "$target"; then
		echo "Error: '$target' is an IPv4 address, but -6/--ipv6 asks for IPv6"
		exit 1
	else
		# a name's IPv6 addresses only, not IPv4 ones mapped (::ffff:a.b.c.d)
		ip=$(getent ahostsv6 "$target" 2>/dev/null | awk '$1 !~ /^::ffff:/ { print $1; exit }')
		if [ -z "$ip" ] && getent ahosts "$target" >/dev/null 2>&1; then
			echo "Error: '$target' has no IPv6 address (-6/--ipv6)"
			exit 1
		fi
	fi
	if [ -z "$ip" ]; then
		echo "Error: Unknown destination '$target'"
		exit 1
	fi
	if ! ip route get "$ip" >/dev/null 2>&1; then
		echo "Error: No route to host: $ip"
		exit 1
	fi
}

# ---- modes --------------------------------------------------------------

case "$mode" in
PNETID)
	if [ ${#IFACES[@]} -gt 0 ]; then
		echo "Error: Option -P/--print-PNETID takes no extra targets"
		exit 1
	fi
	if ! ifc=$(real_ifname "$pnet_if"); then
		echo "Error: Interface $pnet_if does not exist"
		exit 1
	fi
	pnetid_of "$ifc"
	exit 0
	;;
CONNECT)
	need_python
	destination "$target"
	echo "Test with target IP $ip and port $port"
	live_result "$ip" "$port"
	replay_note "$ip" "$port"
	echo
	exit 0
	;;
REPLAY)
	need_python
	destination "$target"
	replay_probe "$ip" "$port"
	replay_text "$ip" "$port"
	case $replay_verdict in
	plain) exit 0 ;;
	echo) exit 3 ;;
	*) exit 4 ;;
	esac
	;;
SERVER)
	need_python
	p=$(free_port "$port") || { echo "Error: No free port"; exit 1; }
	if [ "$ipv6" -eq 1 ]; then bind="::"; else bind="0.0.0.0"; fi
	if ! start_server "$bind" "$p"; then
		echo "Error: Cannot start the server on port $p"
		exit 1
	fi
	echo "Server started on port $p"
	wait "$SRV_PID"
	exit 0
	;;
esac

# STATIC, LIVE, ALL: the interfaces given, or all up ones.
targets=()
if [ ${#IFACES[@]} -gt 0 ]; then
	for i in "${IFACES[@]}"; do
		if ! r=$(real_ifname "$i"); then
			echo "Error: Interface $i does not exist"
			exit 1
		fi
		if ! if_up "$r"; then
			echo "Error: $r is not an active interface"
			exit 2
		fi
		targets+=("$r")
	done
else
	mapfile -t targets < <(up_ifaces)
fi
[ "$mode" = STATIC ] || need_python
bold=$(tput bold 2>/dev/null)
normal=$(tput sgr0 2>/dev/null)
for ifc in "${targets[@]}"; do
	echo "Checking active link:    $bold$ifc$normal"
	[ "$mode" = LIVE ] || static_analysis "$ifc"
	[ "$mode" = STATIC ] || if_live "$ifc"
done
exit 0
