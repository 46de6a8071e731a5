#!/usr/bin/env bash
# PDC's transfer-request table across close and SIGKILL (NP ranks, restart
# MODE map or rebuild). Objects whose transfer region type is
# PDC_REGION_DYNAMIC or PDC_REGION_LOCAL (PDCprop_set_obj_transfer_region_type)
# send their region transfers through PDCregion_transfer_start_all, which
# registers every written region with the object's metadata server
# (transfer_request_metadata_query_parse; dynamic: the server picks the
# data server with the fewest bytes) and, on a read, asks it which data
# server holds which part. The store logs each region of that table as a
# record `x` . object . geometry in pdc_server.
#  1. `xfer-write`: v0..v3 dynamic, v4..v5 local, each written in 4 blocks
#     and read back; close_server: the store verifies and holds 4 transfer
#     regions per object;
#  2. restart; `xfer-read` reads all 6 back byte for byte (whole, and
#     across two blocks); v6..v7 (dynamic) are written after the restart;
#     3 s of quiet; SIGKILL of every rank: the store verifies and holds 32;
#  3. restart; all 8 read back; close_server and the server exit 0.
# usage: test_pdc_xfer.sh PREFIX CLIENT INSPECT NP MODE
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3") np=$4 mode=$5
pdc_need_mode "$mode" map rebuild

run_client() { pdc_run "^(FAIL|xfer-)" "$1" "$client" "${@:2}"; }

# restart LOG N: a restart that restored N transfer regions (summed over
# the ranks' log lines)
restart() {
    local got
    pdc_restart "$np" "$mode" "$1"
    grep -h "restarted from pdc-ckpt" "$1" || true
    got=$(grep -ho "[0-9]* transfer regions" "$1" | awk '{ s += $1 } END { print s + 0 }')
    [ "$got" -eq "$2" ] || { echo "FAIL: the restart restored $got transfer regions, expected $2"; exit 1; }
}

# stored N WHEN: the store verifies and holds N transfer regions (entries of
# pdc_server whose key starts with 'x')
stored() {
    local nx
    "$inspect" verify "$store"
    nx=$("$inspect" dump "$store" --db pdc_server --prefix x | wc -l)
    echo "transfer regions in the store: $nx"
    [ "$nx" -eq "$1" ] || { echo "FAIL: $nx transfer regions $2, expected $1"; exit 1; }
}

echo "== 1. $np server(s): 4 dynamic and 2 local objects; close"
pdc_start "$np" "$PDC_WORK/server0.log"
run_client "$PDC_WORK/w1.out" xfer-write --objects 4 --part dynamic || { echo "FAIL: xfer-write dynamic"; exit 1; }
run_client "$PDC_WORK/w2.out" xfer-write --first 4 --objects 2 --part local || { echo "FAIL: xfer-write local"; exit 1; }
pdc_close
stored 24 "in the store (6 objects x 4 blocks)"

echo "== 2. restart ($mode); read; 2 more dynamic objects; SIGKILL"
restart "$PDC_WORK/server1.log" 24
run_client "$PDC_WORK/r1.out" xfer-read --objects 6 || { echo "FAIL: xfer-read after close and restart"; exit 1; }
run_client "$PDC_WORK/w3.out" xfer-write --first 6 --objects 2 --part dynamic ||
    { echo "FAIL: xfer-write after the restart"; exit 1; }
sleep 3
pdc_kill9
stored 32 "after SIGKILL"

echo "== 3. restart ($mode) after SIGKILL; read all; close"
restart "$PDC_WORK/server2.log" 32
run_client "$PDC_WORK/r2.out" xfer-read --objects 8 || { echo "FAIL: xfer-read after SIGKILL and restart"; exit 1; }
pdc_close
"$inspect" verify "$store" >/dev/null
echo "PASS: $np server(s), restart $mode: the transfer-request table and its regions' data survive close and SIGKILL"
