#!/usr/bin/env bash
# A damaged record in a closed store, against PDC's real server (1 rank).
# `dmg-write` creates objects z0..z<N-1> (app name "zapp-<i>", kvtag zt =
# "zval-<i>"); close_server. Then a bit is flipped (tests/reliability's
# rel-damage) inside the record of object z1 (in its app name) and inside
# the kvtag record zt of z3. The store's format 4 keeps a CRC-32C after
# every value:
#  - `ckpt-inspect verify` exits 1 and names both damaged records;
#  - map restart (default): the server starts; opening z1 or z3 fails to
#    the client (PDCobj_open returns 0; the server never hands PDC a
#    damaged record, nor an object without one of its kvtags), the log
#    says CKPT_E_CORRUPT with rank, database and key; every other object
#    opens and its kvtag reads back; close_server and the server exit 0;
#  - rebuild restart: refused, the server exits non-zero before "Server
#    ready" and logs CKPT_E_CORRUPT naming the record;
#  - a damaged data-server region record (a bit flipped after the storage
#    path of the last object's region data): both restart forms refuse
#    (PDC's region tables are restored before "Server ready").
# usage: test_pdc_damaged.sh PREFIX CLIENT INSPECT REL_DAMAGE [OBJECTS]
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3") damage=$(realpath "$4") n=${5:-6}

run_client() { pdc_run "^(FAIL|dmg-)" "$1" "$client" "${@:2}"; }

pdc_start 1 "$PDC_WORK/server0.log"
run_client "$PDC_WORK/write.out" dmg-write --objects "$n" || { echo "FAIL: dmg-write"; exit 1; }
pdc_close
"$inspect" verify "$store" >/dev/null || { echo "FAIL: the store does not verify before the damage"; exit 1; }
id1=$("$inspect" get "$store" --name z1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
id3=$("$inspect" get "$store" --name z3 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
idl=$("$inspect" get "$store" --name "z$((n - 1))" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
[ "$("$inspect" dump "$store" --db pdc_server --prefix d | wc -l)" -eq 1 ] ||
    { echo "FAIL: the store does not hold the one data region of z$((n - 1))"; exit 1; }
echo "z1 is object $id1, z3 is object $id3"
cp -a "$store" "$PDC_WORK/clean-copy"

"$damage" "$store" 0 flip zapp-1
"$damage" "$store" 0 flip zval-3
st=0
"$inspect" verify "$store" >"$PDC_WORK/verify.out" 2>&1 || st=$?
cat "$PDC_WORK/verify.out"
[ "$st" -eq 1 ] || { echo "FAIL: verify of the damaged store exited $st, expected 1"; exit 1; }
grep -q "$id1" "$PDC_WORK/verify.out" && grep -q "zt" "$PDC_WORK/verify.out" ||
    { echo "FAIL: verify does not name both damaged records (object $id1, kvtag zt of $id3)"; exit 1; }
cp -a "$store" "$PDC_WORK/damaged-copy"

echo "== map restart over the damaged store"
pdc_start 1 "$PDC_WORK/server1.log" restart
st=0
run_client "$PDC_WORK/read.out" dmg-read --objects "$n" --bad 1,3 || st=$?
[ "$st" -eq 0 ] || { echo "FAIL: dmg-read exited $st"; exit 1; }
grep -q "dmg-read: 2 damaged object(s) refused, $((n - 2)) read back" "$PDC_WORK/read.out" ||
    { echo "FAIL: dmg-read did not refuse 2 and read $((n - 2))"; exit 1; }
grep "CKPT_E_CORRUPT" "$PDC_WORK/server1.log" | head -4
grep -q "CKPT_E_CORRUPT: .*rank 0, database obj, key .*$(printf '%x' "$id1").*the lookup fails" \
    "$PDC_WORK/server1.log" ||
    { echo "FAIL: the log does not name the damaged object record (rank 0, database obj)"; exit 1; }
grep -q "CKPT_E_CORRUPT: .*rank 0, database kvtag, key .*zt.*the lookup fails" "$PDC_WORK/server1.log" ||
    { echo "FAIL: the log does not name the damaged kvtag record (rank 0, database kvtag)"; exit 1; }
grep -q "writes are refused" "$PDC_WORK/server1.log" &&
    { echo "FAIL: a damaged record on a lookup refused writes"; exit 1; }
pdc_close || { echo "FAIL: close_server or the server's exit status after a damaged lookup"; exit 1; }
echo "ok: map restart: z1 and z3 fail to the client, $((n - 2)) others read back, exit 0"

echo "== rebuild restart over the damaged store"
rm -rf "$store"
cp -a "$PDC_WORK/damaged-copy" "$store"
# refused, naming the damaged record
PDC_CKPT_RESTART=rebuild pdc_refused 1 "$PDC_WORK/server2.log" \
    "pdc-ckpt restart \(rebuild\) .*CKPT_E_CORRUPT: .*rank 0, database .*damaged" restart
echo "rebuild restart: exit status $PDC_REFUSED_ST"
grep "pdc-ckpt" "$PDC_WORK/server2.log" | head -5

echo "== a damaged data-server region record"
rm -rf "$store"
cp -a "$PDC_WORK/clean-copy" "$store"
"$damage" "$store" 0 flip "$PDC_DATA_LOC/pdc_data/$idl/server0/s0000.bin"
for m in map rebuild; do
    PDC_CKPT_RESTART=$m pdc_refused 1 "$PDC_WORK/server-region-$m.log" \
        "CKPT_E_CORRUPT: .*rank 0, database pdc_server, key" restart
    echo "ok: $m restart over a damaged data region record: exit status $PDC_REFUSED_ST"
done
echo "PASS: a damaged record is never handed to PDC (map: the lookup fails; rebuild: refused)"
