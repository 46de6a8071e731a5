#!/usr/bin/env bash
# Elastic restart of PDC's real server: a store written by FROM servers
# restarted on TO servers (re-homed by id, docs/ELASTIC.md "In PDC's
# server"), then on FROM again, in restart MODE (map or rebuild). After each
# restart PDC's unmodified client library, which routes names and ids over
# the new count on its own, must find:
#  - every container and live object by name, with the id it was created
#    with (pdc-ckpt-client read), and an existing name cannot be created
#    again (dupcheck);
#  - every kvtag by the owner's id, with its size and value (read);
#  - new objects (the deleted names again, one more) with ids no object or
#    container had (read --new);
#  - the same kvtag query answers as the warm FROM servers gave, every
#    object once (pdc-ckpt-query query, also with tag name patterns, which
#    fault every record and alias in);
#  - the region data of 2 x 2 objects (pdc-ckpt-client data-write, 1-D and
#    2-D, with an overwrite), read back byte for byte, whole and in part
#    (data-read);
#  - the DART searches (pdc-ckpt-dart answers: exact, prefix, suffix,
#    integer, range) answer exactly as the warm servers did before the
#    re-homing (records 0..39, every 7th deleted), records inserted after
#    the previous restart included;
#  - on 2 or more servers, an object whose name and id now go to two servers
#    (a name alias in the store; back on FROM, one created on TO): its
#    PDCobj_set_dims and PDCobj_del are refused, the server says why, and
#    it still opens with its id;
# and the store must verify with exactly TO (then FROM) rank directories.
# usage: test_pdc_elastic.sh PREFIX CLIENT QUERY_CLIENT DART_CLIENT INSPECT FROM TO MODE [OBJECTS]
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$2 qc=$3 dart=$4 inspect=$5 from=$6 to=$7 mode=$8 n=${9:-40}
pdc_need_mode "$mode" map rebuild
w=$PDC_WORK
manifest=$w/manifest
nq=19 # queries without a tag name pattern (pdc_query_client.c)
dstate=$w/dart.state du=60 # DART records: the client's state file, and 0..du-1
# d CMD ARGS...: pdc-ckpt-dart with the state file
d() { pdc_run "^(FAIL|pdc-ckpt-dart)" "$w/dart-$1.out" "$dart" "$@" --state "$dstate"; }
# dart_answers OUT: the DART searches' answers into $w/OUT
dart_answers() { d answers --universe "$du" --out "$w/$1" || { echo "FAIL: DART searches ($1)"; exit 1; }; }

# q OUT [--wild 1]: the kvtag queries, answer lines in $w/OUT
q() {
    local out=$1
    shift
    pdc_client "$qc" query --manifest "$w/qmanifest" "$@" >"$w/$out.raw" 2>&1 ||
        { echo "FAIL: the queries ($out) failed"; tail -n 20 "$w/$out.raw"; exit 1; }
    grep -E '^[QW][0-9]' "$w/$out.raw" >"$w/$out" || true
    [ "$(grep -c '^Q' "$w/$out")" -eq "$nq" ] ||
        { echo "FAIL: $out: expected $nq answers"; cat "$w/$out.raw"; exit 1; }
}

echo "== $from server(s): write $n objects and the query workload, the queries, close"
pdc_start "$from" "$w/server0.log"
pdc_client "$client" write --objects "$n" --manifest "$manifest" >"$w/write.out" 2>&1 ||
    { grep -E "^(FAIL|write:)" "$w/write.out"; echo "FAIL: the writer failed"; exit 1; }
grep -q "^write: " "$w/write.out" || { echo "FAIL: the writer did not finish"; exit 1; }
pdc_client "$qc" write --objects 30 --manifest "$w/qmanifest" >"$w/qwrite.out" 2>&1 ||
    { tail "$w/qwrite.out"; echo "FAIL: the query workload's write failed"; exit 1; }
q warm --wild 1
d insert --from 0 --to 40 && d delete --from 0 --to 40 --step 7 || { echo "FAIL: DART inserts and deletes"; exit 1; }
dart_answers dart-warm0
pdc_run "^(FAIL|data-write)" "$w/data-write.out" "$client" data-write --objects 2 --dart 0 ||
    { echo "FAIL: region data on the warm servers"; exit 1; }
pdc_close
"$inspect" verify "$store" >"$w/verify0.out" || { cat "$w/verify0.out"; echo "FAIL: verify"; exit 1; }

