#!/bin/sh
# The unit tests in the guest: on IBM Z, big-endian, with that kernel's own
# netlink, /proc and vfork (qemu-user gives none of them).  Their fixtures
# and schemas are in /unit (tests/vm/mkinitramfs.sh).
[ -x /usr/bin/unit_tests ] || { echo "FAIL u1/unit-tests: not in this initramfs (a cross build only)"; exit 1; }
cd /unit && SMC_TOP=/unit unit_tests 2>&1 | sed 's/^    /  > /'
