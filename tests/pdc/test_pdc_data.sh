#!/usr/bin/env bash
# Region data and the DART (IDIOMS) index across close_server and restart of
# PDC's real server: NP server ranks; `pdc-ckpt-client data-write` writes
# objects' data with PDC's region transfer API and inserts DART records,
# checking both on the live server; close_server; the store verifies clean
# and holds PDC's data-server region table (database pdc_server), and no
# side file was written; then ROUNDS times: restart (MODE: map, rebuild, or pdc =
# PDC_CKPT=off, PDC's own checkpoint file, for comparison), and
# `data-read`: every region's bytes read back, the DART searches (exact,
# prefix, suffix, integer, integer range) answer the records written before
# the close and the one inserted after the earlier restart, a new insert is
# found. ROUNDS (default 2) restarts; the second also checks the record
# inserted after the first, which the restarted server logged into the
# store (PDC_CKPT=off: which PDC's dump at its close holds).
# usage: test_pdc_data.sh PREFIX CLIENT INSPECT NP MODE [OBJECTS] [ROUNDS]
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3") np=$4 mode=$5 n=${6:-2} rounds=${7:-2}
pdc_need_mode "$mode" map rebuild pdc
[ "$mode" = pdc ] && export PDC_CKPT=off

# run_client OUT ARGS...: the client's FAIL lines and summary are shown
run_client() { pdc_run "^(FAIL|data-)" "$1" "$client" "${@:2}"; }

echo "== $np server(s): region data of $((2 * n)) objects, DART records; close"
pdc_start "$np" "$PDC_WORK/server0.log"
run_client "$PDC_WORK/write.out" data-write --objects "$n" ||
    { echo "FAIL: data-write on the live server"; exit 1; }
pdc_close

if [ "$mode" != pdc ]; then
    ls "$PDC_TMPDIR"/pdc-ckpt-transfer.* >/dev/null 2>&1 &&
        { echo "FAIL: close_server wrote a side file pdc-ckpt-transfer.*"; exit 1; }
    "$inspect" verify "$store"
    # PDC's data-server region table is in the store: r<i>_1d in two halves
    # (the overwrite is in place), r<i>_2d in two row blocks, each split
    # further across the data servers with more than one rank
    nd=$("$inspect" dump "$store" --db pdc_server --prefix d | wc -l)
    [ "$nd" -ge $((4 * n)) ] ||
        { echo "FAIL: the store holds $nd data regions, expected >= $((4 * n))"; exit 1; }
    echo "the store holds $nd data regions"
fi

for round in $(seq 1 "$rounds"); do
    echo "== restart $round ($mode): read the regions back, search DART"
    pdc_restart "$np" "$mode" "$PDC_WORK/server$round.log"
    echo "restart to \"Server ready\": ${PDC_READY_S}s"
    run_client "$PDC_WORK/read$round.out" data-read --objects "$n" --round "$round" ||
        { echo "FAIL: data-read after restart $round ($mode)"; exit 1; }
    pdc_close
done
[ "$mode" = pdc ] || "$inspect" verify "$store"
echo "PASS: $np server(s), restart $mode $rounds time(s): region data and DART records read back"
