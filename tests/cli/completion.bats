#!/usr/bin/env bats
# completion/smc-tools: sourced in bash, its functions driven as readline would.

load helpers

COMPLETION="$SMC_TOP/completion/smc-tools"

# complete WORD...: the last word is the one being completed; prints COMPREPLY
# one per line, sorted.
complete_words() {
	bash -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
		fn=$(complete -p "$1" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$COMPLETION" "$@"
}

teardown() {
	softd_stop
}

@test "completion: the file loads and registers every tool" {
	run bash -c 'source "$1" && for t in smc_pnet smcss smcd smcr smc_run smc_rnics smc_dbg smc_chk smc_softd; do complete -p "$t"; done' _ "$COMPLETION"
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "complete -F _smc_smc smcd" ]
	[ "${lines[3]}" = "complete -F _smc_smc smcr" ]
	[ "${#lines[@]}" -eq 9 ]
}

@test "completion: smcd li -> linkgroup" {
	run complete_words smcd li
	[ "$status" -eq 0 ]
	[ "$output" = "linkgroup" ]
}

@test "completion: smcr objects have no seid, smcd ones do" {
	run complete_words smcr ""
	[ "$output" = "$(printf '%s\n' device help hslimit info linkgroup stats ueid)" ]
	run complete_words smcd -d ""
	[ "$output" = "$(printf '%s\n' device help hslimit info linkgroup seid stats ueid)" ]
	run complete_words smcr hs
	[ "$output" = "hslimit" ]
}

@test "completion: smcd/smcr commands" {
	run complete_words smcd seid ""
	[ "$output" = "$(printf '%s\n' disable enable show)" ]
	run complete_words smcr device ""
	[ "$output" = "show" ]
	run complete_words smcd stats ""
	[ "$output" = "$(printf '%s\n' json reset show)" ]
	run complete_words smcr -d linkgroup ""
	[ "$output" = "$(printf '%s\n' link-show show)" ]
	run complete_words smcr linkgroup link-show ""
	[ "$output" = "$(printf '%s\n' all ibdev netdev)" ]
	run complete_words smcd ueid ""
	[ "$output" = "$(printf '%s\n' add del flush show)" ]
	run complete_words smcr seid ""
	[ "$output" = "" ]
	run complete_words smcr hslimit ""
	[ "$output" = "$(printf '%s\n' disable enable show)" ]
	run complete_words smcd -j hslimit s
	[ "$output" = "show" ]
	run complete_words smcr -
	[ "$output" = "$(printf '%s\n' -a -d -dd -j -v)" ]
}

@test "completion: smc_pnet -I lists interfaces, options otherwise" {
	run complete_words smc_pnet -I ""
	[ "$status" -eq 0 ]
	[[ $'\n'"$output"$'\n' == *$'\nlo\n'* ]]
	run complete_words smc_pnet --s
	[ "$output" = "--show" ]
	run complete_words smc_pnet --j
	[ "$output" = "--json" ]
}

@test "completion: smc_pnet -D lists the soft backend's devices" {
	softd_start --roce sr_test=lo
	run complete_words smc_pnet -D ""
	[ "$status" -eq 0 ]
	[[ $'\n'"$output"$'\n' == *$'\nsoft-ism\n'* ]]
	[[ $'\n'"$output"$'\n' == *$'\nsr_test\n'* ]]
	run complete_words smc_pnet -D sr_
	[ "$output" = "sr_test" ]
}

@test "completion: smc_dbg, smcss, smc_chk, smc_rnics, smc_softd" {
	run complete_words smc_dbg -
	[ "$output" = "$(printf '%s\n' --help --tgz --version)" ]
	run complete_words smcss --sm
	[ "$output" = "$(printf '%s\n' --smcd --smcr)" ]
	run complete_words smc_chk --s
	[ "$output" = "$(printf '%s\n' --server --static-analysis)" ]
	run complete_words smc_chk -C ""
	[ "$output" = "" ]
	run complete_words smc_chk --r
	[ "$output" = "--replay-check" ]
	run complete_words smc_chk -r ""
	[ "$output" = "" ]
	run complete_words smc_chk -i l
	[ "$output" = "lo" ]
	run complete_words smc_rnics --e
	[ "$output" = "--enable" ]
	run complete_words smc_softd --r
	[ "$output" = "--roce" ]
	run complete_words smc_softd --pe
	[ "$output" = "--peer-port" ]
	run complete_words smc_softd --peer-port ""
	[ "$output" = "" ]
	run complete_words smc_softd --sy
	[ "$output" = "--sysfs
--syslog" ]
	run complete_words smc_softd --se
	[ "$output" = "--settings" ]
}

@test "completion: smc_rnics -e offers powered-off FIDs, -d powered-on ones" {
	export SMC_RNICS_ARCH=s390x SMC_SYSFS_ROOT="$SMC_TOP/tests/fixtures/sysfs/s390"
	run complete_words smc_rnics -e ""
	[ "$output" = "1f" ]
	run complete_words smc_rnics --disable 2
	[ "$output" = "$(printf '%s\n' 20 212)" ]
	run complete_words smc_rnics --disable 1f
	[ -z "$output" ]
}
