#!/usr/bin/env bash
# Install what smc-tools needs (Debian 12, Ubuntu 24.04 and their relatives).
#
#   scripts/install-deps.sh demo   build the tools and run `make demo`
#   scripts/install-deps.sh        everything: also `make check`, the package
#                                  build and the benchmarks
#
# Idempotent: packages already present are left alone.  Needs root (or sudo).
set -euo pipefail

demo_packages=(
	build-essential pkg-config
	libnl-3-dev libnl-genl-3-dev libmnl-dev     # build
	liburing-dev                                # build: the preload reads liburing's rings
	libibverbs-dev                              # build: the preload opens libibverbs for soft SMC-R
	python3 iproute2 procps                     # the demo's helpers
	sockperf                                    # the demo's data path
)
check_packages=(
	bats util-linux                             # command-line tests (taskset)
	clang                                       # libFuzzer target of make check
	bash-completion man-db                      # install and page checks
	python3-jsonschema                          # every -j output against doc/json-schema
	dpkg-dev debhelper lintian fakeroot         # the Debian package test
	systemd                                     # systemd-analyze verify of the units
	# real programs under smc_run (tests/cli/soft_programs.bats, bench/run.sh)
	iperf3 redis-server redis-tools nginx-light wrk socat curl openssl
	openssh-server openssh-client               # sshd under smc_run (soft_sshd.bats)
	rsync                                       # rsync's daemon and client (soft_rsync.bats)
	# PostgreSQL under smc_run (soft_postgres.bats): the metapackage pulls the
	# server postgresql-NN (initdb, postgres and pgbench; postgresql-15 on
	# Debian 12) and postgresql-client-NN (psql); -contrib is not needed
	postgresql
	mariadb-server sysbench                     # io_uring for its files (soft_mariadb.bats)
	tcpdump tshark                              # smcdump-ex and its capture test
)

case "${1:-all}" in
demo) packages=("${demo_packages[@]}") ;;
all) packages=("${demo_packages[@]}" "${check_packages[@]}") ;;
*) echo "install-deps: unknown group: $1 (demo or all)" >&2; exit 2 ;;
esac

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# libFuzzer ships with the runtime of the distribution's default clang:
# libclang-rt-14-dev on Debian 12, libclang-rt-18-dev on Ubuntu 24.04.
clang_rt() {
	local v
	v=$(apt-cache depends clang 2>/dev/null |
		sed -n 's/.*Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -n 1)
	[ -z "$v" ] || echo "libclang-rt-$v-dev"
}

# Root for apt-get, only when something is missing.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "install-deps: not root and no sudo: run it as root to install ${missing[*]:-the packages}" >&2
		exit 1
	fi
}

missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
updated=
if [ "${1:-all}" = all ]; then
	rt=$(clang_rt)
	if [ -z "$rt" ]; then # a machine whose package lists were never fetched
		as_root apt-get update -qq
		updated=1
		rt=$(clang_rt)
	fi
	[ -z "$rt" ] || installed "$rt" || missing+=("$rt")
fi
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all packages present"
	exit 0
fi

echo "install-deps: installing ${missing[*]}"
[ -n "$updated" ] || as_root apt-get update -qq
# Install only: never start the services these packages ship (redis-server,
# nginx, postgresql); the tests and the benchmark start private instances.  A
# policy-rc.d that denies service starts is put in place for the install
# when the system has none (nginx's own start would fail the install when
# port 80 is taken).
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
	as_root chmod 755 "$policy"
	trap 'as_root rm -f "$policy"' EXIT
fi
DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
