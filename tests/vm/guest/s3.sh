#!/bin/sh
# Scenario 3: one VM, the soft backend (smc_softd) beside the kernel's rxe:
# the host's RDMA device as an SMC-R device of the soft backend, with the
# same text the kernel prints for it (expected/s3 holds the kernel's own
# outputs of s1 where they are the same), through rdma link add and delete
# and its interface going down and up.
SCEN=s3
. /tests/lib.sh
export SMC_BACKEND=soft SMC_SOFT_SOCKET=/tmp/soft/control

smc_softd -f -s "$SMC_SOFT_SOCKET" > /tmp/softd.log 2>&1 &
SOFTD=$!
i=0; while [ ! -S "$SMC_SOFT_SOCKET" ] && [ $i -lt "$(slow 100)" ]; do sleep 0.1; i=$((i + 1)); done
ok softd-started test -S "$SMC_SOFT_SOCKET"

check smcr-device-none smcr device
ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
check pnet-add smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
check pnet-show smc_pnet
check smcr-device smcr device
check smcr-device-d smcr -d device
# s390 lists PCI functions by FID (none here), then the soft backend's devices
case $(uname -m) in
s390*) check smc-rnics-s390 smc_rnics ;;
*) check smc-rnics smc_rnics ;;
esac
# what SMC-R will use of it: rxe has only RoCE v2 GIDs, the IPv4-mapped one for SMC-Rv2
ok softd-log-gids grep -q "RDMA device rxe0 port 1: interface eth0, active, RoCE v1 GID none, RoCE v2 GID ::ffff:10.0.0.1$" /tmp/softd.log

# rxe's port follows its interface
ip link set eth0 down
i=0; while ! grep -q DOWN /sys/class/infiniband/rxe0/ports/1/state && [ $i -lt "$(slow 50)" ]; do sleep 0.1; i=$((i + 1)); done
check smcr-device-down smcr device
ip link set eth0 up
i=0; while ! grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state && [ $i -lt "$(slow 50)" ]; do sleep 0.1; i=$((i + 1)); done
check smcr-device-up smcr device

# deleted: gone from the devices, kept in the PNET table; back with its PNET ID
ok rdma-link-delete rdma link delete rxe0
check smcr-device-deleted smcr device
ok softd-log-gone grep -q "RDMA device rxe0 is gone$" /tmp/softd.log
check pnet-show-deleted smc_pnet
ok rdma-link-add-again rdma link add rxe0 type rxe netdev eth0
check smcr-device-again smcr device

kill $SOFTD
wait $SOFTD
ok softd-stopped test ! -e "$SMC_SOFT_SOCKET"
