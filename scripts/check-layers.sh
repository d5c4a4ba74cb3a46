#!/usr/bin/env bash
# The layering rule of doc/layers.md, read off the objects of a build: an
# object may use symbols of its own layer and of the layers below it, never
# of a layer above.  One line per layer, "PASS layers: ..." or "FAIL layers:
# ...", then one line per symbol used against the rule.
#
#   scripts/check-layers.sh OBJDIR TREE LAYER... -- OBJECT...
#
# LAYER...: lowest first; OBJECT...: the build's objects of TREE (those of
# OBJDIR/TREE/LAYER/ count for LAYER; an object left over from a file that
# moved is not named, so it does not count).
set -u
if [ $# -lt 5 ]; then
	echo "usage: check-layers.sh OBJDIR TREE LAYER... -- OBJECT..." >&2
	exit 2
fi
objdir=$1 tree=$2
shift 2
layers=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	layers+=("$1")
	shift
done
shift
declare -A layer_of rank objs_of
for i in "${!layers[@]}"; do
	rank[${layers[$i]}]=$i
done
for o in "$@"; do
	rest=${o#"$objdir/$tree/"}
	l=${rest%%/*}
	[ -n "${rank[$l]:-}" ] && objs_of[$l]+="$o "
done

# Which layer defines each global symbol.
for l in "${layers[@]}"; do
	read -r -a objs <<< "${objs_of[$l]:-}"
	if [ ${#objs[@]} -eq 0 ]; then
		echo "FAIL layers: $tree/$l: no objects under $objdir/$tree/$l"
		exit 1
	fi
	while read -r sym; do
		layer_of[$sym]=$l
	done < <(nm --defined-only -g "${objs[@]}" 2>/dev/null | awk 'NF == 3 { print $3 }')
done

bad=0
for l in "${layers[@]}"; do
	lines=()
	read -r -a objs <<< "${objs_of[$l]}"
	for o in "${objs[@]}"; do
		while read -r sym; do
			def=${layer_of[$sym]:-}
			if [ -n "$def" ] && [ "${rank[$def]}" -gt "${rank[$l]}" ]; then
				lines+=("  ${o#"$objdir/"} uses $sym of $tree/$def")
			fi
		done < <(nm --undefined-only "$o" | awk '{ print $NF }')
	done
	if [ ${#lines[@]} -eq 0 ]; then
		echo "PASS layers: $tree/$l uses no layer above it"
	else
		echo "FAIL layers: $tree/$l uses a layer above it"
		printf '%s\n' "${lines[@]}"
		bad=1
	fi
done
exit $bad
