#!/usr/bin/env bash
# Same-name objects through PDC's own test programs (PDC's build tree): on a
# fresh server (NP ranks) `region_transfer_write_only` creates objects
# o1_0, o2_0, o3_0 (app name "DataServerTest") and writes their data, then
# `obj_tags` creates o1_0 and o2_0 again (PDC's default app name: PDC tells
# them apart by app name, PDC_metadata_cmp) and tags them; close_server;
# the store verifies clean and records both objects of each shared name
# (same-name entries in pdc_server); then restart (MODE: map or rebuild)
# and `region_transfer_read_only` opens o1_0, o2_0, o3_0 by name and reads
# the data back: PDC answers a name with the first object created, so must
# the restarted server. Then once more, the other way round after a second
# restart (the entries survive a restart's own creates).
# usage: test_pdc_samename.sh PDC_BUILD_DIR PREFIX INSPECT NP MODE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=pdc_lib.sh
. "$here/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"

build=$1 prefix=$2 inspect=$(realpath "$3") np=$4 mode=$5
case "$mode" in map | rebuild) ;; *) echo "usage: MODE is map or rebuild"; exit 2 ;; esac
pdc_setup "$prefix"
unset PDC_CKPT_RESTART PDC_CKPT PDC_CKPT_DIR
store=$PDC_TMPDIR/pdc-ckpt
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
ns=$("$inspect" dump "$store" --db pdc_server --prefix n | wc -l)
[ "$ns" -eq 4 ] || { echo "FAIL: $ns same-name entries, expected 4 (o1_0 and o2_0, twice each)"; exit 1; }

for round in 1 2; do
    [ "$mode" = rebuild ] && export PDC_CKPT_RESTART=rebuild
    pdc_start "$np" "$PDC_WORK/server$round.log" restart
    unset PDC_CKPT_RESTART
    run region_transfer_read_only "restart $round"
    pdc_close
    "$inspect" verify "$store" >/dev/null
done
echo "PASS: $np server(s), restart $mode: objects sharing a name answer as in PDC"
