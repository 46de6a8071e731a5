#!/usr/bin/env bash
# Damaged stores through the MPI restart (issue 8, item 2): a 2-rank
# ckpt-workload store with rank 1 damaged. The collective restart
# (ckpt_hooks_restart_elastic, same rank count and re-homing to 3 ranks)
# must fail on every rank with the damaged rank's message and exit 1,
# never crash, never start an empty store in place of a missing one, and
# a failed re-homing must leave the old layout as it was. verify and
# ckpt-inspect verify must report the damage.
#   - rank-1 directory missing
#   - rank-1 data.mdb truncated
#   - rank-1 meta of a newer format version
#   - rank-1 another program's LMDB environment
#   - a bit flipped inside an object record on rank 1: the map restart
#     opens (LMDB has no checksums; records decode when read), the rebuild
#     restart, the re-homing, verify and ckpt-inspect name the record
#   - rank 0 an LMDB environment with nothing committed (its creation was
#     interrupted): every rank says so
#   - lock.mdb missing on both ranks: restart and verify as if intact
#   - seeded random damage (issue 14, item 2): REL_MPI_SEEDS (40) stores,
#     a page of rank 1 overwritten with garbage (seeds 1..32) or 3 bits of
#     a page header flipped (33..40); the rebuild restart on 2 ranks and
#     the re-homing to 3 must each exit 0 or 1, never be killed; a failure
#     names rank-1, and a failed re-homing leaves the old layout as it was
# usage: test_damaged_mpi.sh WORKLOAD INSPECT REL_DAMAGE MPIEXEC NUMPROC_FLAG
set -euo pipefail
wl=$1 insp=$2 damage=$3 mpiexec=$4 npflag=$5
dir=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-damaged-mpi-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
W=(--objects 1500 --tags-per-object 3 --tagged 20)

# expect_rc WANT CMD...: exit status WANT (a crash or a sanitizer report
# is something else); output in $dir/out and $dir/err
expect_rc() {
    local want=$1 rc=0
    shift
    timeout 300 "$@" >"$dir/out" 2>"$dir/err" || rc=$?
    if [ "$rc" != "$want" ]; then
        cat "$dir/out" "$dir/err" >&2
        fail "exit $rc, expected $want: $*"
    fi
}
# every rank of an NP-rank run said REGEX on stderr
all_ranks_say() {
    local np=$1 re=$2 r
    for r in $(seq 0 $((np - 1))); do
        grep -Eq "^ckpt-workload: rank $r: .*$re" "$dir/err" ||
            { cat "$dir/err" >&2; fail "rank $r does not say: $re"; }
    done
}
fresh() { rm -rf "$dir/d"; cp -a "$dir/s" "$dir/d"; }
# a refused re-homing left the old layout as it was: the intact rank's
# data.mdb byte for byte, and no re-homing directories
unchanged() {
    cmp -s "$dir/s/rank-0/data.mdb" "$dir/d/rank-0/data.mdb" ||
        fail "rank 0's data.mdb changed after a refused re-homing"
    local left
    left=$(find "$dir/d" -maxdepth 1 -name '.rehome*')
    [ -z "$left" ] || fail "a failed re-homing left $left"
}
restart2() { expect_rc "$1" "$mpiexec" "$npflag" 2 "$wl" restart --store "$dir/d" "${@:2}"; }
restart3() { expect_rc "$1" "$mpiexec" "$npflag" 3 "$wl" restart --store "$dir/d" "${@:2}"; }

"$mpiexec" "$npflag" 2 "$wl" write --store "$dir/s" "${W[@]}" >/dev/null
expect_rc 0 "$insp" verify "$dir/s"

# 1. rank-1 directory missing
fresh
rm -rf "$dir/d/rank-1"
restart3 1
all_ranks_say 3 "no store here \(rank directory missing\)"
unchanged
restart2 1
all_ranks_say 2 "no store here \(rank directory missing\)"
[ ! -e "$dir/d/rank-1" ] || fail "the restart created an empty rank-1 in place of the lost one"
expect_rc 1 "$mpiexec" "$npflag" 2 "$wl" verify --store "$dir/d" "${W[@]}"
expect_rc 1 "$insp" verify "$dir/d"
grep -q "^rank 1: missing" "$dir/out" || fail "ckpt-inspect: $(cat "$dir/out")"

# 2. rank-1 data.mdb truncated (one page short)
fresh
"$damage" "$dir/d" 1 truncate -4096
restart3 1
all_ranks_say 3 "truncated"
unchanged
restart2 1
all_ranks_say 2 "rank-1/data.mdb: truncated: [0-9]+ bytes, but its last committed page ends at byte [0-9]+"
expect_rc 1 "$insp" verify "$dir/d"
grep -q "^rank 1: .*truncated" "$dir/out" || fail "ckpt-inspect: $(cat "$dir/out")"

# 3. rank-1 of a newer format version
fresh
"$damage" "$dir/d" 1 version 6
cp -a "$dir/d/rank-1/data.mdb" "$dir/v6.mdb"
restart3 1
all_ranks_say 3 "version 6 is newer"
unchanged
restart2 1
all_ranks_say 2 "store format version 6 is newer than this build's version 5"
cmp -s "$dir/v6.mdb" "$dir/d/rank-1/data.mdb" || fail "the refused restarts changed rank 1"
expect_rc 1 "$insp" verify "$dir/d"
grep -q "^rank 1: .*version 6" "$dir/out" || fail "ckpt-inspect: $(cat "$dir/out")"

