#!/usr/bin/env bash
# Crash loop (issue 8, item 1): `ckpt-workload write` on NP ranks, SIGKILLed
# at a random moment, over and over. After every kill:
#   - every rank's store opens and holds an exact committed prefix of its
#     mutation stream (`verify --after-crash`), the whole stream when the
#     writer finished before the kill (plain `verify`);
#   - `ckpt-inspect verify` finds nothing wrong (exit 0, a line ending in OK),
#     except container memberships committed on the container's rank for
#     objects whose creation the killed object rank had not committed yet
#     (ranks commit independently; docs/RELIABILITY.md), which must be the
#     tail of that rank's id sequence and nothing else;
#   - a restarted writer continues from there: `restart --new-ids K` hands
#     out K new ids per rank and none is in use, and the prefix is unchanged
#     afterwards (and verifies again).
# Each iteration draws, from the seeded generator: the kill moment (when the
# stores reach 0..109% of the size a complete run gives them, after every
# rank's store has been created), whether all ranks die at once or one rank
# dies and MPI takes the others down, the sync mode and the commit policy.
# The seed and every iteration's draw are printed; the same --seed gives
# the same draws (--draws-only prints them without running anything, which
# ctest uses to check exactly that). The kill moment is a target size of the
# stores, so a replay kills at the same progress, not at the same byte.
#
# usage: test_crash_loop.sh WORKLOAD INSPECT MPIEXEC NUMPROC_FLAG
#            [--iterations N (10)] [--seed S (8)] [--np P (2)]
#            [--objects N (10000)] [--tags-per-object M (4)] [--draws-only]
# By hand, the long run: test_crash_loop.sh ... --iterations 100
set -uo pipefail
. "$(dirname "$0")/../grep_all.sh"
wl=$1 insp=$2 mpiexec=$3 npflag=$4
shift 4
iterations=10 seed=8 np=2 objects=10000 tags=4 draws_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --draws-only) draws_only=1; shift ;;
    --iterations) iterations=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --objects) objects=$2; shift 2 ;;
    --tags-per-object) tags=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-crash-loop-XXXXXX")
writer=""
# shellcheck source=procs.sh
. "$(dirname "$0")/procs.sh"
cleanup() {
    if [ -n "$writer" ] && kill -0 "$writer" 2>/dev/null; then
        # shellcheck disable=SC2046
        kill -KILL $(descendants "$writer") "$writer" 2>/dev/null
        wait "$writer" 2>/dev/null
    fi
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL (seed $seed, iteration ${it:-0}): $*" >&2
    for f in "$dir"/*.out; do
        [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
    done
    exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
W=(--objects "$objects" --tags-per-object "$tags" --tagged 100)
run() { timeout 300 "$mpiexec" "$npflag" "$np" "$wl" "$@"; }

# ckpt-inspect verify: exit 0 and a last line ending in OK
inspect_ok() {
    local rc=0
    timeout 300 "$insp" verify "$1" >"$dir/inspect.out" 2>&1 || rc=$?
    [ "$rc" = 0 ] || fail "ckpt-inspect verify $1: exit $rc"
    tail -n 1 "$dir/inspect.out" | grep_all 'OK$' || fail "ckpt-inspect verify $1: no OK line"
}

# ckpt-inspect verify after a kill. Each rank's store is an exact prefix of
# its own stream, but ranks commit independently: the container's rank may
# have committed memberships of objects whose creation the killed object
# rank had not committed yet. verify reports those, and only those, as
# "member object ID does not exist on any rank"; anything else fails. The
# dangling ids must be, per rank range, consecutive: the tail of that
# rank's id sequence after its committed prefix. Their list goes to
# $dir/dangling-$1 (compared again after the restart).
inspect_after_kill() {
    local rc=0 tag=$2
    timeout 300 "$insp" verify "$1" >"$dir/inspect.out" 2>&1 || rc=$?
    : >"$dir/dangling-$tag"
    if [ "$rc" = 0 ]; then
        tail -n 1 "$dir/inspect.out" | grep_all 'OK$' || fail "ckpt-inspect verify $1: no OK line"
        return 0
    fi
    [ "$rc" = 1 ] || fail "ckpt-inspect verify $1: exit $rc"
    if grep '^rank ' "$dir/inspect.out" |
        grep -Ev '^rank [0-9]+: cont_obj: .*member object [0-9]+ does not exist on any rank$' |
        grep -q .; then
        fail "ckpt-inspect verify $1: problems other than cross-rank memberships"
    fi
    sed -n 's/.*member object \([0-9]*\) does not exist on any rank$/\1/p' "$dir/inspect.out" |
        sort -n -u >"$dir/dangling-$tag"
    awk '{ r = int($1 / 1000000000); if (r == pr && $1 != p + 1) bad = 1; pr = r; p = $1 }
         END { exit bad }' "$dir/dangling-$tag" ||
        fail "ckpt-inspect verify $1: dangling members are not the tail of a rank's ids"
}

# bytes of all ranks' data.mdb together
store_bytes() {
    local s t=0
    for s in $(stat -c %s "$1"/rank-*/data.mdb 2>/dev/null); do
        t=$((t + s))
    done
    echo "$t"
}
# every rank's data.mdb is past LMDB's two meta pages and the pages of the
# store's first commit (16 KiB): the store's creation is behind it
stores_created() {
    local r s
    for r in $(seq 0 $((np - 1))); do
        s=$(stat -c %s "$1/rank-$r/data.mdb" 2>/dev/null || echo 0)
        [ "$s" -gt 16384 ] || return 1
    done
    return 0
}

