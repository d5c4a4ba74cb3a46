#!/usr/bin/env bash
# make demo: build the toolset and show it working on this machine.
# Until the soft backend arrives, this shows the tools, their help and which
# SMC backend this machine offers.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; printf '[exit %d]\n' $?; }

section "Dependencies and build"
scripts/install-deps.sh || exit 1
make -s all || exit 1
export PATH="$PWD:$PATH"

section "Versions"
for t in smc_pnet smcss smc_run; do show $t -v; done
show smcd -v 2>&1

section "Backend detection (SMC_BACKEND=${SMC_BACKEND:-auto})"
if python3 -c 'import socket; socket.socket(43, socket.SOCK_STREAM, 0)' 2>/dev/null; then
	echo "kernel: AF_SMC sockets work: the tools use the kernel's SMC"
else
	echo "kernel: no AF_SMC (module smc not loaded or not built)"
fi
sock=${SMC_SOFT_SOCKET:-/run/smc_soft/control}
if [ -S "$sock" ]; then
	echo "soft backend: control socket $sock exists"
else
	echo "soft backend: no control socket at $sock"
fi
show smcss -a
show smcd info
show smc_pnet

section "Help"
show smcss -h
show smc_pnet -h
show smcd help 2>&1
show smcr help 2>&1
show smc_run -h

section "smc_run: an unmodified program under the preload library"
show smc_run -d python3 -c 'import socket; s = socket.socket(); print("socket family:", s.family.name)'
