#!/usr/bin/env bash
# Elastic restart of PDC's real server killed during the re-homing: a store
# written by FROM servers is restarted on TO servers with rank 0 killed
# (SIGKILL, PDC_CKPT_FAULT, a test-only failure injection of the library)
#  - during the copy (before the commit point): the next restart on TO rolls
#    the copy back and re-homes again;
#  - during the switch (after it): the next restart on TO rolls it forward.
# After each recovery, before any client: close, and the store holds exactly
# the objects, kvtags, containers and members it held before (nothing lost
# or duplicated); then a restart where PDC's client finds every object by
# name and id with its kvtags and new ids are unused.
# Then region data written on TO: a restart on FROM killed during the copy,
# the next one re-homes it, and the regions read back byte for byte there
# and back on TO (rebuild). A transfer-request table (another store, PDC's
# dynamic region placement), which is not re-homed: the restart on FROM is
# refused on every server, saying why, and the store restarts on TO with
# its data. Last, DART entries (another store) written on TO: restarted on
# FROM (re-homed) and back on TO (rebuild), the DART searches answer as the
# warm servers did before each re-homing.
# usage: test_pdc_elastic_kill.sh PREFIX CLIENT DART_CLIENT INSPECT FROM TO [OBJECTS]
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$2 dart=$3 inspect=$4 from=$5 to=$6 n=${7:-30}
w=$PDC_WORK
manifest=$w/manifest
# the counts line of ckpt-inspect verify
counts() { grep -oE 'verified [0-9]+ objects, [0-9]+ kvtags, [0-9]+ containers, [0-9]+ members' "$1"; }

echo "== $from server(s): write $n objects, close"
pdc_start "$from" "$w/server0.log"
pdc_run "^(FAIL|write:)" "$w/write.out" "$client" write --objects "$n" --manifest "$manifest" ||
    { echo "FAIL: the writer failed"; exit 1; }
pdc_close
"$inspect" verify "$store" >"$w/verify0.out" || { cat "$w/verify0.out"; echo "FAIL: verify"; exit 1; }
want=$(counts "$w/verify0.out")
echo "before: $want"

round=0
for point in rehome-copy rehome-switch; do
    round=$((round + 1))
    echo "== restart on $to server(s), rank 0 killed at $point"
    cp -a "$store" "$w/store-before-$point"
    st=0
    (cd "$w" && PDC_CKPT_FAULT=$point exec timeout -k 5 "$PDC_READY_TIMEOUT" "$MPIEXEC" -n "$to" \
        "$PDC_PREFIX/bin/pdc_server.exe" restart) >"$w/kill$round.log" 2>&1 || st=$?
    [ "$st" -ne 0 ] && [ "$st" -ne 124 ] || { cat "$w/kill$round.log"; echo "FAIL: status $st, expected the killed server's"; exit 1; }
    ! grep -q "Server ready" "$w/kill$round.log" || { echo "FAIL: a server became ready"; exit 1; }
    if [ "$point" = rehome-copy ]; then
        [ -d "$store/.rehome" ] && [ ! -e "$store/.rehome/COMPLETE" ] ||
            { ls -la "$store" "$store/.rehome" 2>&1; echo "FAIL: no unfinished copy after the kill"; exit 1; }
    else
        [ -e "$store/.rehome/COMPLETE" ] || { ls -la "$store" 2>&1; echo "FAIL: no committed re-homing after the kill"; exit 1; }
    fi
    echo "== restart on $to server(s): recovery, close at once"
    pdc_restart "$to" map "$w/server${round}a.log"
    if [ "$point" = rehome-copy ]; then
        grep -F "re-homed the store of $from servers onto $to" "$w/server${round}a.log" ||
            { echo "FAIL: no re-homing after the rolled back copy"; exit 1; }
    else
        grep -F "an interrupted re-homing was rolled forward" "$w/server${round}a.log" ||
            { echo "FAIL: the switch was not rolled forward"; exit 1; }
    fi
    pdc_close
    "$inspect" verify "$store" >"$w/verify${round}a.out" ||
        { cat "$w/verify${round}a.out"; echo "FAIL: verify after the recovery"; exit 1; }
    got=$(counts "$w/verify${round}a.out")
    [ "$got" = "$want" ] || { echo "FAIL: after the recovery: $got, expected $want"; exit 1; }
    for e in "rank-$to" .rehome .rehome-old; do
        [ ! -e "$store/$e" ] || { echo "FAIL: $store/$e is left after the recovery"; exit 1; }
    done
    echo "== restart on $to server(s): read back"
    pdc_restart "$to" map "$w/server${round}b.log"
    pdc_run "^(FAIL|read:|new object)" "$w/read$round.out" "$client" read --objects "$n" \
        --manifest "$manifest" --new "new$round" || { echo "FAIL: read after the recovery"; exit 1; }
    pdc_close
    # the next round starts from the store of FROM servers again, with
    # what the read created
    if [ "$point" = rehome-copy ]; then
        pdc_restart "$from" map "$w/server${round}c.log"
        pdc_close
        "$inspect" verify "$store" >"$w/verify${round}c.out" ||
            { cat "$w/verify${round}c.out"; echo "FAIL: verify back on $from"; exit 1; }
        want=$(counts "$w/verify${round}c.out")
    fi
