#!/bin/sh
# Scenario 15: the kernel's SMC-R link group with two links: two VMs joined
# by two networks, an rxe device on each interface, both in PNET NET1; an
# unmodified echo program under smc_run connects over the first link, and
# the kernel adds the second (LLC ADD LINK). smcr and smcss show both.
SCEN=s15-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=kernel
PORT=5000

grepcheck() {
	if grep -q -e "$2" "$3"; then echo "PASS $SCEN/$1"; else echo "FAIL $SCEN/$1: no line matching '$2'"; sed 's/^/  > /' "$3"; fi
}

# SMC-Rv2 (rxe offers only RoCE v2 GIDs) adds a link only over a device
# with an address in the subnet of the link group's own (the kernel's
# smc_ib_determine_gid): eth1 is a second network in the same subnet
if [ "$VMROLE" = server ]; then ME2=10.0.0.11; else ME2=10.0.0.12; fi
ip addr add $ME2/24 dev eth1
ip link set eth1 up
ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
ok rdma-link-add-second rdma link add rxe1 type rxe netdev eth1
i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); done
ok ping-peer ping -c 1 -W 2 "$VMPEER"
ok ueid-add smcr ueid add SMC-VM-TEST-EID
ok pnet-first smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
ok pnet-second smc_pnet -a NET1 -I eth1 -D rxe1 -P 1

# A loaded TCG guest can miss the kernel's first-contact LLC waits (about
# 2 s), and the kernel then runs the echo over TCP: its listings below would
# have no link group to show. Each end reads the connection's mode while it
# is held; over TCP, the reason is an INFO line and the echo runs once more.
try=1
while :; do
	if [ "$VMROLE" = server ]; then
		ROLE=SERV
		smc_run tcpecho server $PORT > /tmp/echo.out 2>&1 &
		SPID=$!
		wait_for 300 grep -q ACCEPTED /tmp/echo.out
	else
		ROLE=CLNT
		# held for 40 s after its echo, while the listings below are taken
		echo_client $PORT 40
	fi
	smcss -a > /tmp/mode.txt 2>&1
	grep -q "^ACTIVE .*:$PORT .* TCP 0x" /tmp/mode.txt && [ $try -lt 2 ] || break
	echo "INFO $SCEN/fallback: try $try ran over TCP: $(grep "^ACTIVE .*:$PORT " /tmp/mode.txt)"
	if [ "$VMROLE" = server ]; then
		wait_for 600 grep -q 'SERVER EOF' /tmp/echo.out
		wait $SPID
	else
		kill $EPID
		wait $EPID
	fi
	try=$((try + 1))
done
if [ "$VMROLE" = server ]; then
	ok echo-accepted grep -q ACCEPTED /tmp/echo.out
else
	grepcheck echo-data 'ECHO OK 262144' /tmp/echo.out
fi
# the second link comes some time after the first
wait_for 300 sh -c '[ $(smcr -d linkgroup link-show | grep -c LINK_ACTIVE) -eq 2 ]'
smcr -d linkgroup link-show > /tmp/lg.txt 2>&1
grepcheck link-rxe0-active ' LINK_ACTIVE .* rxe0 ' /tmp/lg.txt
grepcheck link-rxe1-active ' LINK_ACTIVE .* rxe1 ' /tmp/lg.txt
smcr linkgroup > /tmp/lgs.txt 2>&1
grepcheck linkgroup-symmetric "$ROLE *SYM" /tmp/lgs.txt
smcr -j -d linkgroup link-show > /tmp/lg.json 2>&1
ok linkgroup-json-two-links sh -c '[ $(grep -o "\"link_state\":\"LINK_ACTIVE\"" /tmp/lg.json | wc -l) -eq 2 ]'
smcss -a -R > /tmp/ss.txt 2>&1
grepcheck smcss-R-smcr "^ACTIVE .* SMCR .*$ROLE" /tmp/ss.txt
echo "--- $SCEN outputs"
cat /tmp/lg.txt /tmp/lgs.txt /tmp/ss.txt /tmp/lg.json
echo "--- end"
if [ "$VMROLE" = server ]; then
	wait_for 600 grep -q 'SERVER EOF' /tmp/echo.out
	grepcheck echo-server-eof 'SERVER EOF' /tmp/echo.out
else
	wait $EPID
	ok echo-client-exit test $? = 0
fi
