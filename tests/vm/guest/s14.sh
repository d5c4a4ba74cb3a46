#!/bin/sh
# Scenario 14: one VM of a kernel without SMC (Debian's from 6.18 on: no smc
# module at all), no soft backend running: every tool says so in one line,
# naming the kernel and pointing at the soft backend; then with smc_softd
# started they answer.
SCEN=s14
. /tests/lib.sh
export SMC_SOFT_SOCKET=/tmp/soft/control

ok no-af-smc sh -c '! grep -q "^smc " /proc/modules && ! modprobe smc 2>/dev/null'
# the kernel's release changes with the archive
REL='s/^\(.*this kernel has no SMC (\)[^ ]*\( has no smc module\)/\1RELEASE\2/'
for t in "smc_pnet" "smcss" "smcss -R" "smcd info" "smcr info" "smcd linkgroup" "smcr device" "smcr stats" "smcd ueid show"; do
	NORM=$REL; check "auto-$(echo "$t" | tr ' ' '-')" $t
done
NORM=$REL; check kernel-smcss env SMC_BACKEND=kernel smcss
NORM=$REL; check kernel-smc_pnet env SMC_BACKEND=kernel smc_pnet -a NET1 -I eth0
check soft-smcss env SMC_BACKEND=soft smcss

smc_softd -f -s "$SMC_SOFT_SOCKET" > /tmp/softd.log 2>&1 &
SOFTD=$!
i=0; while [ ! -S "$SMC_SOFT_SOCKET" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ok softd-started test -S "$SMC_SOFT_SOCKET"
check softd-smcss smcss
check softd-pnet-add smc_pnet -a NET1 -I eth0
check softd-pnet-show smc_pnet
kill $SOFTD
wait $SOFTD 2>/dev/null
