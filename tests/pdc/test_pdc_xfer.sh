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
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=pdc_lib.sh
. "$here/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"

prefix=$1 client=$(realpath "$2") inspect=$(realpath "$3") np=$4 mode=$5
case "$mode" in map | rebuild) ;; *) echo "usage: MODE is map or rebuild"; exit 2 ;; esac
pdc_setup "$prefix"
unset PDC_CKPT_RESTART PDC_CKPT PDC_CKPT_DIR PDC_CKPT_COMMIT_EVERY PDC_CKPT_COMMIT_MS
store=$PDC_TMPDIR/pdc-ckpt

run_client() {
    local out=$1 st=0
    shift
    pdc_client "$client" "$@" >"$out" 2>&1 || st=$?
    grep -E "^(FAIL|xfer-)" "$out" || true
    return "$st"
}

restart() {
    [ "$mode" = rebuild ] && export PDC_CKPT_RESTART=rebuild
    pdc_start "$np" "$1" restart
    unset PDC_CKPT_RESTART
    grep -h "restarted from pdc-ckpt" "$1" || true
}

# transfer regions a restart restored, summed over the ranks' log lines
restored() {
    grep -ho "[0-9]* transfer regions" "$1" | awk '{ s += $1 } END { print s + 0 }'
}

# transfer regions in a store: entries of pdc_server whose key starts with 'x'
xfer_regions() {
    "$inspect" dump "$store" --db pdc_server --prefix x | wc -l
}

echo "== 1. $np server(s): 4 dynamic and 2 local objects; close"
pdc_start "$np" "$PDC_WORK/server0.log"
run_client "$PDC_WORK/w1.out" xfer-write --objects 4 --part dynamic || { echo "FAIL: xfer-write dynamic"; exit 1; }
run_client "$PDC_WORK/w2.out" xfer-write --first 4 --objects 2 --part local || { echo "FAIL: xfer-write local"; exit 1; }
pdc_close
"$inspect" verify "$store"
nx=$(xfer_regions)
echo "transfer regions in the store: $nx"
[ "$nx" -eq 24 ] || { echo "FAIL: $nx transfer regions in the store, expected 24 (6 objects x 4 blocks)"; exit 1; }

echo "== 2. restart ($mode); read; 2 more dynamic objects; SIGKILL"
restart "$PDC_WORK/server1.log"
[ "$(restored "$PDC_WORK/server1.log")" -eq 24 ] ||
    { echo "FAIL: the restart restored $(restored "$PDC_WORK/server1.log") transfer regions, expected 24"; exit 1; }
run_client "$PDC_WORK/r1.out" xfer-read --objects 6 || { echo "FAIL: xfer-read after close and restart"; exit 1; }
run_client "$PDC_WORK/w3.out" xfer-write --first 6 --objects 2 --part dynamic ||
    { echo "FAIL: xfer-write after the restart"; exit 1; }
sleep 3
pdc_kill9
"$inspect" verify "$store"
nx=$(xfer_regions)
echo "transfer regions in the store: $nx"
[ "$nx" -eq 32 ] || { echo "FAIL: $nx transfer regions after SIGKILL, expected 32"; exit 1; }

echo "== 3. restart ($mode) after SIGKILL; read all; close"
restart "$PDC_WORK/server2.log"
[ "$(restored "$PDC_WORK/server2.log")" -eq 32 ] ||
    { echo "FAIL: the restart restored $(restored "$PDC_WORK/server2.log") transfer regions, expected 32"; exit 1; }
run_client "$PDC_WORK/r2.out" xfer-read --objects 8 || { echo "FAIL: xfer-read after SIGKILL and restart"; exit 1; }
pdc_close
"$inspect" verify "$store" >/dev/null
echo "PASS: $np server(s), restart $mode: the transfer-request table and its regions' data survive close and SIGKILL"
