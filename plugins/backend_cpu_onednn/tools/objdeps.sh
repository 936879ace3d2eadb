#!/bin/sh
# The link-time dependency graph of object files, and whether it has a cycle.
#
#   tools/objdeps.sh OBJECT.o...
#
# Prints one line per file, "a -> b c" when a.o uses a global symbol that b.o and c.o define
# (nm), then the files in dependency order (tsort: a file after every file it uses). Exits 1 and
# names the files of every cycle when there is one: the oneDNN backend's files must depend on
# each other in layers (the dispatcher compile.c on the op files, never the other way round).
# The test onednn_objects_acyclic runs it on the plugin's objects. Needs nm, awk, join, sort and
# tsort (binutils and coreutils).
set -eu
[ $# -gt 0 ] || { echo "usage: $0 OBJECT.o..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name() { basename "$1" | sed 's/\.c\.o$//; s/\.o$//'; }
for o in "$@"; do
  n=$(name "$o")
  # global definitions (upper-case types other than U): "symbol file"
  nm -P --defined-only "$o" | awk -v f="$n" '$2 ~ /^[A-TV-Z]$/ { print $1, f }'
done | sort -k1,1 > "$tmp/defs"
for o in "$@"; do
  n=$(name "$o")
  nm -P --undefined-only "$o" | awk -v f="$n" '{ print $1, f }'
done | sort -k1,1 > "$tmp/uses"
# "symbol user definer" -> edges "user definer" between two different files
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u > "$tmp/edges"
for o in "$@"; do
  n=$(name "$o")
  printf '%s ->' "$n"
  awk -v f="$n" '$1 == f { printf " %s", $2 }' "$tmp/edges"
  printf '\n'
  echo "$n $n" >> "$tmp/edges" # every file is a node, even with no edge
done
echo "$(awk '$1 != $2' "$tmp/edges" | wc -l) dependencies between $# files"
# tsort orders "a b" pairs a before b: reversed edges list dependencies first
if awk '{ print $2, $1 }' "$tmp/edges" | tsort > "$tmp/order" 2> "$tmp/loops"; then
  echo "no cycle; dependency order: $(tr '\n' ' ' < "$tmp/order")"
else
  echo "CYCLE among these files (tsort):" >&2
  sed 's/^tsort: /  /' "$tmp/loops" >&2
  exit 1
fi
