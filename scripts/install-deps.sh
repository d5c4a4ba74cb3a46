#!/usr/bin/env bash
# Install what smc-tools needs to build, test and run its demo (Debian/Ubuntu).
# Idempotent: packages already present are left alone.  Needs root (or sudo).
set -euo pipefail

packages=(
	build-essential pkg-config
	libnl-3-dev libnl-genl-3-dev libmnl-dev     # build
	bats python3 iproute2 procps                # command-line tests
	clang libclang-rt-14-dev                    # libFuzzer target of make check
	bash-completion man-db                      # install and page checks
	# real programs under smc_run (tests/cli/soft_programs.bats, bench/run.sh)
	sockperf iperf3 redis-server redis-tools nginx-light wrk socat curl openssl
	util-linux                                  # taskset
	tcpdump tshark                              # smcdump-ex and its capture test
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all packages present"
	exit 0
fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
# Install only: never start the services these packages ship (redis-server,
# nginx); the tests and the benchmark start private instances.  A
# policy-rc.d that denies service starts is put in place for the install
# when the system has none (nginx's own start would fail the install when
# port 80 is taken).
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
	"${sudo[@]}" chmod 755 "$policy"
	trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi
rc=0
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" || rc=$?
exit "$rc"
