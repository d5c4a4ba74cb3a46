#!/usr/bin/env bats
# make install and the build's dependency check, as a packager meets them.

load helpers

setup() {
	cd "$SMC_TOP"
}

@test "make install honours DESTDIR, PREFIX and the multiarch LIBDIR" {
	root="$BATS_TEST_TMPDIR/root"
	run make -s install DESTDIR="$root"
	[ "$status" -eq 0 ]
	multiarch=$(cc -print-multiarch)
	for t in smc_pnet smcss smcd smc_run smcdump-ex; do
		[ -x "$root/usr/bin/$t" ]
	done
	[ -f "$root/usr/share/smc-tools/wireshark/smc_dump.lua" ]
	[ "$(readlink "$root/usr/bin/smcr")" = smcd ]
	lib="$root/usr/lib/$multiarch/libsmc-preload.so"
	[ -f "$lib" ]
	# never setuid: plain 0644
	[ "$(stat -c %a "$lib")" = 644 ]
	grep -q "/usr/lib/$multiarch" "$root/usr/bin/smc_run"
	for m in smc_pnet.8 smcss.8 smcd.8 smcr.8 smc_run.8 smcdump-ex.8; do
		[ -f "$root/usr/share/man/man8/$m" ]
	done
	[ -f "$root/usr/share/man/man7/af_smc.7" ]
	# the installed smc_run prints the toolset's version
	run "$root/usr/bin/smc_run" -v
	[ "$output" = "smc_run utility, smc-tools-1.8.5" ]
}

@test "make install with PREFIX, BINDIR and LIBDIR overrides" {
	root="$BATS_TEST_TMPDIR/root2"
	run make -s install DESTDIR="$root" PREFIX=/opt/smc LIBDIR=/opt/smc/lib64 MANDIR=/opt/smc/man
	[ "$status" -eq 0 ]
	[ -x "$root/opt/smc/bin/smcss" ]
	[ -f "$root/opt/smc/lib64/libsmc-preload.so" ]
	[ -f "$root/opt/smc/man/man8/smcss.8" ]
	grep -q 'LIBDIR=/opt/smc/lib64\|/opt/smc/lib64' "$root/opt/smc/bin/smc_run"
}

@test "a missing build dependency is named with its Debian packages" {
	run make -s PKG_CONFIG=false O="$BATS_TEST_TMPDIR/out" all
	[ "$status" -ne 0 ]
	[[ "$output" == *"smc-tools: missing build dependencies (libnl-3.0 libnl-genl-3.0 libmnl liburing libibverbs)."* ]]
	[[ "$output" == *"apt-get install libnl-3-dev libnl-genl-3-dev libmnl-dev liburing-dev libibverbs-dev pkg-config"* ]]
}

@test "the version string is the same in every tool" {
	v=$(sed -n 's/.*SMC_TOOLS_RELEASE "\(.*\)".*/\1/p' lib/version.h)
	[ "$(smcss -v)" = "smcss utility, smc-tools-$v" ]
	[ "$(smc_pnet -v)" = "smc_pnet utility, smc-tools-$v" ]
	[ "$(smc_run -v)" = "smc_run utility, smc-tools-$v" ]
	[ "$(smcd -v 2>&1)" = "smcd utility, smc-tools-$v" ]
}

@test "every man page renders without warnings" {
	command -v man >/dev/null || skip "man is not installed"
	for p in man/*.[78]; do
		run bash -c "MANWIDTH=80 man --warnings -l '$p' 2>&1 >/dev/null"
		[ "$status" -eq 0 ]
		[ -z "$output" ] || { echo "$p: $output"; false; }
	done
}
