#!/bin/bash
#
# smc_dbg - collect SMC debug information for a support case
#
# Compatible with smc_dbg of IBM smc-tools (options -h, -t/--tgz, -v), with
# more sections, both backends, and a bundle that never stops at a failing
# command: each section records the failing command, its exit status and its
# stderr, and the next section runs.
#
# Without -t every section goes to stdout after a header line
#   === <name> ===
# where <name> is the section's file name in the bundle without ".txt".
# With -t each section is written to <name>.txt in a directory
# smc_dbg-<host>-<YYYYmmdd-HHMMSS>, packed into a .tgz of the same name in
# the current directory; the path of the .tgz is printed.
#
# SMC_PROCFS_ROOT and SMC_SYSFS_ROOT (default /proc and /sys) say where the
# kernel's files are read, so that a copied tree (or a test's fixture) can
# stand in for them.

VERSION="@VERSION@"
SELF_DIR="$(cd "$(dirname "$0")" 2>/dev/null && pwd)"
PROC="${SMC_PROCFS_ROOT:-/proc}"
SYS="${SMC_SYSFS_ROOT:-/sys}"

# The kernel's net.smc sysctls, as far as this script knows them: those a
# kernel lacks are named in the bundle (they tell its version apart).
SMC_SYSCTLS="autocorking_size smcr_buf_type smcr_testlink_time wmem rmem
smcr_max_links_per_lgr smcr_max_conns_per_lgr limit_smc_hs smcr_max_send_wr
smcr_max_recv_wr hs_ctrl"

usage() {
	echo
	echo "Usage: smc_dbg [ OPTIONS ]"
	echo
	echo "Collect debug information"
	echo
	echo "   -h, --help           display this message"
	echo "   -t, --tgz            generate .tgz file"
	echo "   -v, --version        display version info"
	echo
}

# Path of a tool: PATH first, then next to smc_dbg itself.
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

tgz=0
args=$(getopt -u -o hvt -l help,version,tgz -n smc_dbg -- "$@") || { usage >&2; exit 1; }
set -- $args
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) usage; exit 0 ;;
	-v|--version) echo "smc_dbg utility, smc-tools-$VERSION"; exit 0 ;;
	-t|--tgz) tgz=1 ;;
	--) shift; break ;;
	esac
	shift
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/smc_dbg.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM
if [ "$tgz" -eq 1 ]; then
	BUNDLE="smc_dbg-$(uname -n)-$(date +%Y%m%d-%H%M%S)"
	OUTDIR="$WORK/$BUNDLE"
	mkdir -p "$OUTDIR" || exit 1
else
	OUTDIR="$WORK/out"
	mkdir -p "$OUTDIR"
fi
# Statistics are read against a cache of our own: the user's baseline
# (smcd/smcr stats reset) stays as it is.
export SMC_STATS_CACHE="$WORK/stats-cache"

# A section goes to descriptor 3: standard output itself, not reopened
# through /dev/stdout (a reopened file would be written at other offsets
# than the headers, and another user's pipe could not be reopened).
exec 3>&1

# section NAME: start a section (file NAME.txt, or a header on stdout).
section() {
	if [ "$tgz" -eq 1 ]; then
		exec 3> "$OUTDIR/$1.txt"
	else
		echo
		echo "=== $1 ==="
	fi
}

# say TEXT...: a line of the current section.
say() {
	printf '%s\n' "$*" >&3
}

# run TOOL ARGS...: run a command (a tool looked up by find_tool when it is
# one of ours) into the current section; a failure is reported with the
# command, its exit status and its stderr.
run() {
	local cmd="$1" path rc
	shift
	if ! path=$(find_tool "$cmd"); then
		say "--- $cmd $*: failed, exit status 127"
		say "--- stderr:"
		say "$cmd: command not found"
		return 0
	fi
	"$path" "$@" >&3 2> "$WORK/stderr" 3>&-
	rc=$?
	if [ "$rc" -ne 0 ]; then
		say "--- $cmd $*: failed, exit status $rc"
		if [ -s "$WORK/stderr" ]; then
			say "--- stderr:"
			cat "$WORK/stderr" >&3
		fi
	elif [ -s "$WORK/stderr" ]; then
		cat "$WORK/stderr" >&3
	fi
	return 0
}

# cmd_line TOOL ARGS...: "$ tool args" then run it.
cmd_line() {
	say "\$ $*"
	run "$@"
}