# 4. rank-1 is another program's LMDB environment
fresh
"$damage" "$dir/d" 1 foreign
restart3 1
all_ranks_say 3 "not a pdc-ckpt store"
unchanged
restart2 1
all_ranks_say 2 "not a pdc-ckpt store"
expect_rc 1 "$insp" verify "$dir/d"
grep -q "^rank 1: .*not a pdc-ckpt store" "$dir/out" || fail "ckpt-inspect: $(cat "$dir/out")"

# 5. a bit flipped inside an object record of rank 1
fresh
victim=""
for i in $(seq 0 100); do
    if "$damage" "$dir/d" 1 flip "/data/obj$i" 2>/dev/null; then victim=$i; break; fi
done
[ -n "$victim" ] || fail "no object record of rank 1 found in its data.mdb"
cp -a "$dir/d" "$dir/flipped"
restart2 0 # the map restart only opens: records decode when they are read
restart2 1 --rebuild # per rank after the map restart: the damaged rank says it
grep -Eq "^ckpt-workload: rank 1: restart: .*rank-1/data.mdb: rank 1, database obj, key [0-9a-f]{16} .*checksum mismatch .*not returned" \
    "$dir/err" || { cat "$dir/err" >&2; fail "rebuild: rank 1 does not name the record"; }
rm -rf "$dir/d"; cp -a "$dir/flipped" "$dir/d"
restart3 1
all_ranks_say 3 "rank-1/data.mdb: rank 1, database obj, key [0-9a-f]{16} .*checksum mismatch"
unchanged
restart2 0 # the old layout is still there, on 2 ranks
expect_rc 1 "$mpiexec" "$npflag" 2 "$wl" verify --store "$dir/d" "${W[@]}"
grep -Eq "object obj$victim: .*database obj, key [0-9a-f]{16} .*checksum mismatch" "$dir/err" || fail "verify: $(cat "$dir/err")"
expect_rc 1 "$insp" verify "$dir/d"
grep -Eq "^rank 1: obj: id [0-9]+: " "$dir/out" || fail "ckpt-inspect: $(cat "$dir/out")"
[ "$(grep -c '^rank ' "$dir/out")" -ge 1 ] || fail "ckpt-inspect: $(cat "$dir/out")"

# 6. rank 0's creation was interrupted (an LMDB environment with nothing
# committed) while rank 1 has its store: every rank says so
fresh
"$damage" "$dir/d" 0 empty-env
restart2 1
all_ranks_say 2 "rank-0/data.mdb: an empty LMDB environment: .*nothing was committed"

# 7. lock.mdb missing on both ranks: nothing lost
fresh
rm -f "$dir/d/rank-0/lock.mdb" "$dir/d/rank-1/lock.mdb"
restart2 0
expect_rc 0 "$mpiexec" "$npflag" 2 "$wl" verify --store "$dir/d" "${W[@]}"
expect_rc 0 "$insp" verify "$dir/d"
restart3 0
expect_rc 0 "$mpiexec" "$npflag" 3 "$wl" verify --store "$dir/d" "${W[@]}" --from-ranks 2

# 8. seeded random page damage of rank 1 through the rebuild restart and
# the re-homing (each on its own copy)
# rc_any CMD...: exit 0 or 1 (anything else: killed, aborted, sanitizer);
# an exit 1 names rank-1
rc_any() {
    local rc=0
    timeout 300 "$@" >"$dir/out" 2>"$dir/err" || rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
        cat "$dir/out" "$dir/err" >&2
        fail "seed $seed (page $page): exit $rc, expected 0 or 1: $*"
    fi
    if [ "$rc" = 1 ] && ! grep -Eq "rank-1|rank 1" "$dir/err"; then
        cat "$dir/err" >&2
        fail "seed $seed (page $page): failed without naming rank-1: $*"
    fi
    last_rc=$rc
}
nseeds=${REL_MPI_SEEDS:-40}
killed=0 errors=0 runs=0
for seed in $(seq 1 "$nseeds"); do
    how=page
    [ "$seed" -gt $((nseeds * 4 / 5)) ] && how=header
    fresh
    page=$("$damage" "$dir/d" 1 "$how" "$seed")
    rc_any "$mpiexec" "$npflag" 2 "$wl" restart --store "$dir/d" --rebuild
    runs=$((runs + 1)); [ "$last_rc" = 1 ] && errors=$((errors + 1))
    fresh
    "$damage" "$dir/d" 1 "$how" "$seed" >/dev/null
    rc_any "$mpiexec" "$npflag" 3 "$wl" restart --store "$dir/d"
    runs=$((runs + 1))
    if [ "$last_rc" = 1 ]; then
        errors=$((errors + 1))
        unchanged
    fi
done
echo "random damage through the MPI restarts: $nseeds stores, $runs runs, $errors clean errors, $killed killed"
[ "$errors" -ge 1 ] || fail "no run of $runs failed: the damage did not reach the store"

echo "damaged stores through the MPI restart: OK"
