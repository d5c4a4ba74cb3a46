#!/usr/bin/env bats
# The Debian package (debian/): dpkg-buildpackage in a scratch copy of the
# tree (uncommitted changes included), lintian, the package's contents, and
# the tools installed from it (dpkg -x into a scratch root) against a soft
# backend of their own.  The build runs once, in setup_file.

load helpers

setup_file() {
	command -v dpkg-buildpackage >/dev/null ||
		skip "dpkg-buildpackage is not installed (dpkg-dev; scripts/install-deps.sh)"
	PKG_WORK="$BATS_FILE_TMPDIR/pkg"
	export PKG_WORK
	mkdir -p "$PKG_WORK/src"
	# the files of the working tree git knows of or would add (not the
	# build outputs .gitignore lists); a file that vanishes while copied
	# (a concurrent test run) is not an error
	(
		cd "$SMC_TOP" || exit 1
		if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			git ls-files -z -co --exclude-standard |
				tar --null --ignore-failed-read -T - -cf - 2>/dev/null
		else
			tar --exclude=./.git --exclude=./build --exclude=./.obj -cf - .
		fi
	) | tar -xf - -C "$PKG_WORK/src"
	local start=$SECONDS
	(
		cd "$PKG_WORK/src" &&
			DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b
	) >"$PKG_WORK/build.log" 2>&1
	echo $? >"$PKG_WORK/build.rc"
	echo $((SECONDS - start)) >"$PKG_WORK/build.secs"
}

setup() {
	MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	DEB=$(ls "$PKG_WORK"/smc-tools_*.deb 2>/dev/null | head -n 1)
}

teardown() {
	local pid
	for pid in ${PAIR_PIDS:-}; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	softd_stop
}

# Fails (with the end of the build log) unless the package was built.
need_deb() {
	if [ "$(cat "$PKG_WORK/build.rc")" != 0 ] || [ -z "$DEB" ]; then
		tail -n 40 "$PKG_WORK/build.log"
		false
	fi
}

@test "package: dpkg-buildpackage -b builds smc-tools without running make check" {
	need_deb
	echo "# package build: $(cat "$PKG_WORK/build.secs")s" >&3
	version=$(sed -n 's/.*SMC_TOOLS_RELEASE "\(.*\)".*/\1/p' "$SMC_TOP/lib/version.h")
	[ "$(dpkg-deb -f "$DEB" Version)" = "$version" ]
	[ "$(dpkg-parsechangelog -l "$SMC_TOP/debian/changelog" -S Version)" = "$version" ]
	# the project's tests are not part of the package build, with or
	# without nocheck: dh_auto_test is overridden by a no-op
	run make -s -n -C "$PKG_WORK/src" -f debian/rules override_dh_auto_test
	[ "$status" -eq 0 ]
	[ "$output" = : ]
	# built with Debian's hardening flags
	grep -q -- '-D_FORTIFY_SOURCE=2' "$PKG_WORK/build.log"
	grep -q -- '-Wl,-z,now' "$PKG_WORK/build.log"
}

@test "package: lintian reports no errors" {
	need_deb
	command -v lintian >/dev/null || { echo "lintian is not installed (scripts/install-deps.sh)"; false; }
	run lintian --display-info "$PKG_WORK"/smc-tools_*.changes
	printf '%s\n' "$output"
	[ -z "$(grep '^E: ' <<<"$output")" ]
}

@test "package: contents: preload library 0644 at the multiarch path, man pages, completion, unit" {
	need_deb
	run dpkg -c "$DEB"
	[ "$status" -eq 0 ]
	# never setuid, and where smc_run looks for it
	grep -Eq "^-rw-r--r-- root/root +[0-9]+ [0-9-]+ [0-9:]+ \./usr/lib/$MULTIARCH/libsmc-preload\.so\$" <<<"$output"
	for t in smc_pnet smcss smcd smc_run smc_softd smcdump-ex smc_rnics smc_dbg smc_chk; do
		grep -Eq "^-rwxr-xr-x root/root .* \./usr/bin/$t\$" <<<"$output"
	done
	grep -q ' \./usr/bin/smcr -> smcd$' <<<"$output"
	for m in smc_pnet smcss smcd smcr smc_run smc_softd smcdump-ex smc_rnics smc_dbg smc_chk; do
		grep -q " \./usr/share/man/man8/$m\.8\.gz\$" <<<"$output"
	done
	grep -q ' \./usr/share/man/man7/af_smc\.7\.gz$' <<<"$output"
	grep -q '^-rw-r--r-- .* \./usr/share/bash-completion/completions/smc-tools$' <<<"$output"
	for t in smc_pnet smcss smcd smcr smc_run smc_softd; do
		grep -q " \./usr/share/bash-completion/completions/$t -> smc-tools\$" <<<"$output"
	done
	grep -Eq '^-rw-r--r-- .* \./(usr/)?lib/systemd/system/smc_softd\.service$' <<<"$output"
	grep -q ' \./usr/share/doc/smc-tools/copyright$' <<<"$output"
	# the library's own name for ld.so's cache, made by ldconfig otherwise
	grep -q " \./usr/lib/$MULTIARCH/libsmc-preload\.so\.1 -> libsmc-preload\.so\$" <<<"$output"
	[ "$(dpkg-deb -f "$DEB" Depends | grep -o python3)" = python3 ]
}

