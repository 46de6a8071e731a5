#!/usr/bin/env bash
# Region data across SIGKILL of PDC's real server (NP ranks, restart MODE map
# or rebuild). PDC's data-server and transfer-request region tables are
# logged into the store as they change (database pdc_server), so:
#  1. committed: `data-write` writes N objects' data with PDC's region
#     transfer API; 3 s of quiet (the store's background commit runs every
#     100 ms); SIGKILL every rank; the store verifies clean and holds the
#     data regions; after a restart every region reads back byte for byte.
#  2. not committed: with no commit policy (PDC_CKPT_COMMIT_EVERY=0,
#     PDC_CKPT_COMMIT_MS=0) `split-write` writes the first half of each
#     object, commits through PDC's server_checkpoint RPC, writes the second
#     half; SIGKILL; after a restart the first half reads back byte for byte
#     and every read touching the second half fails to the client (its
#     region records were lost with the crash; the bytes in the data file
#     are never answered in their place).
# usage: test_pdc_region_kill.sh PREFIX CLIENT INSPECT NP MODE [OBJECTS]
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3") np=$4 mode=$5 n=${6:-10}
pdc_need_mode "$mode" map rebuild

run_client() { pdc_run "^(FAIL|data-|split-)" "$1" "$client" "${@:2}"; }

restart() {
    pdc_restart "$np" "$mode" "$1"
    grep -h "restarted from pdc-ckpt" "$1" || true
}

# data regions in a store: entries of pdc_server whose key starts with 'd'
data_regions() {
    "$inspect" dump "$1" --db pdc_server --prefix d | wc -l
}

echo "== 1. $np server(s): region data of $((2 * n)) objects; 3 s quiet; SIGKILL"
pdc_start "$np" "$PDC_WORK/server0.log"
run_client "$PDC_WORK/write.out" data-write --objects "$n" ||
    { echo "FAIL: data-write on the live server"; exit 1; }
sleep 3
pdc_kill9
ls "$PDC_TMPDIR"/pdc-ckpt-transfer.* >/dev/null 2>&1 &&
    { echo "FAIL: a side file pdc-ckpt-transfer.* was written"; exit 1; }
"$inspect" verify "$store"
# each object pair: r<i>_1d in two halves (the overwrite is in place), r<i>_2d in two row blocks,
# each split further across the data servers with more than one rank
nd=$(data_regions "$store")
[ "$nd" -ge $((4 * n)) ] || { echo "FAIL: the store holds $nd data regions, expected >= $((4 * n))"; exit 1; }
echo "the store holds $nd data regions"
restart "$PDC_WORK/server1.log"
run_client "$PDC_WORK/read1.out" data-read --objects "$n" --round 1 --dart 0 ||
    { echo "FAIL: region data after SIGKILL and restart ($mode)"; exit 1; }
pdc_close
"$inspect" verify "$store"

echo "== 2. $np server(s), no commit policy: half committed, half not; SIGKILL"
export PDC_TMPDIR=$PDC_WORK/pdc_tmp2 PDC_DATA_LOC=$PDC_WORK/data2
export PDC_CKPT_COMMIT_EVERY=0 PDC_CKPT_COMMIT_MS=0
mkdir -p "$PDC_DATA_LOC"
store=$PDC_TMPDIR/pdc-ckpt
pdc_start "$np" "$PDC_WORK/server2.log"
run_client "$PDC_WORK/split-write.out" split-write --objects "$n" ||
    { echo "FAIL: split-write on the live server"; exit 1; }
pdc_kill9
"$inspect" verify "$store"
# the committed first halves [0, 4096) only, of every object
"$inspect" dump "$store" --db pdc_server --prefix d >"$PDC_WORK/regions2.json"
python3 - "$PDC_WORK/regions2.json" "$n" <<'PY'
import json, sys
objs, lo = set(), []
for line in open(sys.argv[1]):
    k = json.loads(line)["key"]
    objs.add(k["obj_id"])
    lo.append(k["start"][0] + k["count"][0])
if len(objs) != int(sys.argv[2]) or not lo or max(lo) > 4096:
    sys.exit("FAIL: data regions of %d objects, up to element %s; expected %s objects' "
             "first halves [0, 4096) only" % (len(objs), max(lo) if lo else "-", sys.argv[2]))
print("the store holds %d data regions, all in the committed first halves" % len(lo))
PY
restart "$PDC_WORK/server3.log"
run_client "$PDC_WORK/split-read.out" split-read --objects "$n" ||
    { echo "FAIL: committed halves or refused reads after SIGKILL ($mode)"; exit 1; }
pdc_close
echo "PASS: $np server(s), restart $mode: committed regions read back after SIGKILL, uncommitted ones refused"
