#!/usr/bin/env bash
# Node-local stores with a shared copy through ckpt-workload (issue 8,
# item 5): PDC_CKPT_SHARED_DIR=SHARED, the live stores in LOCAL. close
# publishes every rank's copy; deleting the local stores (the nodes were
# replaced) before the restart, the restart starts from the copies and
# every record verifies; one node replaced; one node replaced without a
# copy (an error on every rank); the copies are owner-only;
# a restart on more ranks (re-homing) from the copies, published again
# and restarted once more after losing every node; back to fewer ranks.
# usage: test_shared_mpi.sh WORKLOAD INSPECT MPIEXEC NUMPROC_FLAG
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
wl=$1 insp=$2 mpiexec=$3 npflag=$4
dir=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-shared-mpi-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
W=(--objects 2000 --tags-per-object 3 --tagged 20)
export PDC_CKPT_SHARED_DIR="$dir/shared"
L="$dir/local"
run() { timeout 300 "$mpiexec" "$npflag" "$1" "$wl" "${@:2}"; }
verify() { run "$1" verify --store "$L" "${W[@]}" "${@:2}" >/dev/null || fail "verify on $1 ranks ${*:2}"; }
inspect_ok() {
    "$insp" verify "$1" >"$dir/out" 2>&1 || { cat "$dir/out" >&2; fail "ckpt-inspect verify $1"; }
    tail -n 1 "$dir/out" | grep_all 'OK$' || fail "ckpt-inspect verify $1: $(cat "$dir/out")"
}
owner_only() {
    local r
    for r in $(seq 0 $(($1 - 1))); do
        [ "$(stat -c %a "$dir/shared/rank-$r")" = 700 ] || fail "shared/rank-$r is not 0700"
        [ "$(stat -c %a "$dir/shared/rank-$r/data.mdb")" = 600 ] || fail "shared/rank-$r/data.mdb is not 0600"
    done
    local left
    left=$(find "$dir/shared" -maxdepth 1 -name 'rank-*.old' -o -maxdepth 1 -name 'rank-*.new')
    [ -z "$left" ] || fail "publish leftovers: $left"
}

run 2 write --store "$L" "${W[@]}" >/dev/null || fail "write"
if [ ! -f "$dir/shared/rank-0/data.mdb" ] || [ ! -f "$dir/shared/rank-1/data.mdb" ]; then
    fail "close did not publish: $(find "$dir/shared" 2>&1)"
fi
owner_only 2
inspect_ok "$dir/shared"

# every node replaced: the restart starts from the shared copies
rm -rf "$L"
run 2 restart --store "$L" --new-ids 100 >/dev/null || fail "restart from the shared copies"
verify 2
inspect_ok "$L"
owner_only 2

# one node replaced
rm -rf "$L/rank-1"
run 2 restart --store "$L" --rebuild --check "${W[@]}" >/dev/null || fail "restart of one replaced node"
verify 2

# one node replaced and its shared copy gone too: nothing to restart that
# rank from while the others have stores: an error on every rank, not an
# empty store for it
mv "$dir/shared/rank-1" "$dir/rank-1.away"
rm -rf "$L/rank-1"
if run 2 restart --store "$L" >"$dir/out" 2>&1; then fail "a restart without rank 1 succeeded"; fi
for r in 0 1; do
    grep -q "^ckpt-workload: rank $r: restart: .*no store here" "$dir/out" ||
        fail "rank $r: restart without rank 1: $(cat "$dir/out")"
done
[ ! -e "$L/rank-1/data.mdb" ] || fail "the failed restart left an empty store for rank 1"
mv "$dir/rank-1.away" "$dir/shared/rank-1"
run 2 restart --store "$L" >/dev/null || fail "restart once the copy is back"
verify 2
rm -rf "$L"

# re-homing to 3 ranks from the copies; its close publishes 3 copies
run 3 restart --store "$L" >/dev/null || fail "re-homing from the shared copies"
verify 3 --from-ranks 2
[ -f "$dir/shared/rank-2/data.mdb" ] || fail "the re-homed store was not published"
owner_only 3
rm -rf "$L"
run 3 restart --store "$L" >/dev/null || fail "restart of the re-homed store from its copies"
verify 3 --from-ranks 2
inspect_ok "$L"

# and back to 2 ranks, every node lost again: rank 2's environment comes
# from its copy too
rm -rf "$L"
run 2 restart --store "$L" >/dev/null || fail "re-homing 3 -> 2 from the shared copies"
verify 2 --from-ranks 2
rm -rf "$L"
run 2 restart --store "$L" >/dev/null || fail "restart on 2 ranks from the copies"
verify 2 --from-ranks 2

echo "node-local stores with shared copies through ckpt-workload: OK"