# --- calibration: one complete run: how big the stores get, how long ---
if [ "$draws_only" = 1 ]; then
    cal_bytes=0
else
t0=$(now_ms)
run write --store "$dir/cal" "${W[@]}" >"$dir/cal.out" 2>&1 || fail "calibration write failed"
t1=$(now_ms)
run verify --store "$dir/cal" "${W[@]}" >"$dir/calv.out" 2>&1 || fail "calibration verify failed"
inspect_ok "$dir/cal"
cal_bytes=$(store_bytes "$dir/cal")
rm -rf "$dir/cal"
# a writer whose commit policy makes it slow (fsync per mutation) is
# killed at this time at the latest
cap=$(( (t1 - t0) * 2 + 500 ))
echo "crash loop: seed $seed, $iterations iterations, $np ranks, ${objects} objects x $tags tags;" \
     "a complete write: $cal_bytes bytes of stores in $((t1 - t0)) ms"
fi

RANDOM=$seed
killed=0 finished=0 onerank=0 total_prefix=0 dangling=0
modes=(sync interval close)
everys=(1 10 100 1000 5000)
mss=(0 5 100)
for it in $(seq 1 "$iterations"); do
    store="$dir/s$it"
    sync=${modes[$((RANDOM % 3))]}
    every=${everys[$((RANDOM % 5))]}
    ms=${mss[$((RANDOM % 3))]}
    # the kill moment: when the stores reach pct% of a complete run's size
    # (progress, not wall time: insensitive to the machine's load); beyond
    # 100% the writer usually finishes first
    pct=$((RANDOM % 110))
    # every draw in this shell: bash reseeds RANDOM in a subshell ($(...)),
    # which would neither replay nor advance the seeded sequence
    if [ $((RANDOM % 4)) = 0 ]; then how=one-rank; else how=all-ranks; fi
    pick=$((RANDOM % np))
    P=(--sync "$sync" --commit-every "$every" --commit-ms "$ms")
    printf 'iteration %d: --sync %s --commit-every %s --commit-ms %s, kill %s at %d%%' \
        "$it" "$sync" "$every" "$ms" "$how" "$pct"
    if [ "$draws_only" = 1 ]; then
        echo " (rank pick $pick)"
        continue
    fi

    "$mpiexec" "$npflag" "$np" "$wl" write --store "$store" "${W[@]}" "${P[@]}" \
        >"$dir/write.out" 2>&1 &
    writer=$!
    deadline=$(($(now_ms) + 120000))
    until stores_created "$store" || ! kill -0 "$writer" 2>/dev/null; do
        [ "$(now_ms)" -lt "$deadline" ] || fail "the stores were not created within 120 s"
        sleep 0.005
    done
    # the ranks' pids now, so that the kill itself is immediate
    ranks=$(for p in $(descendants "$writer"); do
        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = ckpt-workload ] && echo "$p"; done)
    target=$((cal_bytes * pct / 100)) latest=$(($(now_ms) + cap))
    while kill -0 "$writer" 2>/dev/null && [ "$(store_bytes "$store")" -lt "$target" ] &&
        [ "$(now_ms)" -lt "$latest" ]; do
        sleep 0.001
    done
    if [ -n "$ranks" ]; then
        if [ "$how" = one-rank ]; then
            # one server dies; MPI takes the job (and the other ranks) down
            victim=$(echo "$ranks" | sed -n "$((pick % $(echo "$ranks" | wc -l) + 1))p")
            kill -KILL "$victim" 2>/dev/null
            for _ in $(seq 1 600); do kill -0 "$writer" 2>/dev/null || break; sleep 0.05; done
            # shellcheck disable=SC2046
            kill -KILL $(descendants "$writer") "$writer" 2>/dev/null
        else
            # shellcheck disable=SC2086
            kill -KILL $ranks 2>/dev/null
        fi
    fi
    wait "$writer" 2>/dev/null
    writer=""

    if grep -q "^result: phase=write" "$dir/write.out"; then
        finished=$((finished + 1))
        echo ": finished first"
        run verify --store "$store" "${W[@]}" >"$dir/v.out" 2>&1 ||
            fail "a completed write does not verify"
    else
        killed=$((killed + 1))
        [ "$how" = one-rank ] && onerank=$((onerank + 1))
    fi
    # every store opens and holds an exact committed prefix
    run verify --store "$store" "${W[@]}" --after-crash >"$dir/v.out" 2>&1 ||
        fail "verify --after-crash failed"
    [ "$(grep -c 'holds a committed prefix' "$dir/v.out")" -eq "$np" ] ||
        fail "not every rank reported its prefix"
    if grep -q "^result: phase=write" "$dir/write.out"; then
        inspect_ok "$store"
        : >"$dir/dangling-before"
    else
        printf ': prefixes %s' "$(sed -n 's/.*rank \([0-9]*\) holds a committed prefix of \([0-9]*\) of its \([0-9]*\).*/rank \1: \2\/\3/p' "$dir/v.out" | sort | paste -sd, -)"
        inspect_after_kill "$store" before
        d=$(wc -l <"$dir/dangling-before")
        dangling=$((dangling + d))
        [ "$d" = 0 ] || printf '; %d cross-rank memberships ahead of their objects' "$d"
        echo
    fi
    while read -r p; do
        total_prefix=$((total_prefix + p))
    done < <(sed -n 's/.*prefix of \([0-9]*\) of.*/\1/p' "$dir/v.out")

    # a restarted writer continues: new ids, none in use, prefix intact
    run restart --store "$store" --new-ids 2000 >"$dir/r.out" 2>&1 || fail "restart failed"
    grep -q "2000 new ids per rank, none in use" "$dir/r.out" || fail "restart: new ids not checked"
    run verify --store "$store" "${W[@]}" --after-crash >"$dir/v2.out" 2>&1 ||
        fail "verify --after-crash after the restart failed"
    diff <(grep 'committed prefix' "$dir/v.out" | sort) <(grep 'committed prefix' "$dir/v2.out" | sort) \
        >/dev/null || fail "the restart changed the committed prefix"
    inspect_after_kill "$store" after
    cmp -s "$dir/dangling-before" "$dir/dangling-after" || fail "the restart changed what verify reports"
    rm -rf "$store"
done

[ "$draws_only" = 1 ] && exit 0
echo "crash loop: $iterations iterations: $killed killed mid-write ($onerank by one rank)," \
     "$finished finished first; $total_prefix committed mutations survived, all prefixes exact;" \
     "$dangling cross-rank memberships were ahead of their objects' commits"
[ "$killed" -gt 0 ] || fail "no iteration killed the writer mid-write: the timing is off"
echo "crash loop: OK"