@test "package: the packaged unit passes systemd-analyze verify" {
	need_deb
	command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
	root="$BATS_TEST_TMPDIR/root"
	dpkg -x "$DEB" "$root"
	unit=$(ls "$root"/lib/systemd/system/smc_softd.service "$root"/usr/lib/systemd/system/smc_softd.service 2>/dev/null | head -n 1)
	[ -n "$unit" ]
	grep -qx 'ExecStart=/usr/bin/smc_softd .*' "$unit"
	# verify checks that ExecStart exists and that man:smc_softd(8) opens:
	# both from the scratch root
	mkdir "$BATS_TEST_TMPDIR/unit"
	sed "s|=/usr/bin/smc_softd|=$root/usr/bin/smc_softd|" "$unit" >"$BATS_TEST_TMPDIR/unit/smc_softd.service"
	run env MANPATH="$root/usr/share/man" systemd-analyze verify "$BATS_TEST_TMPDIR/unit/smc_softd.service"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# Echo N messages over one connection, then hold it open (see PAIR_PIDS).
pair_py() {
	cat >"$BATS_TEST_TMPDIR/pair.py" <<'PY'
import signal, socket, sys
if sys.argv[1] == "server":
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen()
    print("listen", lst.getsockname()[1], flush=True)
    c, _ = lst.accept()
    for _ in range(3):
        c.sendall(c.recv(64))
else:
    c = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    for _ in range(3):
        c.sendall(b"ping")
        assert c.recv(64) == b"ping"
print("done", c.getsockname()[1], flush=True)
signal.pause()
PY
}

wait_line() { # FILE WORD: the line of FILE that starts with WORD, waiting for it
	for _ in $(seq 200); do
		grep -m1 "^$2 " "$1" && return 0
		sleep 0.05
	done
	cat "$1" >&2
	return 1
}

@test "package: the installed tools, smc_run and smc_softd work from a dpkg -x root" {
	need_deb
	root="$BATS_TEST_TMPDIR/root"
	dpkg -x "$DEB" "$root"
	export PATH="$root/usr/bin:$PATH"
	[ "$(command -v smcss)" = "$root/usr/bin/smcss" ]
	run smc_run -v
	[ "$output" = "smc_run utility, smc-tools-$(dpkg-deb -f "$DEB" Version)" ]
	# the installed daemon, on a private socket
	SMC_BIN="$root/usr/bin" softd_start
	run --separate-stderr smcd info
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "Kernel Capabilities" ]]
	if [ "$(id -u)" -eq 0 ]; then
		run smc_pnet -a PKGNET -I lo
		[ "$status" -eq 0 ]
		run smc_pnet -s
		[ "$output" = "PKGNET lo n/a 255" ]
	else
		run smc_pnet -s
		[ "$status" -eq 0 ]
	fi
	run smcss -a
	[ "$status" -eq 0 ]
	[ "${lines[0]:0:5}" = State ]
	# smc_run finds the library at /usr/lib/MULTIARCH, absolute: in the
	# scratch root ld.so finds it by name (LD_LIBRARY_PATH) when the host
	# has none there, else it is mounted over the host's in a mount
	# namespace of the pair's own
	lib="$root/usr/lib/$MULTIARCH/libsmc-preload.so"
	pre=(env LD_LIBRARY_PATH="$root/usr/lib/$MULTIARCH")
	if [ -e "/usr/lib/$MULTIARCH/libsmc-preload.so" ]; then
		[ "$(id -u)" -eq 0 ] || skip "a libsmc-preload.so is installed on this host: the scratch root's needs root to replace it"
		pre=(unshare -m sh -c 'mount --bind "$0" "$1" && shift && exec "$@"' "$lib" "/usr/lib/$MULTIARCH/libsmc-preload.so")
	fi
	pair_py
	"${pre[@]}" smc_run python3 "$BATS_TEST_TMPDIR/pair.py" server >"$BATS_TEST_TMPDIR/server" 2>&1 3>&- &
	PAIR_PIDS="$!"
	port=$(wait_line "$BATS_TEST_TMPDIR/server" listen | cut -d' ' -f2)
	"${pre[@]}" smc_run python3 "$BATS_TEST_TMPDIR/pair.py" client "$port" >"$BATS_TEST_TMPDIR/client" 2>&1 3>&- &
	PAIR_PIDS="$PAIR_PIDS $!"
	cport=$(wait_line "$BATS_TEST_TMPDIR/client" done | cut -d' ' -f2)
	wait_line "$BATS_TEST_TMPDIR/server" done
	# the scratch root's library is the one preloaded (its inode in maps)
	ino=$(stat -c %i "$lib")
	for pid in $PAIR_PIDS; do
		py=$(pgrep -P "$pid" || echo "$pid")   # unshare's child or the program
		awk -v ino="$ino" '$5 == ino && $6 ~ /libsmc-preload\.so$/ { f = 1 } END { exit !f }' "/proc/$py/maps"
	done
	# both ends on the soft SMC-D data path
	for _ in $(seq 100); do
		run smcss -a
		[ "$(grep -c " SMCD *\$" <<<"$output")" -eq 2 ] && break
		sleep 0.05
	done
	printf '%s\n' "$output"
	grep -Eq "127\.0\.0\.1:$cport +127\.0\.0\.1:$port .* SMCD *\$" <<<"$output"
	grep -Eq "127\.0\.0\.1:$port +127\.0\.0\.1:$cport .* SMCD *\$" <<<"$output"
}
