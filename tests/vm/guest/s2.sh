#!/bin/sh
# Scenario 2: two VMs (vmrole=server / client) joined by -netdev stream, rxe
# on each, UEID and PNET on both; an unmodified TCP echo program under
# smc_run carries data over a real SMC-R connection.
SCEN=s2-$VMROLE
. /tests/lib.sh
export SMC_BACKEND=kernel
PORT=5000

# grepcheck NAME PATTERN FILE: PASS when FILE has a line matching PATTERN.
grepcheck() {
	if grep -q -e "$2" "$3"; then echo "PASS $SCEN/$1"; else echo "FAIL $SCEN/$1: no line matching '$2'"; sed 's/^/  > /' "$3"; fi
}
# agree NAME TEXT JSON: every line of TEXT (expected values) is found in JSON.
agree() {
	bad=
	while IFS= read -r v; do grep -q -F -e "$v" "$3" || bad="$bad [$v]"; done < "$2"
	if [ -z "$bad" ]; then echo "PASS $SCEN/$1"; else echo "FAIL $SCEN/$1: JSON lacks$bad"; sed 's/^/  > /' "$3"; fi
}

ok rdma-link-add rdma link add rxe0 type rxe netdev eth0
ok ueid-add smcr ueid add SMC-VM-TEST-EID
ok pnet-add smc_pnet -a NET1 -I eth0 -D rxe0 -P 1
# Wait for the peer on the wire.
i=0; while ! ping -c 1 -W 1 "$VMPEER" >/dev/null 2>&1 && [ $i -lt "$(slow 20)" ]; do i=$((i + 1)); done
ok ping-peer ping -c 1 -W 2 "$VMPEER"

if [ "$VMROLE" = server ]; then
	ROLE=SERV
	smc_run tcpecho server $PORT > /tmp/echo.out 2>&1 &
	EPID=$!
	i=0; while ! grep -q ACCEPTED /tmp/echo.out && [ $i -lt "$(slow 300)" ]; do sleep 0.1; i=$((i + 1)); done
	ok echo-accepted grep -q ACCEPTED /tmp/echo.out
	# the echo done: 256 KiB in, 256 KiB out (a one-CPU TCG guest may take seconds)
	wait_for 300 sh -c "[ \$(smcr stats | grep -c '^  Data transmitted (Bytes)  *262144 ') -eq 2 ]"
else
	ROLE=CLNT
	echo_client $PORT 12
	grepcheck echo-data 'ECHO OK 262144' /tmp/echo.out
fi

smcss -a -R > /tmp/ss.txt 2>&1
grepcheck smcss-R-smcr "^ACTIVE .* SMCR .*$ROLE" /tmp/ss.txt
smcss -a -R -j > /tmp/ss.json 2>&1
# Key fields of the text outputs, as JSON members: the JSON must agree.
grep '^ACTIVE' /tmp/ss.txt | head -n 1 | awk '{
	ino = $3; sub(/^0+/, "", ino)
	split($4, l, ":"); split($5, p, ":")
	print "\"state\":\"" $1 "\",\"uid\":0,\"inode\":" ino ",\"local_address\":\"" l[1] "\",\"local_port\":" l[2] ",\"peer_address\":\"" p[1] "\",\"peer_port\":" p[2]
	print "\"mode\":\"" $7 "\""
	print "\"role\":\"" $8 "\",\"ib_dev\":\"" $9 "\",\"ib_port\":" $10+0 ",\"link_id\":" $11+0 ",\"gid\":\"" $12 "\",\"peer_gid\":\"" $13 "\""
}' > /tmp/ss.keys
agree smcss-json /tmp/ss.keys /tmp/ss.json
smcr -d linkgroup link-show > /tmp/lg.txt 2>&1
grepcheck linkgroup-link-active 'LINK_ACTIVE' /tmp/lg.txt
smcr -j -d linkgroup link-show > /tmp/lg.json 2>&1
grepcheck linkgroup-json-link-active 'LINK_ACTIVE' /tmp/lg.json
grep LINK_ACTIVE /tmp/lg.txt | head -n 1 | awk '
function hex(s,  i, n) {
	n = 0
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
	return n
}
{
	print "\"lgr_id\":" hex($1) ",\"role\":\"" $2 "\",\"type\":\"" $3 "\""
	print "\"net_dev\":\"" $4 "\",\"link_state\":\"" $5 "\",\"conn_cnt\":" $6 ",\"link_uid\":\"" $7 "\",\"peer_uid\":\"" $8 "\",\"ib_dev\":\"" $9 "\",\"ib_port\":" $10
}' > /tmp/lg.keys
agree linkgroup-json /tmp/lg.keys /tmp/lg.json
smcr linkgroup > /tmp/lgs.txt 2>&1
grepcheck linkgroup-shown "$ROLE" /tmp/lgs.txt
smcr stats > /tmp/st.txt 2>&1
grepcheck stats-smc-conn '^  SMC connections  *1$' /tmp/st.txt
grepcheck stats-no-fallback '^  TCP fallback  *0$' /tmp/st.txt
smcr -j stats > /tmp/st.json 2>&1
awk '/Total connections handled/{t=$4} /SMC connections/{c=$3} /TCP fallback/{f=$3}
     /Data transmitted/{d[++n]=$4}
     END { print "\"connections\":{\"total\":" t ",\"smc\":" c
           print "\"rx\":{\"bytes\":" d[1]; print "\"tx\":{\"bytes\":" d[2]
           if (f == 0) print "\"fallback\":{\"client\":0,\"server\":0" }' /tmp/st.txt > /tmp/st.keys
agree stats-json /tmp/st.keys /tmp/st.json
grepcheck stats-data-bytes '^  Data transmitted (Bytes)  *262144 ' /tmp/st.txt
ok smcss-json-parses grep -q '^{"sockets":\[{.*}\]}$' /tmp/ss.json

fixtures s2-$VMROLE

echo "--- $SCEN outputs"
cat /tmp/ss.txt /tmp/lg.txt /tmp/lgs.txt /tmp/st.txt /tmp/ss.json /tmp/lg.json /tmp/st.json
echo "--- end"

if [ "$VMROLE" = server ]; then
	i=0; while ! grep -q 'SERVER EOF' /tmp/echo.out && [ $i -lt "$(slow 300)" ]; do sleep 0.1; i=$((i + 1)); done
	grepcheck echo-server-eof 'SERVER EOF' /tmp/echo.out
else
	wait $EPID
	ok echo-client-exit test $? = 0
fi
