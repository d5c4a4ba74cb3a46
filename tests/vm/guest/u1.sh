#!/bin/sh
# The unit tests in the guest: on IBM Z, big-endian, with that kernel's own
# netlink, /proc and vfork (qemu-user gives none of them).  Their fixtures
# and schemas are in /unit (tests/vm/mkinitramfs.sh).  A run that crashes
# or never prints its summary fails, whatever it passed before.
[ -x /usr/bin/unit_tests ] || { echo "FAIL u1/unit-tests: not in this initramfs (a cross build only)"; exit 1; }
cd /unit && SMC_TOP=/unit unit_tests > /tmp/unit.out 2>&1
rc=$?
sed 's/^    /  > /' /tmp/unit.out
if [ $rc != 0 ] && ! grep -q '^unit: [0-9]* passed, [1-9][0-9]* failed$' /tmp/unit.out; then
	echo "FAIL u1/unit-tests: exit $rc"
	tail -n 5 /tmp/unit.out | sed 's/^/  > /'
elif ! grep -q '^unit: [0-9]* passed, [0-9]* failed$' /tmp/unit.out; then
	echo "FAIL u1/unit-tests: no summary line"
fi
