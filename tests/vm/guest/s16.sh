#!/bin/sh
# Scenario 16: a decline code newer than smc-tools 1.8.5 from a real kernel.
# Both ends offer SMC-Rv2 over rxe, but the server reaches the client through
# a gateway (a host route via 10.0.0.3, an address the client VM also owns)
# while the client reaches the server directly: the server's Accept says
# "indirect", the client's own route says direct, and the client declines
# with NOINDIRECT (0x030f0000, the kernel's SMC_CLC_DECL_NOINDIRECT).  The
# unmodified echo program goes on over TCP; smcss names the code on both ends.
SCEN=s16-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=kernel
PORT=5000

grepcheck() {
	if grep -q -e "$2" "$3"; then echo "PASS $SCEN/$1"; else echo "FAIL $SCEN/$1: no line matching '$2'"; sed 's/^/  > /' "$3"; fi
}

ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
ok ueid-add smcr ueid add SMC-VM-TEST-EID
ok pnet-add smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
if [ "$VMROLE" = server ]; then
	ok route-via-gateway ip route add 10.0.0.2/32 via 10.0.0.3 dev eth0
else
	ok gateway-address ip addr add 10.0.0.3/24 dev eth0
fi
i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); done
ok ping-peer ping -c 1 -W 2 "$VMPEER"

if [ "$VMROLE" = server ]; then
	smc_run tcpecho server $PORT > /tmp/echo.out 2>&1 &
	wait_for 300 grep -q ACCEPTED /tmp/echo.out
	ok echo-accepted grep -q ACCEPTED /tmp/echo.out
else
	echo_client $PORT 15
	grepcheck echo-data 'ECHO OK 262144' /tmp/echo.out
fi
smcss -a > /tmp/ss.txt 2>&1
if [ "$VMROLE" = server ]; then
	grepcheck smcss-peer-declined-noindirect '^ACTIVE .*:5000 .* TCP 0x05000000/0x030f0000$' /tmp/ss.txt
else
	grepcheck smcss-noindirect '^ACTIVE .*:5000 .* TCP 0x030f0000$' /tmp/ss.txt
fi
smcss -a -j > /tmp/ss.json 2>&1
grepcheck smcss-json-names-noindirect '"fallback_reason_hex":"0x030f0000","fallback_reason_text":"SMC-Rv2: indirect claimed, route is direct (NOINDIRECT)"\|"peer_diagnosis_text":"SMC-Rv2: indirect claimed, route is direct (NOINDIRECT)"' /tmp/ss.json
smcr -d stats > /tmp/st.txt 2>&1
echo "--- $SCEN outputs"
cat /tmp/ss.txt /tmp/ss.json /tmp/st.txt
echo "--- end"
if [ "$VMROLE" = server ]; then
	wait_for 300 grep -q 'SERVER EOF' /tmp/echo.out
else
	wait $EPID
fi