# True when this kernel offers AF_SMC (protocol family 43).
kernel_smc() {
	command -v python3 >/dev/null 2>&1 || return 2
	python3 -c 'import socket,sys
try: socket.socket(43, socket.SOCK_STREAM, 0).close()
except OSError: sys.exit(1)' 2>/dev/null
}

# "PID UID" of the process that answers on UNIX socket $1 (SO_PEERCRED).
socket_peer() {
	command -v python3 >/dev/null 2>&1 || return 1
	python3 -c 'import socket,struct,sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(2)
s.connect(sys.argv[1])
pid, uid, gid = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
print(pid, uid)' "$1" 2>/dev/null
}

# sysctls DIR: each file of the kernel's net.smc directory as "name = value",
# then the known ones this kernel lacks.
sysctls() {
	local f name v missing=''
	for f in "$1"/*; do
		[ -f "$f" ] || continue
		name=${f##*/}
		if v=$(cat -- "$f" 2> "$WORK/stderr"); then
			v=$(printf '%s' "$v" | tr '\t\n' '  ' | sed 's/ *$//')
			say "$name =${v:+ $v}"
		else
			say "$name: cannot be read: $(sed 's/^cat: .*: //' "$WORK/stderr")"
		fi
	done
	for name in $SMC_SYSCTLS; do
		[ -e "$1/$name" ] || missing="$missing $name"
	done
	[ -z "$missing" ] || say "not in this kernel:$missing"
}

# soft_settings SOCKET: the settings of the smc_softd answering there (its
# --settings with its own options) and the handshake limitation of this
# network namespace, as "name = value".
soft_settings() {
	local sock="$1" peer pid='' uid='' args=() sysfs='' hs bin
	if ! peer=$(socket_peer "$sock") || [ -z "$peer" ]; then
		say "daemon = none answers on $sock"
	else
		read -r pid uid <<< "$peer"
		say "daemon = pid $pid on $sock"
		if [ -r "/proc/$pid/cmdline" ] && mapfile -d '' args < "/proc/$pid/cmdline" &&
		   [ "${#args[@]}" -gt 0 ]; then
			say "command = ${args[*]}"
		fi
		if [ -r "/proc/$pid/environ" ]; then
			sysfs=$(tr '\0' '\n' < "/proc/$pid/environ" | sed -n 's/^SMC_SYSFS_ROOT=//p')
		fi
	fi
	if [ "${#args[@]}" -gt 0 ]; then
		# the daemon's own binary and options: what it runs with; only a
		# daemon the tools would trust (root's or ours: smc_softd(8)) has
		# its binary run, never another user's
		bin="/proc/$pid/exe"
		if [ "$uid" != 0 ] && [ "$uid" != "$(id -u)" ]; then
			say "(the daemon runs as uid $uid, neither root nor this user: the smc_softd found here, with its options)"
			bin=smc_softd
		elif [ ! -x "$bin" ]; then
			say "(the daemon's binary cannot be read: the smc_softd found here, with its options)"
			bin=smc_softd
		fi
		SMC_SYSFS_ROOT="$sysfs" run "$bin" --settings -s "$sock" "${args[@]:1}"
	else
		say "(the daemon's command line cannot be read: the defaults of the smc_softd found here)"
		run smc_softd --settings -s "$sock"
	fi
	# the handshake limitation is per network namespace: this one's
	if bin=$(find_tool smcd) && hs=$("$bin" hslimit show 2> "$WORK/stderr"); then
		case "$hs" in
		*": enabled") say "limit_smc_hs = 1" ;;
		*": disabled") say "limit_smc_hs = 0" ;;
		*) say "limit_smc_hs: smcd hslimit show printed: $hs" ;;
		esac
	else
		say "limit_smc_hs: smcd hslimit show failed: $(cat "$WORK/stderr" 2>/dev/null)"
	fi
}

# ---- sections -----------------------------------------------------------

section version
for t in smcss smc_dbg smc_pnet smc_rnics smc_chk smcd smcr smc_run smc_softd; do
	if [ "$t" = smc_dbg ]; then
		say "smc_dbg utility, smc-tools-$VERSION"
	elif p=$(find_tool "$t"); then
		# smcd/smcr -v print on stderr with status 255 (as upstream)
		"$p" -v >&3 2>&1 3>&-
	else
		say "$t: not installed"
	fi
done

section kernel
cmd_line uname -a
say
say "SMC/RDMA modules:"
if [ -r "$PROC/modules" ]; then
	mods=$(grep -E '^(smc|rdma|ib_|smc_)' "$PROC/modules" | awk '{print "  " $1 " " $2 " " $3 " " $4}')
	if [ -n "$mods" ]; then
		say "$mods"
	else
		say "  not loaded"
	fi