done
echo "== region data on $to server(s): re-homed onto $from (rank 0 killed during the copy first), and back"
pdc_restart "$to" map "$w/server-data.log"
pdc_run "^(FAIL|data-write)" "$w/data-write.out" "$client" data-write --objects 2 --dart 0 ||
    { echo "FAIL: data-write"; exit 1; }
pdc_close
st=0
(cd "$w" && PDC_CKPT_FAULT=rehome-copy exec timeout -k 5 "$PDC_READY_TIMEOUT" "$MPIEXEC" -n "$from" \
    "$PDC_PREFIX/bin/pdc_server.exe" restart) >"$w/kill-data.log" 2>&1 || st=$?
[ "$st" -ne 0 ] && ! grep -q "Server ready" "$w/kill-data.log" ||
    { cat "$w/kill-data.log"; echo "FAIL: the server killed during the region data's copy became ready"; exit 1; }
pdc_restart "$from" map "$w/server-data2.log"
grep -F "re-homed the store of $to servers onto $from" "$w/server-data2.log" ||
    { echo "FAIL: the region data's store was not re-homed onto $from"; exit 1; }
pdc_run "^(FAIL|data-read)" "$w/data-read.out" "$client" data-read --objects 2 --round 1 --dart 0 ||
    { echo "FAIL: region data after the re-homing onto $from"; exit 1; }
pdc_close
pdc_restart "$to" rebuild "$w/server-data3.log"
pdc_run "^(FAIL|data-read)" "$w/data-read2.out" "$client" data-read --objects 2 --round 2 --dart 0 ||
    { echo "FAIL: region data back on $to"; exit 1; }
pdc_close

echo "== a transfer-request table (another store) on $to server(s): a restart on $from is refused"
export PDC_CKPT_DIR=$w/xfer-store PDC_DATA_LOC=$w/xfer-data
mkdir -p "$PDC_DATA_LOC"
pdc_start "$to" "$w/server-xfer.log"
pdc_run "^(FAIL|xfer-write)" "$w/xfer-write.out" "$client" xfer-write --objects 1 --part dynamic ||
    { echo "FAIL: xfer-write"; exit 1; }
pdc_close
pdc_refused "$from" "$w/refuse-xfer.log" \
    "pdc-ckpt restart \\(map\\) from .*: CKPT_E_MISMATCH: .*(PDC transfer-request region entries|places its region transfers by the client's rank).*not re-homed" restart
[ ! -e "$PDC_CKPT_DIR/.rehome" ] || { echo "FAIL: the refused re-homing left .rehome"; exit 1; }
pdc_restart "$to" map "$w/server-xfer2.log"
pdc_run "^(FAIL|xfer-read)" "$w/xfer-read.out" "$client" xfer-read --objects 1 ||
    { echo "FAIL: xfer-read after the refusal"; exit 1; }
pdc_close

echo "== DART entries (another store) on $to server(s): re-homed onto $from, and back"
export PDC_CKPT_DIR=$w/dart-store PDC_DATA_LOC=$w
dc() { pdc_run "^FAIL" "$w/dart-$1.out" "$dart" "$@" --state "$w/dart.state"; }
pdc_start "$to" "$w/server-dart.log"
dc insert --from 0 --to 20 && dc delete --from 0 --to 20 --step 7 || { echo "FAIL: DART inserts and deletes"; exit 1; }
dc answers --universe 30 --out "$w/dart-warm" || { echo "FAIL: DART answers on the warm servers"; exit 1; }
pdc_close
pdc_restart "$from" map "$w/server-dart2.log"
grep -F "re-homed the store of $to servers onto $from" "$w/server-dart2.log" ||
    { echo "FAIL: the DART store was not re-homed onto $from"; exit 1; }
dc answers --universe 30 --out "$w/dart-after" || { echo "FAIL: DART answers after the re-homing"; exit 1; }
diff "$w/dart-warm" "$w/dart-after" || { echo "FAIL: DART answers differ after the re-homing onto $from"; exit 1; }
dc insert --from 20 --to 30 || { echo "FAIL: DART inserts on $from"; exit 1; }
dc answers --universe 30 --out "$w/dart-warm2" || { echo "FAIL: DART answers on $from"; exit 1; }
pdc_close
pdc_restart "$to" rebuild "$w/server-dart3.log"
dc answers --universe 30 --out "$w/dart-back" || { echo "FAIL: DART answers back on $to"; exit 1; }
pdc_close
diff "$w/dart-warm2" "$w/dart-back" || { echo "FAIL: DART answers differ back on $to"; exit 1; }
unset PDC_CKPT_DIR
echo "PASS: $from -> $to servers, killed during the copy and during the switch: recovered, nothing lost or duplicated, everything found; region data re-homed byte for byte, a transfer-request table refused; DART entries re-homed with the same answers"

