#!/usr/bin/env bats
# One JSON: every -j/--json output of every tool validates against its
# published schema (doc/json-schema/<name>.schema.json, JSON Schema draft
# 2020-12, checked with python3-jsonschema): on a private soft backend with
# state in every list (a PNET table, a UEID, registered and paired sockets,
# a link group), on the s390 and x86 sysfs fixtures of smc_rnics, and on the
# recorded real-kernel replies (tests/fixtures/kernel-6.12) as the unit
# tests render them.  The schemas forbid unknown keys and fix each type, so
# a renamed key or a number printed as a string fails here.

load helpers

SCHEMAS="$BATS_TEST_DIRNAME/../../doc/json-schema"

setup_file() {
	export VALIDATE="$BATS_FILE_TMPDIR/validate.py"
	cat >"$VALIDATE" <<'PY'
# validate.py SCHEMA_DIR FILE...: FILE is <schema>.<anything>.json; one line per error.
import json, sys
from jsonschema import Draft202012Validator
bad = 0
for path in sys.argv[2:]:
    name = path.rsplit("/", 1)[-1].split(".")[0]
    with open("%s/%s.schema.json" % (sys.argv[1], name)) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    with open(path) as f:
        doc = json.load(f)
    for e in sorted(Draft202012Validator(schema).iter_errors(doc), key=str):
        bad += 1
        where = "/".join(map(str, e.absolute_path)) or "(root)"
        print("%s: %s: %s" % (path, where, e.message))
sys.exit(1 if bad else 0)
PY
}

validate() {
	python3 "$VALIDATE" "$SCHEMAS" "$@"
}

# json_is SCHEMA LABEL COMMAND...: the command exits 0 with nothing on
# stderr and one JSON document that SCHEMA accepts.
json_is() {
	local schema=$1 label=$2 file
	shift 2
	file="$BATS_TEST_TMPDIR/$schema.$label.json"
	run --separate-stderr "$@"
	if [ "$status" -ne 0 ] || [ -n "$stderr" ]; then
		echo "$*: exit $status, stderr: $stderr" >&2
		return 1
	fi
	printf '%s\n' "$output" >"$file"
	[ "$(wc -l <"$file")" -eq 1 ] || { echo "$*: not one line" >&2; return 1; }
	validate "$file" || { echo "$*: $output" >&2; return 1; }
}

# jq-free member count: how many objects a top-level array holds.
count() { # KEY
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)[sys.argv[1]]))' "$1" <<<"$output"
}

PAIR_PIDS=()

# Wait for a background helper's line matching $1 in file $2.
wait_line() {
	for _ in $(seq 200); do
		grep -q "$1" "$2" && return 0
		sleep 0.05
	done
	echo "no '$1' in $2:" >&2
	cat "$2" >&2
	return 1
}

# A soft backend with something in every list.
soft_state() {
	softd_start --roce sr_test=lo
	smc_pnet -a NET1 -I lo
	smc_pnet -a NET1 -D soft-ism
	smc_pnet -a NET2 -D sr_test -P 1
	smcd ueid add TEST1
	smcd ueid add SMC-JSON-EID
	"$SMC_BIN/tests/soft_client" -s init listen 0 connect 0 connect6 0 listen6 0 \
		>"$BATS_TEST_TMPDIR/client" 2>&1 3>&- &
	PAIR_PIDS+=("$!")
	"$SMC_BIN/tests/soft_pair" hold paired >"$BATS_TEST_TMPDIR/pair" 2>&1 3>&- &
	PAIR_PIDS+=("$!")
	wait_line '^ready' "$BATS_TEST_TMPDIR/client"
	wait_line '^ready ' "$BATS_TEST_TMPDIR/pair"
}

teardown() {
	local pid
	for pid in "${PAIR_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	PAIR_PIDS=()
	[ -z "${SOFTD_PID:-}" ] || softd_stop
}

