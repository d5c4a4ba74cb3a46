#!/bin/sh
# Scenario 17: soft SMC-R between an IBM Z (s390x, big-endian) server and an
# x86 (little-endian) client (run.sh: VM_ARCH=s390x ... s17), each with rxe
# and its own smc_softd, an unmodified echo program under smc_run moving
# 8 MiB each way.  On Debian's 6.12 the two rxe devices cannot carry a
# packet between them: 6.12's rxe writes a packet's ICRC in its CPU's byte
# order (doc/kernels.md), so the x86 end drops every packet of the s390x
# end.  The scenario asserts that as seen, and that the connection falls
# back to TCP with the kernel's code for it (no CONFIRM LINK) and every byte.
# The LLC messages' own byte order is tested without rxe
# (tests/unit/test_smcr_lgr.c, smcr_lgr_peer_of_other_byte_order).
SCEN=s17-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control SMC_DEBUG=1
PORT=5000
BYTES=8388608

echo "INFO $SCEN/machine: $(uname -m)"
soft_rdma_host
if [ "$VMROLE" = server ]; then
	smc_run tcpecho server $PORT > /tmp/echo.out 2>&1 &
	wait_for 600 grep -q ACCEPTED /tmp/echo.out
	ok echo-accepted grep -q ACCEPTED /tmp/echo.out
else
	# held 20 s after its echo while both ends take their listings
	echo_client $PORT 20 $BYTES 3
	grepcheck echo-data "ECHO OK $BYTES" /tmp/echo.out
	# stuck: where, and no wait for it below
	grep -q -e ECHO -e tcpecho: /tmp/echo.out || { stuck_echo tcpecho $PORT; kill -9 $EPID; }
fi
# the connection's row once decided
wait_for 600 sh -c "smcss -a | grep -q -e '^ACTIVE .*:$PORT .* SMCR' -e '^ACTIVE .*:$PORT .* TCP 0x'"
smcss -a > /tmp/ss.txt 2>&1
grepcheck fallback-no-confirm-link "^ACTIVE .*:$PORT .* TCP 0x02010000$" /tmp/ss.txt
rdma statistic show link rxe0/1 > /tmp/rxe.txt 2>&1
if [ "$VMROLE" = server ]; then
	grepcheck rxe-sent ' sent_pkts [1-9]' /tmp/rxe.txt
	wait_for 1200 grep -q 'SERVER EOF' /tmp/echo.out || stuck_echo tcpecho $PORT
	grepcheck echo-server-eof 'SERVER EOF' /tmp/echo.out
else
	grepcheck rxe-received-none ' rcvd_pkts 0 ' /tmp/rxe.txt
	wait $EPID
	ok echo-client-exit test $? = 0
fi
echo "--- $SCEN outputs"
cat /tmp/ss.txt /tmp/rxe.txt /tmp/echo.out
echo "--- end"
