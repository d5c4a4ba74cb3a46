#!/usr/bin/env bash
# make demo: build the toolset and run it end to end on this machine, against
# a private soft backend (smc_softd) on its own socket, so it works the same
# whether or not the kernel has SMC.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
top=$PWD

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; printf '[exit %d]\n' $?; }

section "Dependencies and build"
scripts/install-deps.sh || exit 1
make -s all || exit 1
make -s O=build/demo build/demo/tests/soft_client || exit 1
export PATH="$top:$PATH"

section "Versions"
for t in smc_pnet smcss smc_run smc_softd; do show $t -v; done
show smcd -v 2>&1

section "Backend detection"
if python3 -c 'import socket; socket.socket(43, socket.SOCK_STREAM, 0)' 2>/dev/null; then
	echo "kernel: AF_SMC sockets work: by default the tools use the kernel's SMC"
else
	echo "kernel: no AF_SMC (module smc not loaded or not built)"
fi
run_dir=$(mktemp -d /tmp/smc-demo.XXXXXX)
export SMC_SOFT_SOCKET="$run_dir/control"
export SMC_STATS_CACHE="$run_dir/stats"   # leave the user's stats baseline alone
show env SMC_BACKEND=soft smcss -a 2>&1

section "Start a private soft backend"
smc_softd -f -s "$SMC_SOFT_SOCKET" 2>"$run_dir/smc_softd.log" &
softd=$!
client=
cleanup() {
	[ -z "$client" ] || kill "$client" 2>/dev/null
	kill "$softd" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$run_dir"
}
trap cleanup EXIT
for _ in $(seq 100); do [ -S "$SMC_SOFT_SOCKET" ] && break; sleep 0.05; done
export SMC_BACKEND=soft
echo "smc_softd (pid $softd) listens on $SMC_SOFT_SOCKET"

section "Devices and capabilities"
show smcd info
show smcd device
show smcr -d device
show smc_rnics

# The first soft RoCE device and its interface, for the PNET example.
read -r roce iface < <(smcr -j device | python3 -c '
import json, sys
devs = json.load(sys.stdin)["devices"]
print(devs[0]["ib_dev"], devs[0]["net_dev"]) if devs else print("", "")')

section "PNET table"
if [ -n "$roce" ]; then
	show smc_pnet -a NET1 -I "$iface" -D "$roce"
else
	echo "(no up network interface: no soft RoCE device to name)"
	show smc_pnet -a NET1 -D soft-ism
fi
show smc_pnet -s
show smcr device
show smcd device
echo "Unprivileged changes are refused:"
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	show setpriv --inh-caps=-net_admin --bounding-set=-net_admin smc_pnet -a NET2 -I "${iface:-lo}"
fi

section "User EIDs"
show smcr ueid add SOME-EID
show smcr ueid show

section "Sockets: a test client registers INIT, LISTEN and connected sockets"
build/demo/tests/soft_client -s init listen 47001 connect 47002 >"$run_dir/client.out" &
client=$!
for _ in $(seq 100); do grep -qx ready "$run_dir/client.out" 2>/dev/null && break; sleep 0.05; done
show smcss -a
show smcss -l

section "Link groups and statistics"
show smcr linkgroup
show smcd stats
show smcd -j info

section "A support bundle (smc_dbg), first lines"
smc_dbg 2>&1 | head -n 25

section "Clean up"
show smc_pnet -f
show smcr ueid flush
kill "$client" 2>/dev/null
wait "$client" 2>/dev/null
client=
show smcss -a
