#!/usr/bin/env bash
# Same-name objects through PDC's own test programs (PDC's build tree): on a
# fresh server (NP ranks) `region_transfer_write_only` creates objects
# o1_0, o2_0, o3_0 (app name "DataServerTest") and writes their data, then
# `obj_tags` creates o1_0 and o2_0 again (PDC's default app name: PDC tells
# them apart by app name, PDC_metadata_cmp) and tags them; close_server;
# the store verifies clean and records both objects of each shared name
# (same-name entries in pdc_server), and `ckpt-inspect get --name` shows
# both objects of each name, in creation order; then restart (MODE: map or rebuild)
# and `region_transfer_read_only` opens o1_0, o2_0, o3_0 by name and reads
# the data back: PDC answers a name with the first object created, so must
# the restarted server. Then once more, the other way round after a second
# restart (the entries survive a restart's own creates).
# usage: test_pdc_samename.sh PDC_BUILD_DIR PREFIX INSPECT NP MODE
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"
build=$1
shift # PREFIX first, as pdc_test_init takes it (the lock is taken already)
pdc_test_init "$0" "$@"
inspect=$(realpath "$2") np=$3 mode=$4
pdc_need_mode "$mode" map rebuild
bin=$build/bin
for p in region_transfer_write_only obj_tags region_transfer_read_only; do
    [ -x "$bin/$p" ] || { echo "FAIL: no $bin/$p (PDC's test programs)"; exit 1; }
done

# run PROGRAM: one of PDC's test programs (one client rank), which exits
# non-zero on any error or wrong byte
run() {
    local st=0
    pdc_client "$bin/$1" >"$PDC_WORK/$1.$2.out" 2>&1 || st=$?
    if [ "$st" -ne 0 ]; then
        echo "FAIL: $1 ($2) exited $st"
        grep -iE "fail|wrong|error" "$PDC_WORK/$1.$2.out" | head -20
        exit 1
    fi
    echo "ok: $1 ($2)"
}

pdc_start "$np" "$PDC_WORK/server0.log"
run region_transfer_write_only live
run obj_tags live
run region_transfer_read_only live
pdc_close
"$inspect" verify "$store" | tee "$PDC_WORK/verify.out"
grep -q "share their name and time step" "$PDC_WORK/verify.out" ||
    { echo "FAIL: verify does not report the same-name objects"; exit 1; }
# ckpt-inspect get --name shows both objects of each shared name, in
# creation order (region_transfer_write_only's first: app DataServerTest)
for nm in o1_0 o2_0; do
    "$inspect" get "$store" --name "$nm" --json >"$PDC_WORK/get-$nm.out" 2>"$PDC_WORK/get-$nm.err" ||
        { echo "FAIL: ckpt-inspect get --name $nm exited $?"; exit 1; }
    python3 - "$PDC_WORK/get-$nm.out" "$nm" <<'PY' || exit 1
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = [d["id"] for d in docs]
apps = [d["object"]["app_name"] for d in docs]
names = {d["object"]["obj_name"] for d in docs}
if len(docs) != 2 or ids != sorted(ids) or names != {sys.argv[2]} or apps[0] != "DataServerTest" or apps[1] == apps[0]:
    sys.exit("FAIL: get --name %s: ids %s, apps %s" % (sys.argv[2], ids, apps))
print("ok: get --name %s: objects %s, apps %s" % (sys.argv[2], ids, apps))
PY
done
ns=$("$inspect" dump "$store" --db pdc_server --prefix n | wc -l)
[ "$ns" -eq 4 ] || { echo "FAIL: $ns same-name entries, expected 4 (o1_0 and o2_0, twice each)"; exit 1; }

for round in 1 2; do
    pdc_restart "$np" "$mode" "$PDC_WORK/server$round.log"
    run region_transfer_read_only "restart $round"
    pdc_close
    "$inspect" verify "$store" >/dev/null
done
echo "PASS: $np server(s), restart $mode: objects sharing a name answer as in PDC"
