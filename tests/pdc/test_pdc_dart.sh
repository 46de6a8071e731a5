#!/usr/bin/env bash
# PDC's DART (IDIOMS) index in the store, on PDC's real server (NP ranks,
# restart MODE map or rebuild), with `pdc-ckpt-dart` (pdc_dart_client.c):
#  1. insert records 0..N-1 (a string key = value and an integer key each),
#     delete every 7th; the searches (exact, prefix, suffix, integer,
#     integer range) answer exactly the live records on the warm server,
#     whose answers are kept; close_server: the store verifies clean and
#     holds DART entries, and PDC wrote no dump (dart_info.bin, a file per
#     virtual node);
#  2. restart: the log shows no IDIOMS recovery; the searches answer what
#     the warm server answered before the close; records inserted after the
#     restart (and some of them deleted) are found; 2 s of quiet (the
#     store's background commit is every 100 ms), SIGKILL of every rank;
#  3. restart: the store verified clean as the crash left it; the searches
#     answer what the server answered before the kill, the entries
#     inserted and deleted after the first restart included.
# usage: test_pdc_dart.sh PREFIX DART_CLIENT INSPECT NP MODE [N]
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3") np=$4 mode=$5 n=${6:-200}
pdc_need_mode "$mode" map rebuild
state=$PDC_WORK/dart.state
universe=$((n + 60))

# run_client OUT ARGS...: the client's FAIL lines and summary are shown
run_client() { pdc_run "^(FAIL|pdc-ckpt-dart)" "$1" "$client" "${@:2}"; }
answers() { # answers FILE WHEN
    run_client "$PDC_WORK/$1.out" answers --state "$state" --universe "$universe" \
        --out "$PDC_WORK/$1.txt" || { echo "FAIL: DART searches $2"; exit 1; }
}
same_answers() { # same_answers BEFORE AFTER WHEN
    cmp -s "$PDC_WORK/$1.txt" "$PDC_WORK/$2.txt" || {
        echo "FAIL: DART answers $3 differ from the warm server's:"
        diff "$PDC_WORK/$1.txt" "$PDC_WORK/$2.txt" | head -20
        exit 1
    }
    echo "DART answers $3: the same as the warm server's ($(wc -l <"$PDC_WORK/$1.txt") searches)"
}
restart() { # restart LOG
    pdc_restart "$np" "$mode" "$PDC_WORK/$1"
    echo "restart ($mode) to \"Server ready\": ${PDC_READY_S}s"
    grep -h "DART index:" "$PDC_WORK/$1" || { echo "FAIL: no DART index restored from the store"; exit 1; }
    ! grep -q "IDIOMS_Index_Recover" "$PDC_WORK/$1" ||
        { echo "FAIL: the restart ran PDC's IDIOMS recovery"; exit 1; }
}

echo "== 1. $np server(s): $n DART records, every 7th deleted; close"
pdc_start "$np" "$PDC_WORK/server0.log"
run_client "$PDC_WORK/ins0.out" insert --state "$state" --from 0 --to "$n" ||
    { echo "FAIL: DART inserts on the live server"; exit 1; }
run_client "$PDC_WORK/del0.out" delete --state "$state" --from 0 --to "$n" --step 7 ||
    { echo "FAIL: DART deletes on the live server"; exit 1; }
answers warm1 "on the live server"
pdc_close
"$inspect" verify "$store"
ni=$("$inspect" dump "$store" --db pdc_server --prefix i | wc -l)
[ "$ni" -gt 0 ] || { echo "FAIL: the store holds no DART entries"; exit 1; }
echo "the store holds $ni DART entries"
if ls "$PDC_TMPDIR"/*.bin >/dev/null 2>&1; then
    echo "FAIL: close_server wrote PDC's IDIOMS dump:"; ls "$PDC_TMPDIR"/*.bin | head; exit 1
fi

echo "== 2. restart ($mode): the same answers; records inserted and deleted after it; SIGKILL"
restart server1.log
answers r1 "after close and restart"
same_answers warm1 r1 "after close and restart"
run_client "$PDC_WORK/ins1.out" insert --state "$state" --from "$n" --to "$universe" ||
    { echo "FAIL: DART inserts after the restart"; exit 1; }
run_client "$PDC_WORK/del1.out" delete --state "$state" --from "$n" --to "$universe" --step 5 ||
    { echo "FAIL: DART deletes after the restart"; exit 1; }
answers warm2 "after inserts on the restarted server"
sleep 2
pdc_kill9
"$inspect" verify "$store"

echo "== 3. restart ($mode) after SIGKILL: the same answers"
restart server2.log
answers r2 "after SIGKILL and restart"
same_answers warm2 r2 "after SIGKILL and restart"
pdc_close
"$inspect" verify "$store"
echo "PASS: $np server(s), restart $mode: DART answers survive close and SIGKILL"
