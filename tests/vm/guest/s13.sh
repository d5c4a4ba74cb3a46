#!/bin/sh
# Scenario 13: the kernel's SMC-R over rxe on Debian's 6.1, where it hangs
# (doc/kernels.md): with a UEID, so that SMC-Rv2 is proposed, the first
# link's setup fails and both ends then wait for good in smc_wr_drain_cq
# (the client in connect(), the server's handshake worker), in state D.
# Without a UEID the connection falls back to TCP.  This scenario asserts
# the hang as seen, so that a 6.1 that no longer hangs fails here and the
# documentation and smc_chk's warning get revisited.
SCEN=s13-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=kernel
PORT=5000

ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
ok ueid-add smcr ueid add SMC-VM-TEST-EID
ok pnet-add smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); done
ok ping-peer ping -c 1 -W 2 "$VMPEER"

# stuck_in FUNC: a task of this VM in state D with FUNC in its kernel stack
stuck_in() {
	for p in /proc/[0-9]*; do
		[ "$(cut -d' ' -f3 "$p/stat" 2>/dev/null)" = D ] || continue
		grep -q "$1" "$p/stack" 2>/dev/null && { echo "$(cat "$p/comm"):"; cat "$p/stack"; return 0; }
	done
	return 1
}

if [ "$VMROLE" = server ]; then
	smc_run tcpecho server $PORT > /tmp/echo.out 2>&1 &
else
	sleep 2
	smc_run tcpecho client "$VMPEER" $PORT 1 > /tmp/echo.out 2>&1 &
fi
# the hang shows within seconds of the first connect; 60 s leave a loaded host room
i=0; while ! stuck_in smc_wr_drain_cq > /tmp/stuck.out && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
ok hangs-in-smc_wr_drain_cq test -s /tmp/stuck.out
cat /tmp/stuck.out
if [ "$VMROLE" = server ]; then
	ok nothing-accepted sh -c '! grep -q ACCEPTED /tmp/echo.out'
else
	ok not-connected sh -c '! grep -q CONNECTED /tmp/echo.out'
	ok no-smc-connection sh -c '! smcss -a -R | grep -q "^ACTIVE"'
fi
