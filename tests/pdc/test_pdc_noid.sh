#!/usr/bin/env bash
# The store has no id to give (1 rank). The store never hands out id 0:
# ids are (rank + 1) * 10^9 + seq with seq < 10^9, and a restart after a
# crash skips 2^24 of them, so a rank runs out after about 10^9 creates or
# some 60 crash restarts. id_bump leaves 5 ids in a closed store (what such
# a rank has left); then:
#  - restart (map): `id-create` creates container ic and objects io0, io1,
#    ... until a create fails: exactly 4 objects (ic took the first id),
#    the next object create and the create of container icx fail to the
#    client (0, no object); the log says why (CKPT_E_NOSPACE, the id
#    sequence of rank 0 is exhausted); close_server and the server exit 0;
#  - restart (rebuild): io0..io3 open; icx still fails; SIGKILL;
#  - restart after the crash: io0..io3 open, icx fails; close exits 0; the
#    store verifies, with exactly 1 container and 4 objects.
# usage: test_pdc_noid.sh PREFIX CLIENT INSPECT ID_BUMP
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3") bump=$(realpath "$4")

# created LOG OBJECTS IC ICX: id-create's summary line must say so
created() {
    local out=$PDC_WORK/$1.out st=0
    pdc_run "^(FAIL|id-create)" "$out" "$client" id-create --count 20 || st=$?
    [ "$st" -eq 0 ] || { echo "FAIL: id-create exited $st"; exit 1; }
    grep -q "id-create: objects $2, container ic $3, container icx $4" "$out" ||
        { echo "FAIL: expected objects $2, container ic $3, container icx $4"; exit 1; }
}

pdc_start 1 "$PDC_WORK/server0.log"
pdc_close
left=$("$bump" "$store" 0 1 5)
echo "ids left in rank 0: $left"
[ "$left" -eq 5 ] || { echo "FAIL: id_bump left $left ids, expected 5"; exit 1; }

echo "== restart (map): 5 ids left"
pdc_start 1 "$PDC_WORK/server1.log" restart
created c1 4 ok refused
grep "pdc-ckpt new id" "$PDC_WORK/server1.log" | head -2
grep -q "pdc-ckpt new id (answering id 0): CKPT_E_NOSPACE: .*id sequence of rank 0 exhausted" \
    "$PDC_WORK/server1.log" || { echo "FAIL: the log does not say why the create failed"; exit 1; }
pdc_close || { echo "FAIL: close_server or the server's exit status"; exit 1; }

echo "== restart (rebuild): no id left; SIGKILL"
pdc_restart 1 rebuild "$PDC_WORK/server2.log"
pdc_client "$client" id-read --count 4 >"$PDC_WORK/r2.out" 2>&1 || { cat "$PDC_WORK/r2.out"; echo "FAIL: id-read"; exit 1; }
created c2 0 ok refused
sleep 1
pdc_kill9

echo "== restart (map) after the crash"
pdc_start 1 "$PDC_WORK/server3.log" restart
pdc_client "$client" id-read --count 4 >"$PDC_WORK/r3.out" 2>&1 || { cat "$PDC_WORK/r3.out"; echo "FAIL: id-read after the crash"; exit 1; }
created c3 0 ok refused
pdc_close || { echo "FAIL: close_server or the server's exit status after the crash"; exit 1; }
"$inspect" verify "$store" | tee "$PDC_WORK/verify.out"
grep -q "verified 4 objects, 0 kvtags, 1 containers" "$PDC_WORK/verify.out" ||
    { echo "FAIL: the store does not hold exactly container ic and io0..io3"; exit 1; }
echo "PASS: with no id left, object and container creates fail to the client; what exists reads on"
