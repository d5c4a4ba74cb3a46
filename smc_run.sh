#!/bin/bash
#
# smc_run - run a command with its TCP sockets on SMC
#
# Preloads libsmc-preload.so, which turns the command's TCP socket() calls
# into AF_SMC sockets (or leaves them TCP when the kernel has no SMC).
# Compatible with smc_run of IBM smc-tools, with two fixes: the caller's
# SMC_DEBUG is kept unless -d is given, and a SIZE may not contain '|'.

VERSION="@VERSION@"
LIBDIR="@LIBDIR@"
PRELOAD_LIB="libsmc-preload.so"
NAME="$(basename "$0")"

usage() {
	echo
	echo "Usage: smc_run [ OPTIONS ] COMMAND"
	echo
	echo "Run COMMAND using SMC for TCP sockets"
	echo
	echo "   -d         enable debug mode"
	echo "   -h         display this message"
	echo "   -r <SIZE>  request receive buffer size in Bytes"
	echo "   -t <SIZE>  request transmit buffer size in Bytes"
	echo "   -v         display version info"
}

# SIZE in bytes on stdout: digits with an optional k/K/m/M multiplier, at most
# INT_MAX bytes (what the library and the kernel accept).
size_bytes() {
	local size="$1" mult=1 digits bytes

	if [[ ! $size =~ ^[0-9]+[kKmM]?$ ]]; then
		return 1
	fi
	case "$size" in
	*[kK]) mult=1024 ;;
	*[mM]) mult=1048576 ;;
	esac
	digits="${size%[kKmM]}"
	digits="${digits#"${digits%%[1-9]*}"}"	# no leading zeros: not octal
	if [ "${#digits}" -gt 10 ]; then
		return 1
	fi
	bytes=$(( ${digits:-0} * mult ))
	if [ "$bytes" -gt 2147483647 ]; then
		return 1
	fi
	echo "$bytes"
}

# set_bufsize SYSCTL VARIABLE SIZE: raise the sysctl limit if it is lower,
# export the byte count for the library.
set_bufsize() {
	local sysctl_name="$1" var="$2" size="$3" bytes cur

	if ! bytes=$(size_bytes "$size"); then
		echo "Error: Invalid buffer size specified: '$size'"
		exit 1
	fi
	cur=$(sysctl -n "$sysctl_name")
	if [[ ! $cur =~ ^[0-9]+$ ]] || [ "$cur" -lt "$bytes" ]; then
		# Needs root; sysctl's own error goes to stderr and we go on.
		sysctl -w "$sysctl_name=$bytes" >/dev/null
	fi
	export "$var=$bytes"
}

# The build tree's library when run from there, else the installed one by its
# absolute path, else the bare name for ld.so to resolve.
preload_path() {
	local dir

	dir="$(dirname "$0")"
	if [ -e "$dir/$PRELOAD_LIB" ]; then
		echo "$(cd "$dir" && pwd)/$PRELOAD_LIB"
	elif [ -e "$LIBDIR/$PRELOAD_LIB" ]; then
		echo "$(cd "$LIBDIR" && pwd)/$PRELOAD_LIB"
	else
		echo "$PRELOAD_LIB"
	fi
}

debug=
while getopts "dhr:t:v" opt; do
	case "$opt" in
	d)
		debug=1
		;;
	h)
		usage
		exit 0
		;;
	r)
		set_bufsize net.core.rmem_max SMC_RCVBUF "$OPTARG"
		;;
	t)
		set_bufsize net.core.wmem_max SMC_SNDBUF "$OPTARG"
		;;
	v)
		echo "smc_run utility, smc-tools-$VERSION"
		exit 0
		;;
	*)
		# getopts has reported the option on stderr.
		echo "$NAME: Error: Invalid option: -"
		exit 1
		;;
	esac
done
shift $((OPTIND - 1))

if [ $# -eq 0 ]; then
	echo "$NAME: Error: Missing command parameter"
	exit 1
fi

if [ -n "$debug" ]; then
	export SMC_DEBUG=1
elif [ -z "${SMC_DEBUG+set}" ]; then
	export SMC_DEBUG=0
fi

lib="$(preload_path)"
export LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$lib"
exec "$@"
