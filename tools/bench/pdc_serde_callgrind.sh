#!/bin/sh
# pdc_serde_callgrind.sh - instruction counts of pdc-serde-bench's phases
# under valgrind's callgrind: a second measure beside the CPU times, free of
# the noise of a shared machine (instructions are not time: PDC's malloc-
# heavy code retires fewer instructions per cycle than the codec's loops).
#
#   tools/bench/pdc_serde_callgrind.sh [BENCH [RECORDS]]
#
# BENCH defaults to build/bin/pdc-serde-bench, RECORDS to 2000. Runs the
# benchmark once (one run of RECORDS records per phase), then prints each
# phase's inclusive instruction count per record and, per operation, the
# ratio PDC / pdc-ckpt. Needs valgrind (callgrind_annotate comes with it).
set -eu
bench=${1:-build/bin/pdc-serde-bench}
n=${2:-2000}
command -v valgrind >/dev/null || { echo "$0: valgrind not found" >&2; exit 2; }
[ -x "$bench" ] || { echo "$0: $bench: not an executable" >&2; exit 2; }
out=$(mktemp "${TMPDIR:-/tmp}/pdc_serde_cg.XXXXXX")
trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" -n "$n" -r 1 >/dev/null 2>&1 ||
    { echo "$0: $bench failed under callgrind" >&2; exit 1; }
callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk -v n="$n" '
    /:phase_[a-z_]+ \[/ {
        c = $1; gsub(",", "", c)
        f = $0; sub(/.*:phase_/, "", f); sub(/ .*/, "", f)
        ir[f] = c / n
    }
    END {
        split("encode by_key one_pass", ops, " ")
        printf "instructions per record (callgrind, %d records)\n", n
        printf "%-10s %12s %12s %10s\n", "", "PDC", "pdc-ckpt", "PDC/ours"
        for (i = 1; i <= 3; i++) {
            p = ir["pdc_" ops[i]]; c = ir["ck_" ops[i]]
            if (p == "" || c == "") { print "missing phase " ops[i] > "/dev/stderr"; exit 1 }
            printf "%-10s %12.0f %12.0f %9.2fx\n", ops[i], p, c, p / c
        }
        if (ir["ck_by_key_walk"] != "")
            printf "%-10s %12s %12.0f %10s\n", "walk", "-", ir["ck_by_key_walk"], "-"
        if (ir["ck_one_pass_next"] != "")
            printf "%-10s %12s %12.0f %10s\n", "next", "-", ir["ck_one_pass_next"], "-"
    }'
