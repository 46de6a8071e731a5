#!/usr/bin/env bash
# Region data and the DART (IDIOMS) index across close_server and restart of
# PDC's real server: NP server ranks; `pdc-ckpt-client data-write` writes
# objects' data with PDC's region transfer API and inserts DART records,
# checking both on the live server; close_server; the store verifies clean
# and each rank left its side file (PDC's transfer-request and data-server
# region tables); then ROUNDS times: restart (MODE: map, rebuild, or pdc =
# PDC_CKPT=off, PDC's own checkpoint file, for comparison), and
# `data-read`: every region's bytes read back, the DART searches (exact,
# prefix, suffix, integer, integer range) answer the records written before
# the close and the one inserted after the earlier restart, a new insert is
# found. ROUNDS (default 2) restarts; the second also checks the record
# inserted after the first, which only the dump at the restarted server's
# close holds.
# usage: test_pdc_data.sh PREFIX CLIENT INSPECT NP MODE [OBJECTS] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=pdc_lib.sh
. "$here/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"

prefix=$1 client=$(realpath "$2") inspect=$(realpath "$3") np=$4 mode=$5 n=${6:-2} rounds=${7:-2}
case "$mode" in map | rebuild | pdc) ;; *) echo "usage: MODE is map, rebuild or pdc"; exit 2 ;; esac
pdc_setup "$prefix"
store=$PDC_TMPDIR/pdc-ckpt
unset PDC_CKPT_RESTART PDC_CKPT PDC_CKPT_DIR
[ "$mode" = pdc ] && export PDC_CKPT=off

# run_client OUT ARGS...: the client's FAIL lines and summary are shown
run_client() {
    local out=$1 st=0
    shift
    pdc_client "$client" "$@" >"$out" 2>&1 || st=$?
    grep -E "^(FAIL|data-)" "$out" || true
    return "$st"
}

echo "== $np server(s): region data of $((2 * n)) objects, DART records; close"
pdc_start "$np" "$PDC_WORK/server0.log"
run_client "$PDC_WORK/write.out" data-write --objects "$n" ||
    { echo "FAIL: data-write on the live server"; exit 1; }
pdc_close

if [ "$mode" != pdc ]; then
    for r in $(seq 0 $((np - 1))); do
        [ -s "$PDC_TMPDIR/pdc-ckpt-transfer.$r" ] ||
            { echo "FAIL: close_server left no side file $PDC_TMPDIR/pdc-ckpt-transfer.$r"; exit 1; }
    done
    "$inspect" verify "$store"
fi

for round in $(seq 1 "$rounds"); do
    echo "== restart $round ($mode): read the regions back, search DART"
    [ "$mode" = rebuild ] && export PDC_CKPT_RESTART=rebuild
    pdc_start "$np" "$PDC_WORK/server$round.log" restart
    unset PDC_CKPT_RESTART
    echo "restart to \"Server ready\": ${PDC_READY_S}s"
    run_client "$PDC_WORK/read$round.out" data-read --objects "$n" --round "$round" ||
        { echo "FAIL: data-read after restart $round ($mode)"; exit 1; }
    pdc_close
done
[ "$mode" = pdc ] || "$inspect" verify "$store"
echo "PASS: $np server(s), restart $mode $rounds time(s): region data and DART records read back"
