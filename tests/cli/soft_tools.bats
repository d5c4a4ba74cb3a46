#!/usr/bin/env bats
# The real tools against smc_softd: PNET table, devices, EIDs, info, link
# groups and statistics, privileges and network namespaces.
#
# The daemon runs in a private network namespace (NS_A) with interface sa0
# and reads a sysfs tree of the test's ($SYSFS) that holds one RDMA device,
# rxe0 on sa0, as `rdma link add rxe0 type rxe netdev sa0` makes it, and
# mlx5_9 on a PCI function.  Tools run in NS_A (the daemon's initial
# namespace) or in NS_B (another namespace with its own PNET table).

load helpers

inA() { ip netns exec "$NS_A" "$@"; }
inB() { ip netns exec "$NS_B" "$@"; }

# A command without CAP_NET_ADMIN, with setpriv or capsh (empty when neither works).
nocap() {
	if [ "$NOCAP" = setpriv ]; then
		setpriv --inh-caps=-net_admin --bounding-set=-net_admin -- "$@"
	else
		capsh --drop=cap_net_admin -- -c 'exec "$@"' -- "$@"
	fi
}

nocapA() { nocap ip netns exec "$NS_A" "$@"; }
nocapB() { nocap ip netns exec "$NS_B" "$@"; }

# True when nocap really runs a command without CAP_NET_ADMIN in its effective set.
drops_net_admin() {
	local eff
	eff=$(nocap sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status 2>/dev/null) || return 1
	[ -n "$eff" ]
	[ $((0x$eff & 0x1000)) -eq 0 ]
}

# rxe0 on sa0 (no PCI parent, as rxe) and mlx5_9 on PCI function
# 0000:05:00.0 with its port down, below $1/class/infiniband.
make_sysfs() {
	local rxe="$1/devices/virtual/infiniband/rxe0" pci="$1/devices/pci0000:00/0000:05:00.0"
	mkdir -p "$rxe/ports/1/gid_attrs/ndevs" "$pci/infiniband/mlx5_9/ports/1" "$1/class/infiniband"
	echo "1: CA" >"$rxe/node_type"
	echo "sa0" >"$rxe/parent"
	echo "4: ACTIVE" >"$rxe/ports/1/state"
	echo "sa0" >"$rxe/ports/1/gid_attrs/ndevs/0"
	echo "0x15b3" >"$pci/vendor"
	echo "0x1016" >"$pci/device"
	echo "1: CA" >"$pci/infiniband/mlx5_9/node_type"
	echo "1: DOWN" >"$pci/infiniband/mlx5_9/ports/1/state"
	ln -s ../../../0000:05:00.0 "$pci/infiniband/mlx5_9/device"
	ln -s ../../devices/virtual/infiniband/rxe0 "$1/class/infiniband/rxe0"
	ln -s ../../devices/pci0000:00/0000:05:00.0/infiniband/mlx5_9 "$1/class/infiniband/mlx5_9"
}

setup_file() {
	[ "$(id -u)" -eq 0 ] || return 0
	export NS_A="smcsoft_a_$$" NS_B="smcsoft_b_$$"
	ip netns add "$NS_A" || return 0
	ip netns add "$NS_B"
	ip -n "$NS_A" link add sa0 type veth peer name sa1
	ip -n "$NS_A" link set sa0 up
	export SYSFS="$BATS_FILE_TMPDIR/sys"
	make_sysfs "$SYSFS"
	export HOST32
	HOST32=$(printf '%-32.32s' "$(uname -n)")
	# smc_softd inside NS_A: softd_start runs $SMC_BIN/smc_softd, here a wrapper
	wrap="$BATS_FILE_TMPDIR/wrap"
	mkdir -p "$wrap"
	printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$NS_A" "$SMC_BIN/smc_softd" > "$wrap/smc_softd"
	chmod 755 "$wrap/smc_softd"
	SMC_BIN="$wrap" softd_start --sysfs "$SYSFS"
	# the tests load helpers.bash again, which resets SMC_SOFT_SOCKET: kept here
	export SOFT_TOOLS_SOCKET="$SMC_SOFT_SOCKET" SOFTD_PID SOFTD_DIR
	export SMC_STATS_CACHE="$BATS_FILE_TMPDIR/smcstats"
	export NOCAP=
	for how in setpriv capsh; do
		if NOCAP=$how drops_net_admin; then
			NOCAP=$how
			break
		fi
	done
}

