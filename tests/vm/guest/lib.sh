# Shared helpers of the guest scenarios (busybox ash).
# check NAME CMD...: run CMD (stdout+stderr), normalise with $NORM (a sed
# script, may be empty), compare with expected/$SCEN/NAME; print PASS/FAIL.
# A missing expected file prints the output (to write expectations from).
NORM=
check() {
	name=$1; shift
	"$@" > /tmp/out.raw 2>&1
	echo "rc=$?" >> /tmp/out.raw
	if [ -n "$NORM" ]; then sed -e "$NORM" /tmp/out.raw > /tmp/out; else cp /tmp/out.raw /tmp/out; fi
	exp=/tests/expected/$SCEN/$name
	if [ -f "$exp" ] && diff -u "$exp" /tmp/out > /tmp/out.diff 2>&1; then
		echo "PASS $SCEN/$name"
	else
		echo "FAIL $SCEN/$name"
		[ -f "$exp" ] && sed 's/^/  | /' /tmp/out.diff || sed 's/^/  > /' /tmp/out
	fi
	NORM=
}
# ok NAME CMD...: PASS when CMD succeeds.
ok() {
	name=$1; shift
	if "$@" > /tmp/ok.out 2>&1; then echo "PASS $SCEN/$name"; else echo "FAIL $SCEN/$name"; sed 's/^/  > /' /tmp/ok.out; fi
}
