#!/bin/sh
# Scenario 1: one VM, control plane of a real 6.12 SMC kernel.
SCEN=s1
. /tests/lib.sh
export SMC_BACKEND=kernel

ok rdma-link-add rdma link add rxe0 type rxe netdev eth0

# PNET table
check pnet-empty smc_pnet
check pnet-add smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
check pnet-add-exists smc_pnet -a NET1 -I eth0
check pnet-show smc_pnet
check pnet-show-one smc_pnet -s NET1
check pnet-json smc_pnet -j
check pnet-del smc_pnet -d NET1
check pnet-del-missing smc_pnet -d NET1
check pnet-after-del smc_pnet
check pnet-add-lo smc_pnet -a NET2 -I lo
check pnet-add2 smc_pnet -a NET3 -D rxe0 -P 1
check pnet-flush smc_pnet -f
check pnet-after-flush smc_pnet

# UEID
check ueid-empty smcr ueid show
check ueid-add smcr ueid add SMC-VM-TEST-EID
check ueid-add2 smcr ueid add SECOND-EID
check ueid-show smcr ueid show
check ueid-json smcr -j ueid show
check ueid-del smcr ueid del SECOND-EID
check ueid-del-missing smcr ueid del SECOND-EID
check ueid-show2 smcr ueid show
check ueid-flush smcr ueid flush
check ueid-after-flush smcr ueid show

# info, device, linkgroup, stats
check smcd-info smcd info
check smcr-info smcr info
check smcr-info-json smcr -j info
smc_pnet -a NET1 -I eth0 -D rxe0 -P 1 >/dev/null 2>&1
check smcr-device smcr device
check smcr-device-d smcr -d device
check smcd-device smcd device
check smcr-linkgroup smcr linkgroup
check smcd-linkgroup smcd linkgroup
check smcr-stats smcr stats
check smcd-stats smcd stats

# smcss: a LISTEN, an INIT and an ACTIVE TCP fallback
smc_sock 4711 > /tmp/sock.out 2>&1 &
SOCKPID=$!
i=0; while ! grep -q READY /tmp/sock.out && [ $i -lt "$(slow 100)" ]; do sleep 0.1; i=$((i + 1)); done
ok smc_sock-ready grep -q READY /tmp/sock.out
# Inodes and the ephemeral port vary; 4711 is ours.
SSNORM='s/^\([A-Z_]* *[0-9]* *\)[0-9][0-9]*/\1INODE/; s/:[0-9]\{5\}\( \)/:EPORT\1/g; s/"inode":[0-9]*/"inode":N/g; s/"local_port":[0-9]\{5\}/"local_port":N/g; s/"peer_port":[0-9]\{5\}/"peer_port":N/g'
NORM=$SSNORM; check smcss smcss
NORM=$SSNORM; check smcss-a smcss -a
NORM=$SSNORM; check smcss-l smcss -l
NORM=$SSNORM; check smcss-d smcss -d
NORM=$SSNORM; check smcss-j smcss -a -j
check smcr-stats-after smcr stats

# the same over IPv6 (SMCPROTO_SMC6 on ::1), beside the IPv4 ones
smc_sock 4712 6 > /tmp/sock6.out 2>&1 &
SOCK6PID=$!
i=0; while ! grep -q READY /tmp/sock6.out && [ $i -lt "$(slow 100)" ]; do sleep 0.1; i=$((i + 1)); done
ok smc_sock6-ready grep -q READY /tmp/sock6.out
NORM=$SSNORM; check smcss-a-ipv6 smcss -a
NORM=$SSNORM; check smcss-d-ipv6 smcss -d
NORM=$SSNORM; check smcss-j-ipv6 smcss -a -j
smcr ueid add SMC-VM-TEST-EID >/dev/null 2>&1
fixtures s1

# The handshake limitation, per network namespace as the kernel keeps it
check hslimit-show smcr hslimit show
check hslimit-enable smcr hslimit enable
check hslimit-enabled smcr hslimit show
check hslimit-json smcd -j hslimit show
check hslimit-other-netns unshare -n smcr hslimit show
check user-hslimit-show asuser 65534 smcr hslimit show
check user-hslimit-disable asuser 65534 smcr hslimit disable
check hslimit-still-enabled smcr hslimit show
check hslimit-disable smcr hslimit disable
check hslimit-disabled smcr hslimit show

# A user without CAP_NET_ADMIN: reads work, changes are refused as upstream
# refuses them (the kernel's EPERM), and nothing changes.
AS_USER="asuser 65534"
check user-pnet-show $AS_USER smc_pnet
check user-pnet-add $AS_USER smc_pnet -a NET9 -I eth0
check user-pnet-del $AS_USER smc_pnet -d NET1
check user-pnet-flush $AS_USER smc_pnet -f
check user-pnet-unchanged smc_pnet
check user-ueid-show $AS_USER smcr ueid show
check user-ueid-add $AS_USER smcr ueid add USER-EID
check user-ueid-del $AS_USER smcr ueid del SMC-VM-TEST-EID
check user-ueid-flush $AS_USER smcr ueid flush
check user-ueid-unchanged smcr ueid show
check user-seid-show $AS_USER smcd seid show
check user-seid-disable $AS_USER smcd seid disable
check user-smcr-info $AS_USER smcr info
check user-smcr-device $AS_USER smcr device
check user-smcr-linkgroup $AS_USER smcr linkgroup
check user-smcd-stats $AS_USER smcd stats
NORM=$SSNORM; check user-smcss $AS_USER smcss -a
kill $SOCK6PID
smcr ueid flush >/dev/null 2>&1
kill $SOCKPID
smc_pnet -f >/dev/null 2>&1