else
	say "  not loaded (no $PROC/modules: kernel without module support)"
fi
for m in smc smc_diag ism; do
	if [ -d "$SYS/module/$m" ]; then
		say "  $SYS/module/$m: present"
	fi
done

section backend
say "SMC_BACKEND=${SMC_BACKEND:-auto}"
say "SMC_SOFT_SOCKET=${SMC_SOFT_SOCKET:-(unset, default /run/smc_soft/control)}"
kernel_smc
case $? in
0) say "kernel AF_SMC: available" ; kernel=1 ;;
1) say "kernel AF_SMC: not available" ; kernel=0 ;;
*) say "kernel AF_SMC: unknown (python3 missing)" ; kernel=0 ;;
esac
sock="${SMC_SOFT_SOCKET:-/run/smc_soft/control}"
if [ -z "${SMC_SOFT_SOCKET:-}" ] && [ "$(id -u)" -ne 0 ] && [ -n "${XDG_RUNTIME_DIR:-}" ] &&
   [ ! -S /run/smc_soft/control ]; then
	sock="$XDG_RUNTIME_DIR/smc_soft/control"
fi
soft=0
case "${SMC_BACKEND:-auto}" in
soft) soft=1 ;;
kernel) soft=0 ;;
*) [ "$kernel" -eq 0 ] && [ -S "$sock" ] && soft=1 ;;
esac
if [ "$soft" -eq 1 ]; then
	say "backend in use: soft (smc_softd on $sock)"
	if [ -S "$sock" ]; then
		say "soft socket: $sock exists"
	else
		say "soft socket: $sock does not exist"
	fi
	cmd_line smcd device
	cmd_line smcr device
elif [ "$kernel" -eq 1 ]; then
	say "backend in use: kernel"
else
	say "backend in use: none found"
fi

section rnics
if find_tool smc_rnics >/dev/null; then
	cmd_line smc_rnics -a
else
	say "smc_rnics: not installed"
fi

section pnet_table
cmd_line smc_pnet -s

section smcss_all
cmd_line smcss -a -d
section smcss_smcd
cmd_line smcss -D
section smcss_smcr
cmd_line smcss -R

section smcd_info
cmd_line smcd info
section smcd_lgs
cmd_line smcd -d linkgroup show
section smcd_devices
cmd_line smcd -d device show
section smcd_stats
cmd_line smcd -d stats
section smcd_ueid
cmd_line smcd ueid show
section smcd_seid
cmd_line smcd seid show
section smcd_hslimit
cmd_line smcd hslimit show

section smcr_info
cmd_line smcr info
section smcr_links
cmd_line smcr -d linkgroup link-show
section smcr_devices
cmd_line smcr -d device show
section smcr_stats
cmd_line smcr -d stats
section smcr_ueid
cmd_line smcr ueid show

section sysctl
if [ -d "$PROC/sys/net/smc" ]; then
	sysctls "$PROC/sys/net/smc"
else
	say "$PROC/sys/net/smc: absent: the kernel has no SMC (the smc module is not loaded), so no net.smc sysctls"
fi

section soft_settings
if [ "$soft" -eq 1 ]; then
	soft_settings "$sock"
else
	say "soft backend: not in use"
fi

section rdma
if command -v rdma >/dev/null 2>&1; then
	cmd_line rdma link
else
	say "rdma: not installed"
fi
if [ -d "$SYS/class/infiniband" ]; then
	say
	say "$SYS/class/infiniband:"
	for d in "$SYS"/class/infiniband/*; do
		[ -e "$d" ] && say "  ${d##*/}"
	done
fi

section ip_link
cmd_line ip -d link
section ip_addr
cmd_line ip addr

section dmesg
say "\$ dmesg | grep -i smc"
if dmesg > "$WORK/dmesg" 2> "$WORK/stderr"; then
	grep -i smc "$WORK/dmesg" >&3 || say "(no SMC lines)"
else
	say "--- dmesg: failed, exit status $?"
	say "--- stderr:"
	cat "$WORK/stderr" >&3
fi

if [ "$tgz" -eq 1 ]; then
	if ! tar -C "$WORK" -czf "$PWD/$BUNDLE.tgz" "$BUNDLE"; then
		echo "smc_dbg: Error: cannot write $PWD/$BUNDLE.tgz" >&2
		exit 1
	fi
	echo "Debug output written to $PWD/$BUNDLE.tgz"
fi
exit 0
