#!/usr/bin/env bash
# Round trip through PDC's real server with the pdc-ckpt store: NP server
# ranks; a client writes containers, objects, kvtags of several types,
# container kvtags, memberships and deletes; close_server; the store must be
# there (no metadata_checkpoint.<rank>), verify clean and hold exactly what
# is live; restart (MODE: map, the default, or rebuild via
# PDC_CKPT_RESTART=rebuild); a client reads everything back, re-creates the
# deleted names and one new object (ids never given out before); close; a
# second restart in MODE keeps the objects created after the first.
# usage: test_pdc_roundtrip.sh PREFIX CLIENT INSPECT NP MODE [OBJECTS]
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$2 inspect=$3 np=$4 mode=$5 n=${6:-50}
pdc_need_mode "$mode" map rebuild
manifest=$PDC_WORK/manifest

live=$((n - n / 5))
echo "== $np server(s): write $n objects ($((n / 5)) deleted), close"
pdc_start "$np" "$PDC_WORK/server0.log"
pdc_client "$client" write --objects "$n" --manifest "$manifest" | tee "$PDC_WORK/write.out" |
    grep -E "^(FAIL|write:)" || true
grep -q "^write: " "$PDC_WORK/write.out" || { echo "FAIL: the writer did not finish"; exit 1; }
! grep -q "^FAIL" "$PDC_WORK/write.out" || { echo "FAIL: the writer's checks failed"; exit 1; }
pdc_close

echo "== the store after close_server"
for r in $(seq 0 $((np - 1))); do
    [ -d "$store/rank-$r" ] || { echo "FAIL: no store at $store/rank-$r"; exit 1; }
    if [ -e "$PDC_TMPDIR/$r/metadata_checkpoint.$r" ]; then
        echo "FAIL: close_server wrote PDC's own checkpoint $PDC_TMPDIR/$r/metadata_checkpoint.$r"
        exit 1
    fi
done
"$inspect" verify "$store" | tee "$PDC_WORK/verify0.out"
# live objects; 7 kvtags each plus 3 per container; one member per live object
want="verified $live objects, $((live * 7 + 6)) kvtags, 2 containers, $live members,"
grep -qF "$want" "$PDC_WORK/verify0.out" || { echo "FAIL: expected \"$want\""; exit 1; }
# the store keeps each kvtag's type (PDC's get does not return it)
o0=$(awk '$2 == "o0" { print $3 }' "$manifest")
"$inspect" dump "$store" --db kvtag --prefix "$o0" >"$PDC_WORK/o0.tags"
for t in '"name":"int","type":"PDC_INT","value":-3' '"name":"dbl","type":"PDC_DOUBLE","value":0.25' \
    '"name":"u64","type":"PDC_UINT64","value":17293822569102704640' \
    '"name":"str","type":"PDC_STRING","value":"value of o0"' \
    '"name":"re","type":"PDC_STRING","value":"new value of o0"'; do
    grep -qF "$t" "$PDC_WORK/o0.tags" || { echo "FAIL: o0's kvtags in the store lack $t"; cat "$PDC_WORK/o0.tags"; exit 1; }
done
[ "$(wc -l <"$PDC_WORK/o0.tags")" -eq 7 ] || { echo "FAIL: o0 has $(wc -l <"$PDC_WORK/o0.tags") kvtags in the store, expected 7"; exit 1; }
# deleted objects are not members any more
for id in $(awk '$1 == "deleted" { print $3 }' "$manifest"); do
    if "$inspect" dump "$store" --db cont_obj | grep_all "\"obj_id\":$id}"; then
        echo "FAIL: deleted object $id is still a member of its container"; exit 1
    fi
done

for round in 1 2; do
    echo "== restart $round ($mode), read back, create new$round"
    pdc_restart "$np" "$mode" "$PDC_WORK/server$round.log"
    echo "restart to \"Server ready\": ${PDC_READY_S}s"
    # first, before any lookup: an existing name cannot be created again
    pdc_client "$client" dupcheck --name o1 >"$PDC_WORK/dup$round.out" 2>&1 ||
        { grep -E "^(FAIL|dupcheck:)" "$PDC_WORK/dup$round.out"; echo "FAIL: dupcheck after restart $round"; exit 1; }
    st=0
    pdc_client "$client" read --objects "$n" --manifest "$manifest" --new "new$round" \
        >"$PDC_WORK/read$round.out" 2>&1 || st=$?
    grep -E "^(FAIL|PASS|read:|note:|new object)" "$PDC_WORK/read$round.out" || true
    [ "$st" -eq 0 ] || { echo "FAIL: reader exited $st after restart $round"; exit 1; }
    pdc_close
    "$inspect" verify "$store"
done
# after both rounds: the deleted names re-created, plus new1 and new2
"$inspect" verify "$store" | grep_all -F "verified $((n + 2)) objects," ||
    { echo "FAIL: expected $((n + 2)) objects in the store"; exit 1; }
echo "PASS: $np server(s), restart $mode: $n objects written, read back twice"