teardown_file() {
	[ -n "${NS_A:-}" ] || return 0
	SMC_SOFT_SOCKET="${SOFT_TOOLS_SOCKET:-}" softd_stop
	ip netns del "$NS_A" 2>/dev/null || true
	ip netns del "$NS_B" 2>/dev/null || true
}

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
	[ -n "${SOFTD_PID:-}" ] || skip "ip netns is not usable here"
	export SMC_SOFT_SOCKET="$SOFT_TOOLS_SOCKET" SMC_BACKEND=soft
	inA smc_pnet -f
	inB smc_pnet -f
	inA smcd ueid flush
}

@test "soft: smc_pnet add, show, delete with the host's RDMA device" {
	run --separate-stderr inA smc_pnet -a NET1 -I eth0 -D rxe0
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	run --separate-stderr inA smc_pnet
	[ "$status" -eq 0 ]
	[ "$output" = "NET1 eth0 n/a 255
NET1 n/a rxe0 1" ]
	run --separate-stderr inA smc_pnet -s NET1
	[ "$output" = "NET1 eth0 n/a 255
NET1 n/a rxe0 1" ]
	run --separate-stderr inA smc_pnet -d NET1
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run --separate-stderr inA smc_pnet
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "soft: smc_pnet accepts unknown interfaces and devices, refuses duplicates" {
	run --separate-stderr inA smc_pnet -a net2 -I nosuch0
	[ "$status" -eq 0 ]
	run --separate-stderr inA smc_pnet -a NET3 -D mlx5_0 -P 2
	[ "$status" -eq 0 ]
	run --separate-stderr inA smc_pnet -a NET9 -I nosuch0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: Object exists" ]
	run --separate-stderr inA smc_pnet -a NET9 -D mlx5_0
	[ "$stderr" = "smc_pnet: Object exists" ]
	run --separate-stderr inA smc_pnet
	[ "$output" = "NET2 nosuch0 n/a 255
NET3 n/a mlx5_0 2" ]
	run --separate-stderr inA smc_pnet -d NET9
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: Object not found" ]
	run --separate-stderr inA smc_pnet -f
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run --separate-stderr inA smc_pnet
	[ -z "$output" ]
}

@test "soft: a PNET ID set with smc_pnet shows on the devices as user-defined" {
	run --separate-stderr inA smc_pnet -a NET1 -D rxe0
	[ "$status" -eq 0 ]
	run --separate-stderr inA smc_pnet -a NETD -D soft-ism
	[ "$status" -eq 0 ]
	# the port has one already
	run --separate-stderr inA smc_pnet -a NET2 -D rxe0
	[ "$stderr" = "smc_pnet: Object exists" ]
	run --separate-stderr inA smcr device ibdev rxe0
	[ "$status" -eq 0 ]
	[ "$output" = "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  #Links  PNET-ID  
sa0             rxe0        1    ACTIVE  0               No       0  *NET1            " ]
	run --separate-stderr inA smcd device
	[ "$output" = "FID  Type  PCI-ID        PCHID  InUse  #LGs  PNET-ID  
0000 ISM   ffff:00:00.0  ff01   No        0  *NETD            " ]
	run --separate-stderr inA smc_pnet -d NETD
	[ "$status" -eq 0 ]
	# the ISM also answers to its PCI-ID-like name
	run --separate-stderr inA smc_pnet -a NETP -D ffff:00:00.0
	[ "$status" -eq 0 ]
	run --separate-stderr inA smcd device
	[ "$output" = "FID  Type  PCI-ID        PCHID  InUse  #LGs  PNET-ID  
0000 ISM   ffff:00:00.0  ff01   No        0  *NETP            " ]
	run --separate-stderr inA smc_pnet
	[ "$output" = "NET1 n/a rxe0 1
NETP n/a ffff:00:00.0 1" ]
	# flush clears the devices' user-defined PNET IDs too
	inA smc_pnet -f
	run --separate-stderr inA smcr device ibdev rxe0
	[ "$output" = "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  #Links  PNET-ID  
sa0             rxe0        1    ACTIVE  0               No       0                   " ]
}

@test "soft: each network namespace has its own PNET table" {
	inA smc_pnet -a NETA -I eth0
	run --separate-stderr inB smc_pnet -a NETB -I eth0
	[ "$status" -eq 0 ]
	run --separate-stderr inB smc_pnet
	[ "$output" = "NETB eth0 n/a 255" ]
	run --separate-stderr inA smc_pnet
	[ "$output" = "NETA eth0 n/a 255" ]
	# devices only in the daemon's initial namespace
	run --separate-stderr inB smc_pnet -a NETX -D rxe0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: Object exists" ]
	run --separate-stderr inB smc_pnet -d NETA
	[ "$stderr" = "smc_pnet: Object not found" ]
	inB smc_pnet -f
	run --separate-stderr inA smc_pnet
	[ "$output" = "NETA eth0 n/a 255" ]
}

@test "soft: smcr/smcd ueid add, show, the fifth, delete, flush" {
	run --separate-stderr inA smcr ueid add SOME-EID
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run --separate-stderr inA smcr ueid add SOME-EID
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: specified User EID is already defined" ]
	inA smcr ueid add EID2
	inA smcd ueid add EID.3
	inA smcr ueid add EID-4
	run --separate-stderr inA smcr ueid add EID5
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: specified User EID was rejected because the maximum number of User EIDs is reached" ]
	run --separate-stderr inB smcd ueid show
	[ "$status" -eq 0 ]
	[ "$output" = "SOME-EID                        
EID2                            
EID.3                           
EID-4                           " ]
	run --separate-stderr inA smcr ueid del NOPE
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: specified User EID is not defined" ]
	run --separate-stderr inA smcr ueid del EID2
	[ "$status" -eq 0 ]
	run --separate-stderr inA smcd -j ueid
	[ "$output" = '{"ueids":["SOME-EID","EID.3","EID-4"]}' ]
	run --separate-stderr inA smcd ueid flush
	[ "$status" -eq 0 ]
	run --separate-stderr inA smcd ueid
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "soft: smcd seid shows an empty, disabled SEID that cannot be switched" {
	run --separate-stderr inA smcd seid
	[ "$status" -eq 0 ]
	[ "$output" = " [disabled]" ]
	run --separate-stderr inA smcd seid enable
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: operation not supported by kernel" ]
	run --separate-stderr inA smcd seid disable
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: operation not supported by kernel" ]
}

@test "soft: smcd/smcr hslimit per network namespace, changed only with CAP_NET_ADMIN" {
	inA smcd hslimit disable
	inB smcd hslimit disable
	run --separate-stderr inA smcd hslimit
	[ "$status" -eq 0 ]
	[ "$output" = "Handshake limitation: disabled" ]
	[ -z "$stderr" ]
	run --separate-stderr inA smcr hslimit enable
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	run --separate-stderr inA smcd hslimit show
	[ "$output" = "Handshake limitation: enabled" ]
	run --separate-stderr inA smcr -j hslimit
	[ "$output" = '{"enabled":true}' ]
	# the other namespace keeps its own
	run --separate-stderr inB smcd hslimit
	[ "$output" = "Handshake limitation: disabled" ]
	if [ -n "$NOCAP" ]; then
		run --separate-stderr nocapA smcd hslimit disable
		[ "$status" -eq 255 ]
		[ -z "$output" ]
		[ "$stderr" = "Error: Operation not permitted" ]
		run --separate-stderr nocapB smcr hslimit enable
		[ "$status" -eq 255 ]
		[ "$stderr" = "Error: Operation not permitted" ]
		# reading needs no privilege; nothing changed
		run --separate-stderr nocapA smcd hslimit
		[ "$status" -eq 0 ]
		[ "$output" = "Handshake limitation: enabled" ]
		run --separate-stderr nocapB smcr hslimit
		[ "$output" = "Handshake limitation: disabled" ]
	fi
	run --separate-stderr inA smcd hslimit dis
	[ "$status" -eq 0 ]
	run --separate-stderr inA smcd hslimit
	[ "$output" = "Handshake limitation: disabled" ]
}

@test "soft: smcd info and smcr info" {
	run --separate-stderr inA smcd info
	[ "$status" -eq 0 ]
	[ "$output" = "Kernel Capabilities
SMC Version:      2.1
SMC Hostname:     $HOST32
SMC-D Features:   v1 v2
SMC-R Features:   v1 v2

Hardware Capabilities
SEID:             n/a
ISM:              v1 v2
RoCE:             v1 v2" ]
	run --separate-stderr inB smcr info
	[ "$status" -eq 0 ]
	[ "$output" = "$(inA smcd info)" ]
	run --separate-stderr inA smcd -j info
	[ "$output" = "{\"smc_version\":\"2.1\",\"hostname\":\"$(uname -n)\",\"smcd_features\":[\"v1\",\"v2\"],\"smcr_features\":[\"v1\",\"v2\"],\"seid\":null,\"ism\":[\"v1\",\"v2\"],\"roce\":[\"v1\",\"v2\"],\"ism_devices\":1,\"roce_devices\":1}" ]
}

@test "soft: smcr device with details, smcd device, smcr device filters" {
	run --separate-stderr inA smcr -d device
	[ "$status" -eq 0 ]
	[ "$output" = "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit   FID   PCI-ID        PCHID  #Links  PNET-ID  
                mlx5_9      1  INACTIVE  RoCE_Express2   No   0000  0000:05:00.0  0000        0                   
sa0             rxe0        1    ACTIVE  0               No   0000                0000        0                   " ]
	run --separate-stderr inA smcr device netdev sa0
	[ "$output" = "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  #Links  PNET-ID  
sa0             rxe0        1    ACTIVE  0               No       0                   " ]
	run --separate-stderr inA smcr device ibdev nosuch
	[ "$output" = "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  #Links  PNET-ID  " ]
	run --separate-stderr inA smcd device
	[ "$output" = "FID  Type  PCI-ID        PCHID  InUse  #LGs  PNET-ID  
0000 ISM   ffff:00:00.0  ff01   No        0                   " ]
	# the port state is the RDMA port's (rxe's follows its interface)
	echo "1: DOWN" >"$SYSFS/devices/virtual/infiniband/rxe0/ports/1/state"
	run --separate-stderr inA smcr device ibdev rxe0
	echo "4: ACTIVE" >"$SYSFS/devices/virtual/infiniband/rxe0/ports/1/state"
	[ "$output" = "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  #Links  PNET-ID  
sa0             rxe0        1  INACTIVE  0               No       0                   " ]
}

@test "soft: an RDMA device deleted is gone from smcr device, and comes back with its PNET ID" {
	run --separate-stderr inA smc_pnet -a NET1 -D rxe0 -P 1
	[ "$status" -eq 0 ]
	mv "$SYSFS/class/infiniband/rxe0" "$BATS_TEST_TMPDIR/rxe0"
	run --separate-stderr inA smcr device
	[ "$output" = "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  #Links  PNET-ID  
                mlx5_9      1  INACTIVE  RoCE_Express2   No       0                   " ]
	# the PNET table keeps the entry, as the kernel's does
	run --separate-stderr inA smc_pnet
	[ "$output" = "NET1 n/a rxe0 1" ]
	mv "$BATS_TEST_TMPDIR/rxe0" "$SYSFS/class/infiniband/rxe0"
	run --separate-stderr inA smcr device
	[ "$output" = "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  #Links  PNET-ID  
                mlx5_9      1  INACTIVE  RoCE_Express2   No       0                   
sa0             rxe0        1    ACTIVE  0               No       0  *NET1            " ]
}

@test "soft: no link groups yet: smcd and smcr linkgroup print nothing" {
	for cmd in "smcd linkgroup" "smcr linkgroup" "smcr linkgroup link-show" "smcr -dd linkgroup link-show" "smcd -d linkgroup"; do
		run --separate-stderr inA $cmd
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		[ -z "$stderr" ]
	done
	run --separate-stderr inA smcr -j linkgroup
	[ "$output" = '{"linkgroups":[]}' ]
}

@test "soft: smcd stats and smcr -d stats before any connection" {
	run --separate-stderr inA smcd stats
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "SMC-D Connections Summary
  Total connections handled             0
  SMC connections                       0
  Handshake errors                      0
  Avg requests per SMC conn             0.0
  TCP fallback                          0

RX Stats
  Data transmitted (Bytes)              0 (0)
  Total requests                        0
  Buffer usage (Bytes)                  0 (0)
  Buffer full                           0 (0.00%)
            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB
  Bufs        0       0       0       0       0       0       0       0
  Reqs        0       0       0       0       0       0       0       0

TX Stats
  Data transmitted (Bytes)              0 (0)
  Total requests                        0
  Buffer usage (Bytes)                  0 (0)
  Buffer full                           0 (0.00%)
  Buffer full (remote)                  0 (0.00%)
  Buffer too small                      0 (0.00%)
  Buffer too small (remote)             0 (0.00%)
            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB
  Bufs        0       0       0       0       0       0       0       0
  Reqs        0       0       0       0       0       0       0       0

Extras
  Special socket calls                  0" ]
	run --separate-stderr inB smcr -d stats
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "SMC-R Connections Summary
  Total connections handled             0
  SMC connections                       0 (client 0, server 0)
    v1                                  0
    v2                                  0
  Handshake errors                      0 (client 0, server 0)
  Avg requests per SMC conn             0.0
  TCP fallback                          0 (client 0, server 0)

RX Stats
  Data transmitted (Bytes)              0 (0)
  Total requests                        0
  Buffer usage (Bytes)                  0 (0)
  Buffer full                           0 (0.00%)
  Buffer downgrades                     0
  Buffer reuses                         0
            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB
  Bufs        0       0       0       0       0       0       0       0
  Reqs        0       0       0       0       0       0       0       0

TX Stats
  Data transmitted (Bytes)              0 (0)
  Total requests                        0
  Buffer usage (Bytes)                  0 (0)
  Buffer full                           0 (0.00%)
  Buffer full (remote)                  0 (0.00%)
  Buffer too small                      0 (0.00%)
  Buffer too small (remote)             0 (0.00%)
  Buffer downgrades                     0
  Buffer reuses                         0
            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB
  Bufs        0       0       0       0       0       0       0       0
  Reqs        0       0       0       0       0       0       0       0

Extras
  Special socket calls                  0
    cork                                0
    nodelay                             0
    sendpage                            0
    splice                              0
    urgent data                         0" ]
	run --separate-stderr inA smcd -a stats json
	[ "$status" -eq 0 ]
	[[ "$output" == '{"SMCD": {"SMC_INT_TX_BUF_8K":0,'*'"SMC_TX_RMB_USAGE":0}}' ]]
}

@test "soft: unprivileged callers are refused and nothing changes" {
	[ -n "$NOCAP" ] || skip "neither setpriv nor capsh can drop CAP_NET_ADMIN here"
	inA smc_pnet -a NET1 -I eth0 -D rxe0
	inA smcd ueid add KEEP
	run --separate-stderr nocapA smc_pnet -a NET2 -I eth1
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: Operation not permitted" ]
	run --separate-stderr nocapA smc_pnet -d NET1
	[ "$stderr" = "smc_pnet: Operation not permitted" ]
	run --separate-stderr nocapA smc_pnet -f
	[ "$stderr" = "smc_pnet: Operation not permitted" ]
	run --separate-stderr nocapB smc_pnet -a NET2 -I eth1
	[ "$stderr" = "smc_pnet: Operation not permitted" ]
	run --separate-stderr nocapA smcr ueid add SOME-EID
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: Operation not permitted" ]
	run --separate-stderr nocapA smcr ueid del KEEP
	[ "$status" -eq 255 ]
	[ "$stderr" = "Error: Operation not permitted" ]
	run --separate-stderr nocapA smcd ueid flush
	[ "$stderr" = "Error: Operation not permitted" ]
	# reading needs no privilege; the tables are unchanged
	run --separate-stderr nocapA smc_pnet
	[ "$status" -eq 0 ]
	[ "$output" = "NET1 eth0 n/a 255
NET1 n/a rxe0 1" ]
	run --separate-stderr nocapA smcd ueid
	[ "$output" = "KEEP                            " ]
	run --separate-stderr nocapA smcr device ibdev rxe0
	[[ "$output" == *"*NET1            " ]]
}

# A process's soft SMC-R link group as the preload tells it (soft_client lgr):
# started with $@, its output in $BATS_TEST_TMPDIR/lgr.out, held until lgr_end.
lgr_hold() {
	rm -f "$BATS_TEST_TMPDIR/lgr.in"
	mkfifo "$BATS_TEST_TMPDIR/lgr.in"
	inA env SMC_SOFT_SOCKET="$SMC_SOFT_SOCKET" "$SMC_BIN/tests/soft_client" "$@" \
		<"$BATS_TEST_TMPDIR/lgr.in" >"$BATS_TEST_TMPDIR/lgr.out" 2>&1 &
	LGR_PID=$!
	exec 8>"$BATS_TEST_TMPDIR/lgr.in"
	for _ in $(seq 100); do
		grep -q '^ready' "$BATS_TEST_TMPDIR/lgr.out" && return 0
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/lgr.out" >&2
	return 1
}

lgr_end() {
	exec 8>&-
	wait "$LGR_PID"
}

@test "soft: a process's SMC-R link group in smcr linkgroup and link-show, gone with the process" {
	inA smc_pnet -a NET1 -D rxe0
	lgr_hold lgr 7 1 peerhost 1:rxe0:1:2:10.1.0.1:10.1.0.2
	grep -qx 'lgr 7' "$BATS_TEST_TMPDIR/lgr.out"
	run --separate-stderr inA smcr linkgroup
	[ "$status" -eq 0 ]
	[ "$(sed 's/ *$//' <<<"$output")" = "LG-ID    LG-Role  LG-Type  VLAN  #Conns  PNET-ID
00000100 SERV     SINGLE      0       2  NET1" ]
	run --separate-stderr inA smcr -d linkgroup
	[[ "$output" == *"Peer-Host: peerhost"* ]]
	[[ "$output" == *"EID      : SMC-TOOLS-SOFT-SMCR-V1"* ]]
	[[ "$output" == *"RMB      : 262144 B"* ]]
	[[ "$output" == *$'Max-Conns: 255\nMax-Links: 2\n'* ]]
	run --separate-stderr inA smcr linkgroup link-show
	[[ "${lines[1]}" =~ \ SERV\ +SINGLE\ +sa0\ +LINK_ACTIVE\ +2\ *$ ]]
	# the device counts the link, and is critical for a group of one link
	run --separate-stderr inA smcr device ibdev rxe0
	[[ "${lines[1]}" =~ ^sa0\ +rxe0\ +1\ +ACTIVE\ .*Yes\ +1\ +\*NET1 ]]
	lgr_end
	run --separate-stderr inA smcr linkgroup
	[ "$status" -eq 0 ]
	[[ "$output" != *SERV* ]]
}

@test "soft: a link group told again with two links is SYMMETRIC; told gone, it goes" {
	lgr_hold lgr 9 0 other 1:rxe0:1:1:10.1.0.1:10.1.0.2,2:rxe0:1:1:10.2.0.1:10.2.0.2 lgr 9 0 other -
	run --separate-stderr inA smcr linkgroup
	[[ "$output" != *CLNT* ]]
	lgr_end
	lgr_hold lgr 9 0 other 1:rxe0:1:1:10.1.0.1:10.1.0.2,2:rxe0:1:1:10.2.0.1:10.2.0.2
	run --separate-stderr inA smcr -d linkgroup link-show
	[ "$status" -eq 0 ]
	# two links, 1 and 2, each with its connection
	[ "$(grep -Ec 'CLNT +SYM +sa0 +LINK_ACTIVE +1 ' <<<"$output")" -eq 2 ]
	lgr_end
}
