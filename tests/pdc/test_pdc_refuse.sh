#!/usr/bin/env bash
# PDC's real server with the store fails closed at start (NP ranks): each
# case must exit non-zero before "Server ready", log the store's reason (a
# CKPT_E_* name followed by a message), and not print PDC's misleading
# "Error with Mercury init":
#  - a bad PDC_CKPT_* setting, on a fresh start and on a restart alike;
#  - a PDC_CKPT_DIR that cannot be created (under a regular file);
#  - a restart without a store;
#  - (2+ ranks) a restart where one rank's part of the store is missing:
#    that rank's reason is logged and every rank stops;
#  - a fresh start over an existing store (says how to restart or replace
#    it); the store is left as it was: it verifies, and a restart from it
#    then works.
# usage: test_pdc_refuse.sh PREFIX CLIENT INSPECT NP
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3") np=$4

# refused NAME PATTERN [restart]: the server must exit non-zero, its log
# must match PATTERN (extended regex) and hold no "Server ready" and no
# "Error with Mercury init"
refused() {
    pdc_refused "$np" "$PDC_WORK/refuse-$1.log" "$2" "${3:-}"
    echo "ok: $1: exit status $PDC_REFUSED_ST; $(grep -Eo "$2" "$PDC_WORK/refuse-$1.log" | head -1)"
}

export PDC_CKPT_COMMIT_EVERY=abc
refused bad-setting-fresh 'pdc-ckpt environment [^:]*: CKPT_E_INVAL: PDC_CKPT_COMMIT_EVERY="abc": not a non-negative integer'
refused bad-setting-restart 'pdc-ckpt environment [^:]*: CKPT_E_INVAL: PDC_CKPT_COMMIT_EVERY="abc": not a non-negative integer' restart
unset PDC_CKPT_COMMIT_EVERY
export PDC_CKPT_SYNC=sometimes
refused bad-sync-restart 'CKPT_E_INVAL: PDC_CKPT_SYNC="sometimes": use sync, interval or close' restart
unset PDC_CKPT_SYNC

: >"$PDC_WORK/afile"
export PDC_CKPT_DIR=$PDC_WORK/afile/store
refused unwritable-dir "pdc-ckpt open [^:]*: CKPT_E_[A-Z]+: .*$PDC_WORK/afile"
unset PDC_CKPT_DIR

refused restart-without-store 'pdc-ckpt restart \(map\) from .*: CKPT_E_NOSTORE: .+' restart

echo "== a store from a fresh start and close_server"
pdc_start "$np" "$PDC_WORK/server0.log"
pdc_client "$client" write --objects 5 --manifest "$PDC_WORK/manifest" >"$PDC_WORK/write.out" 2>&1 ||
    { echo "FAIL: write"; cat "$PDC_WORK/write.out"; exit 1; }
pdc_close
refused fresh-over-store 'a store is already at .*Restart from it with `pdc_server.exe restart`, or remove it'
"$inspect" verify "$store"
pdc_start "$np" "$PDC_WORK/server1.log" restart
pdc_client "$client" read --objects 5 --manifest "$PDC_WORK/manifest" >"$PDC_WORK/read.out" 2>&1 ||
    { echo "FAIL: read after the refused fresh start"; grep FAIL "$PDC_WORK/read.out"; exit 1; }
pdc_close
if [ "$np" -ge 2 ]; then
    # one rank refuses (its part of the store is gone): every rank exits
    # non-zero with that rank's reason in the log, none serves; rank 0
    # either says another server refused or repeats the reason naming rank 1
    # (the collective restart agrees on one error for all ranks)
    cp -a "$store" "$PDC_WORK/partial"
    rm -rf "$PDC_WORK/partial/rank-1"
    export PDC_CKPT_DIR=$PDC_WORK/partial
    refused one-rank-refuses 'PDC_SERVER\[1\]: pdc-ckpt restart \(map\) from .*: CKPT_E_[A-Z]+: .+' restart
    grep -Eq 'PDC_SERVER\[0\]: pdc-ckpt(: another server refused the start| restart \(map\) from .*: rank 1: .+)' \
        "$PDC_WORK/refuse-one-rank-refuses.log" ||
        { echo "FAIL: one-rank-refuses: rank 0 does not say why it stops"; cat "$PDC_WORK/refuse-one-rank-refuses.log"; exit 1; }
    unset PDC_CKPT_DIR
fi
echo "PASS: $np server(s): bad settings, an unwritable store directory, a restart without a store and a fresh start over a store are refused with the store's reason and a non-zero exit"