@test "schemas are valid JSON Schema (draft 2020-12)" {
	for s in "$SCHEMAS"/*.schema.json; do
		python3 -c 'import json,sys
from jsonschema import Draft202012Validator
Draft202012Validator.check_schema(json.load(open(sys.argv[1])))' "$s"
	done
}

@test "smc_pnet -j: the table and one PNET ID" {
	soft_state
	json_is smc_pnet all smc_pnet -j
	[ "$(count pnet)" -eq 3 ]
	[[ "$output" == *'{"pnet_id":"NET1","net_dev":"lo","ib_dev":null,"ib_port":null}'* ]]
	[[ "$output" == *'{"pnet_id":"NET2","net_dev":null,"ib_dev":"sr_test","ib_port":1}'* ]]
	json_is smc_pnet show smc_pnet -s NET2 --json
	[ "$(count pnet)" -eq 1 ]
	json_is smc_pnet empty smc_pnet -s NOSUCH -j
}

@test "smcss -j: every listing mode" {
	soft_state
	json_is smcss plain smcss -j
	json_is smcss all smcss -a -j
	[ "$(count sockets)" -ge 8 ]
	json_is smcss listening smcss -l -j
	json_is smcss debug smcss -d -j
	json_is smcss all_debug smcss -a -d -j
	json_is smcss all_debug2 smcss -a -dd --json
	json_is smcss smcd smcss -D -j
	[[ "$output" == *'"smcd":{"gid":'* ]]
	json_is smcss smcd_all smcss -a -D -d -j
	json_is smcss smcr smcss -R -j
	json_is smcss smcr_all smcss -a -R -j
	json_is smcss wide smcss -a -W -j
}

@test "smcd/smcr -j info" {
	soft_state
	json_is smc_info smcd smcd -j info
	json_is smc_info smcr smcr --json info show
}

@test "smcd/smcr -j device" {
	soft_state
	json_is smcd_device plain smcd -j device
	[[ "$output" == *'"pnet_id":"NET1","pnet_user":true'* ]]
	json_is smcd_device details smcd -j -d device show all
	json_is smcr_device plain smcr -j device
	[[ "$output" == *'"ib_dev":"sr_test"'* ]]
	json_is smcr_device details smcr -j -dd device
	json_is smcr_device ibdev smcr -j device ibdev sr_test
	json_is smcr_device none smcr -j device netdev nosuch0
	[ "$output" = '{"devices":[]}' ]
}

@test "smcd/smcr -j linkgroup" {
	soft_state
	json_is smcd_linkgroup plain smcd -j linkgroup
	[ "$(count linkgroups)" -eq 1 ]
	json_is smcd_linkgroup details smcd -j -d linkgroup show all
	# the soft ISM device's GID is 128 bits: both halves, each side's
	[[ "$output" == *'"gid":'*',"gid_ext":'*',"peer_gid":'*',"peer_gid_ext":'* ]]
	json_is smcr_linkgroup plain smcr -j linkgroup
	json_is smcr_linkgroup links smcr -j linkgroup link-show
}

@test "smcd/smcr -j stats, and upstream's stats json" {
	soft_state
	json_is smc_stats smcd smcd -j stats
	json_is smc_stats smcd_abs smcd -j -a stats
	json_is smc_stats smcd_details smcd -j -d stats show
	json_is smc_stats smcr smcr -j stats
	json_is smc_stats smcr_abs smcr -j -ad stats
	json_is smc_stats_upstream smcd smcd stats json
	json_is smc_stats_upstream smcr smcr stats json
}

@test "smcd/smcr -j ueid show, smcd -j seid show" {
	soft_state
	json_is smc_ueid smcd smcd -j ueid show
	[ "$output" = '{"ueids":["TEST1","SMC-JSON-EID"]}' ] || [ "$output" = '{"ueids":["SMC-JSON-EID","TEST1"]}' ]
	json_is smc_ueid smcr smcr -j ueid
	json_is smcd_seid show smcd -j seid show
	json_is smcd_seid default smcd -j seid
}

@test "smcd/smcr -j hslimit show, off and on" {
	softd_start
	json_is smc_hslimit off smcd -j hslimit show
	[ "$output" = '{"enabled":false}' ]
	smcd hslimit enable
	json_is smc_hslimit on smcr -j hslimit
	[ "$output" = '{"enabled":true}' ]
}

@test "smc_rnics -j: soft devices (x86), the s390 sysfs fixture, DIBS devices" {
	local fix="$BATS_TEST_DIRNAME/../fixtures/sysfs"
	soft_state
	export SMC_RNICS_ARCH=x86_64 SMC_SYSFS_ROOT="$fix/x86"
	json_is smc_rnics x86 smc_rnics -j
	[[ "$output" == *'"ib_dev":"sr_test","pci_id":null,"type":"soft-roce","ib_port":1,"port_state":"ACTIVE","pnet_id":"NET2","pnet_user":true'* ]]
	json_is smc_rnics x86_all smc_rnics -a -I -r -j
	export SMC_RNICS_ARCH=s390x SMC_SYSFS_ROOT="$fix/s390"
	json_is smc_rnics s390 smc_rnics -j
	json_is smc_rnics s390_all smc_rnics -a -j
	json_is smc_rnics s390_ib smc_rnics -a -I -j
	json_is smc_rnics s390_raw smc_rnics -a -r -j
	json_is smc_rnics s390_ib_raw smc_rnics -a -r -I -j
	json_is smc_rnics s390_fid smc_rnics 212 -j
	[ "$(count rnics)" -eq 2 ]
	json_is smc_rnics s390_dibs smc_rnics -D -j
	[ "$(count rnics)" -eq 2 ]
	json_is smc_rnics s390_dibs_fid smc_rnics -D -j 1004
	export SMC_RNICS_ARCH=x86_64 SMC_SYSFS_ROOT="$fix/x86"
	json_is smc_rnics x86_dibs smc_rnics -D -j
}

# The unit test kernel_fixture_json renders every -j command on the recorded
# replies of a real 6.12 kernel and writes them out.
kernel_outputs() {
	local dir=$1
	(cd "$BATS_TEST_DIRNAME/../.." && SMC_JSON_DIR="$dir" "$SMC_BIN/tests/unit_tests" kernel_fixture_json) >"$dir.log" 2>&1 ||
		{ cat "$dir.log" >&2; return 1; }
	grep -qx 'PASS unit: kernel_fixture_json' "$dir.log"
}

@test "recorded kernel replies: every -j output validates" {
	local dir="$BATS_TEST_TMPDIR/kernel"
	mkdir "$dir"
	kernel_outputs "$dir"
	[ "$(ls "$dir" | wc -l)" -ge 60 ]
	validate "$dir"/*.json
	# the recording has SMC-R and SMC-D sockets, links and devices
	grep -q '"smcr":{"role":' "$dir"/smcss.s2-server.a_R.json
	grep -q '"links":\[{' "$dir"/smcr_linkgroup.s2-server.link-show.json
	# and the 6.12 kernel's SMC-Rv2.1 limits of its link group
	grep -q '"max_conns":255,"max_links":2,' "$dir"/smcr_linkgroup.s2-server.show.json
}

@test "a renamed key or a number as a string fails validation" {
	local dir="$BATS_TEST_TMPDIR/kernel" f m n=0
	mkdir "$dir" "$dir.bad"
	kernel_outputs "$dir"
	SMC_RNICS_ARCH=s390x SMC_SYSFS_ROOT="$BATS_TEST_DIRNAME/../fixtures/sysfs/s390" \
		smc_rnics -a -j >"$dir/smc_rnics.s390.all.json"
	for f in "$dir"/*.json; do
		m="$dir.bad/$(basename "$f")"
		# the last key of the document renamed
		python3 -c 'import re,sys
s = open(sys.argv[1]).read()
keys = list(re.finditer(r"\"([A-Za-z0-9_]+)\":", s))
k = keys[-1]
open(sys.argv[2], "w").write(s[:k.start(1)] + k.group(1) + "_x" + s[k.end(1):])' "$f" "$m"
		run validate "$m"
		[ "$status" -eq 1 ] || { echo "renamed key accepted: $m" >&2; return 1; }
		# the last number of the document as a string
		if grep -q ':[0-9]' "$f"; then
			sed -E 's/(.*):([0-9]+)/\1:"\2"/' "$f" >"$m"
			run validate "$m"
			[ "$status" -eq 1 ] || { echo "string number accepted: $m" >&2; return 1; }
			n=$((n + 1))
		fi
	done
	[ "$n" -ge 40 ]
}
