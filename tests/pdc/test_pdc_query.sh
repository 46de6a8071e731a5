#!/usr/bin/env bash
# kvtag queries (PDC_Client_query_kvtag) after a restart answer what PDC's
# own scan answers on the same data. NP server ranks, restart MODE (map or
# rebuild); pdc-ckpt-query's workload and queries (pdc_query_client.c).
#
#  1. PDC alone (PDC_CKPT=off, no restart): write; the queries (ref0);
#     more (new objects, a kvtag deleted and one put on objects written
#     before, an object deleted); the queries (ref1). These are PDC's own
#     answers; a few are checked against the workload.
#  2. With the store: write, the queries on the warm server (= ref0),
#     close_server; restart; the queries first thing (= ref0; in map form
#     every rank answers each from the store's tag index with none of the
#     store's objects faulted into PDC's tables); more; the queries (= ref1:
#     objects created after the restart, faulted in and not, deleted tags
#     and objects); the queries with tag name patterns too, which fault
#     everything in (= ref1); close; restart; the queries (= ref1).
# Answers are compared as object names (ids differ between the runs).
# usage: test_pdc_query.sh PREFIX QUERY_CLIENT INSPECT NP MODE [OBJECTS]
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

qc=$2 inspect=$3 np=$4 mode=$5 n=${6:-60}
pdc_need_mode "$mode" map rebuild
w=$PDC_WORK
nq=19 # queries without a tag name pattern (Q lines)

# q OUT MANIFEST [--wild 1]: run the queries, keep the answer lines in $w/OUT
q() {
    local out=$1 mf=$2
    shift 2
    pdc_client "$qc" query --manifest "$mf" "$@" >"$w/$out.raw" 2>&1 ||
        { echo "FAIL: the queries ($out) failed"; tail -n 20 "$w/$out.raw"; exit 1; }
    grep -E '^[QW][0-9]' "$w/$out.raw" >"$w/$out" || true
    [ "$(grep -c '^Q' "$w/$out")" -eq "$nq" ] ||
        { echo "FAIL: $out: expected $nq answers"; cat "$w/$out.raw"; exit 1; }
}
# same A B WHAT: answers A and B are the same (B's W lines only if A has them)
same() {
    if ! grep -q '^W' "$w/$1"; then grep '^Q' "$w/$2" >"$w/$2.q"; else cp "$w/$2" "$w/$2.q"; fi
    if ! diff "$w/$2.q" "$w/$1" >"$w/$1.diff"; then
        echo "FAIL: $3 (< PDC's own answer, > this server's)"
        cat "$w/$1.diff"
        exit 1
    fi
}
# answer FILE K: the count and names of query K
answer() { sed -n "s/^[QW]$2 [^:]*: //p" "$w/$1"; }
expect() { # expect FILE K "COUNT NAMES"
    [ "$(answer "$1" "$2")" = "$3" ] ||
        { echo "FAIL: $1 Q$2: PDC answered \"$(answer "$1" "$2")\", expected \"$3\""; exit 1; }
}
# in map form, every rank logs one line per query answered from the tag index
index_lines() { # index_lines LOG: how many such lines say PDC's tables hold no object
    grep -c "pdc-ckpt: kvtag query \[.*PDC's tables hold 0 objects" "$1" || true
}

echo "== PDC's own answers: PDC_CKPT=off, $np server(s), $n objects, no restart"
export PDC_CKPT=off PDC_DISABLE_CHECKPOINT=TRUE
pdc_start "$np" "$w/ref.log"
pdc_client "$qc" write --objects "$n" --manifest "$w/ref.manifest" >"$w/ref-write.out" 2>&1 ||
    { tail "$w/ref-write.out"; echo "FAIL: write (PDC alone)"; exit 1; }
q ref0 "$w/ref.manifest" --wild 1
pdc_client "$qc" more --objects "$n" --manifest "$w/ref.manifest" >"$w/ref-more.out" 2>&1 ||
    { tail "$w/ref-more.out"; echo "FAIL: more (PDC alone)"; exit 1; }
q ref1 "$w/ref.manifest" --wild 1
pdc_close
unset PDC_CKPT PDC_DISABLE_CHECKPOINT
rm -rf "$PDC_TMPDIR"
# PDC's answers are those of the workload (the queries mean something)
expect ref0 0 "1 q3"
expect ref1 0 "0"
expect ref0 4 "0"
expect ref1 4 "1 q1"
expect ref0 5 "0"
expect ref0 11 "1 q5"
expect ref1 11 "0"
expect ref0 15 "0"
expect ref0 18 "0"
[ "$(answer ref0 16 | grep -cE ' q[0-9]*[13579]( |$)')" -eq 0 ] ||
    { echo "FAIL: qx as PDC_INT answered an object whose qx is PDC_UINT64"; exit 1; }
[ "$(answer ref0 13 | cut -d' ' -f1)" -ge 2 ] || { echo "FAIL: ref0 Q13 answered too few"; exit 1; }

echo "== the store: write, the queries warm, close_server"
manifest=$w/manifest
pdc_start "$np" "$w/server0.log"
pdc_client "$qc" write --objects "$n" --manifest "$manifest" >"$w/write.out" 2>&1 ||
    { tail "$w/write.out"; echo "FAIL: write"; exit 1; }
q warm0 "$manifest" --wild 1
same warm0 ref0 "queries on the warm server"
pdc_close

for round in 1 2; do
    echo "== restart $round ($mode): the queries first"
    pdc_restart "$np" "$mode" "$w/server$round.log"
    want=ref0
    [ "$round" -eq 1 ] || want=ref1
    q "a${round}" "$manifest"
    same "a${round}" "$want" "the first queries after restart $round"
    if [ "$mode" = map ]; then
        got=$(index_lines "$w/server$round.log")
        [ "$got" -eq $((nq * np)) ] || {
            echo "FAIL: $got of $((nq * np)) answers from the tag index with PDC's tables empty"
            grep "pdc-ckpt: kvtag query" "$w/server$round.log" | head -n 40
            exit 1
        }
    fi
    if [ "$round" -eq 1 ]; then
        pdc_client "$qc" more --objects "$n" --manifest "$manifest" >"$w/more.out" 2>&1 ||
            { tail "$w/more.out"; echo "FAIL: more after the restart"; exit 1; }
        q b1 "$manifest"
        same b1 ref1 "the queries after new objects, deleted tags and objects (restart $round)"
        q c1 "$manifest" --wild 1
        same c1 ref1 "the queries with tag name patterns (restart $round)"
    fi
    pdc_close
    "$inspect" verify "$store" >"$w/verify$round.out" ||
        { cat "$w/verify$round.out"; echo "FAIL: verify after restart $round"; exit 1; }
done
echo "PASS: $np server(s), restart $mode: kvtag queries answer as PDC's own ($n objects)"