prev=$from round=0
for np in "$to" "$from"; do
    round=$((round + 1))
    echo "== restart $round on $np server(s) ($mode), the store written by $prev"
    pdc_restart "$np" "$mode" "$w/server$round.log"
    grep -F "re-homed the store of $prev servers onto $np" "$w/server$round.log" ||
        { echo "FAIL: restart $round: no re-homing in the log"; exit 1; }
    for r in $(seq 0 $((np - 1))); do
        [ -f "$store/rank-$r/data.mdb" ] || { echo "FAIL: no $store/rank-$r after the re-homing"; exit 1; }
    done
    for e in "rank-$np" .rehome .rehome-old; do
        [ ! -e "$store/$e" ] || { echo "FAIL: $store/$e is left after the re-homing"; exit 1; }
    done
    # first, before any lookup: an existing name cannot be created again
    pdc_run "^(FAIL|dupcheck:)" "$w/dup$round.out" "$client" dupcheck --name o1 ||
        { echo "FAIL: dupcheck after restart $round"; exit 1; }
    if [ "$np" -ge 2 ]; then
        # a live object of the workload with a name alias (read-only dump of
        # the running servers' store)
        "$inspect" dump "$store" --db pdc_server --prefix a >"$w/aliases$round" ||
            { echo "FAIL: dump of the aliases"; exit 1; }
        moved=
        for nm in $(grep -oE '"name":"(o|new)[0-9]+"' "$w/aliases$round" | cut -d'"' -f4); do
            if awk -v n="$nm" '($1 == "obj" || $1 == "new") && $2 == n { f = 1 } END { exit !f }' "$manifest"; then
                moved=$nm
                break
            fi
        done
        [ -n "$moved" ] || { cat "$w/aliases$round"; echo "FAIL: no object of the workload has a name alias"; exit 1; }
        pdc_run "^(FAIL|keepdel:)" "$w/keepdel$round.out" "$client" keepdel --name "$moved" ||
            { echo "FAIL: changes of $moved (name and id on two servers) after restart $round"; exit 1; }
        grep -qF "refused a change of object" "$w/server$round.log" ||
            { echo "FAIL: the server does not say why it refused the change of $moved"; exit 1; }
    fi
    q "a$round"
    grep '^Q' "$w/warm" | diff - "$w/a$round" >"$w/a$round.diff" ||
        { cat "$w/a$round.diff"; echo "FAIL: restart $round: kvtag queries differ from the warm $from servers' (<)"; exit 1; }
    pdc_run "^(FAIL|data-read)" "$w/data-read$round.out" "$client" data-read --objects 2 --round "$round" \
        --dart 0 || { echo "FAIL: region data after restart $round"; exit 1; }
    dart_answers "dart$round"
    diff "$w/dart-warm$((round - 1))" "$w/dart$round" ||
        { echo "FAIL: restart $round: DART answers differ from the warm $prev servers' (<)"; exit 1; }
    # more records on this count: the next re-homing carries them (no
    # deletes: PDC's IDIOMS loses integer entries after some later deletes,
    # on a warm server too)
    d insert --from $((30 + 10 * round)) --to $((40 + 10 * round)) ||
        { echo "FAIL: DART inserts after restart $round"; exit 1; }
    dart_answers "dart-warm$round"
    pdc_run "^(FAIL|PASS|read:|note:|new object)" "$w/read$round.out" "$client" read --objects "$n" \
        --manifest "$manifest" --new "new$round" || { echo "FAIL: read after restart $round"; exit 1; }
    q "b$round" --wild 1
    diff "$w/warm" "$w/b$round" >"$w/b$round.diff" ||
        { cat "$w/b$round.diff"; echo "FAIL: restart $round: kvtag queries with patterns differ from the warm $from servers' (<)"; exit 1; }
    pdc_close
    "$inspect" verify "$store" >"$w/verify$round.out" ||
        { cat "$w/verify$round.out"; echo "FAIL: verify after restart $round"; exit 1; }
    grep -F "$np ranks" "$w/verify$round.out" >/dev/null ||
        { cat "$w/verify$round.out"; echo "FAIL: the store after restart $round is not of $np ranks"; exit 1; }
    prev=$np
done
echo "PASS: $from -> $to -> $from servers, restart $mode: every object by name and id with its kvtags and region data, new ids unused, kvtag and DART queries as before"
