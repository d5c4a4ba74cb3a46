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
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
