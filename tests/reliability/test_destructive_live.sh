#!/usr/bin/env bash
# No tool destroys a live store (issue 14, item 1). A 2-rank
# `ckpt-workload write` (sync mode, a commit every 20 mutations) is the live
# writer. Every command that removes or replaces store data is run against
# it while its ranks hold the store open (each command runs while the ranks
# are stopped with SIGSTOP, so that they are certainly still inside the
# store whatever the machine's speed; between commands they run on and
# commit, and once their workload is done they keep the store open until
# the last command has run). Each command must refuse: exit 1, naming the pid of a writer
# rank, and leave the store's directories as they were. The writer must
# then finish on its own (exit 0) and its whole workload must verify
# record by record (`ckpt-workload verify`, `ckpt-inspect verify`).
# Afterwards, with no writer: `write --force` and `demo --force` replace the
# store (only the new one verifies, nothing is left beside it), `demo`
# without --force refuses, and copies nested in their source are refused.
# usage: test_destructive_live.sh WORKLOAD INSPECT LEGACY_DIR MPIEXEC NUMPROC_FLAG
set -uo pipefail
wl=$1 insp=$2 legacy=$3 mpiexec=$4 npflag=$5
dir=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-destructive-XXXXXX")
writer="" ranks=""
cleanup() {
    # shellcheck disable=SC2086
    [ -n "$ranks" ] && kill -CONT $ranks 2>/dev/null
    if [ -n "$writer" ] && kill -0 "$writer" 2>/dev/null; then
        kill -TERM "$writer" 2>/dev/null
        wait "$writer" 2>/dev/null
    fi
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    [ -f "$dir/out" ] && { echo "--- last output:" >&2; cat "$dir/out" >&2; }
    exit 1
}
run() { timeout 300 "$mpiexec" "$npflag" "$1" "$wl" "${@:2}"; }
S="$dir/store"
W=(--objects 8000 --tags-per-object 4 --tagged 50)

# shellcheck source=procs.sh
. "$(dirname "$0")/procs.sh"
# what the store's directories hold (names, sizes are the writer's business)
layout() { (cd "$S" && find . -maxdepth 1 | sort); }

# the writer keeps its store open after its workload while $hold exists
# (CKPT_WORKLOAD_HOLD), however fast the machine runs it: every command
# below meets a live writer
hold="$dir/hold"
touch "$hold"
CKPT_WORKLOAD_HOLD="$hold" "$mpiexec" "$npflag" 2 "$wl" write --store "$S" "${W[@]}" --sync sync --commit-every 20 \
    >"$dir/writer.out" 2>&1 &
writer=$!
# both ranks' stores exist and hold their writers' pids
for _ in $(seq 1 1200); do
    [ -s "$S/rank-0/writer.lock" ] && [ -s "$S/rank-1/writer.lock" ] && break
    kill -0 "$writer" 2>/dev/null || fail "the writer ended before its stores existed"
    sleep 0.05
done
[ -s "$S/rank-1/writer.lock" ] || fail "the writer's stores did not appear"
ranks=$(for p in $(descendants "$writer"); do
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = ckpt-workload ] && echo "$p"; done)
[ "$(echo "$ranks" | wc -w)" = 2 ] || fail "expected 2 writer ranks, found: $ranks"
pids=$(cat "$S"/rank-*/writer.lock | tr -d ' ' | sort)
[ "$pids" = "$(echo "$ranks" | tr ' ' '\n' | sort)" ] ||
    fail "writer.lock holds $pids, the writer ranks are $ranks"

tried=0
# refused CMD...: run while the writer's ranks are stopped; must exit 1,
# name a writer rank's pid (or, with REASON set, match REASON), and leave
# the store's layout alone
refused() {
    local before rc=0 want=${REASON:-}
    # shellcheck disable=SC2086
    kill -STOP $ranks
    before=$(layout)
    "$@" >"$dir/out" 2>&1 || rc=$?
    [ "$(layout)" = "$before" ] || fail "'$*' changed the store's directories"
    # shellcheck disable=SC2086
    kill -CONT $ranks
    [ "$rc" = 1 ] || fail "'$*' against a live store: exit $rc, expected 1"
    if [ -n "$want" ]; then
        grep -q -- "$want" "$dir/out" || fail "'$*': no \"$want\" in its message"
    else
        local ok=0 p
        for p in $ranks; do grep -q "(pid $p)" "$dir/out" && ok=1; done
        [ "$ok" = 1 ] || fail "'$*': its message names no writer pid ($ranks)"
    fi
    kill -0 "$writer" 2>/dev/null || fail "the writer ended while '$*' ran"
    tried=$((tried + 1))
    echo "refused: $*"
    head -3 "$dir/out" | sed 's/^/    /'
    sleep 0.05 # the writer commits on
}

refused run 2 write --store "$S" --objects 10 --force
refused run 1 write --store "$S" --objects 10 --force
refused run 2 demo --store "$S" --objects 10 --force
REASON="already there" refused run 2 demo --store "$S" --objects 10
REASON="already there" refused run 2 write --store "$S" --objects 10
refused run 3 restart --store "$S"
refused run 1 restart --store "$S" --rebuild
REASON="not empty" refused "$insp" import-legacy --store "$S" "$legacy"/L1/metadata_checkpoint.0
REASON="inside the store" refused "$insp" copy "$S" "$S/copy"
REASON="inside the store" refused "$insp" copy "$S" "$S/rank-2"
REASON="holds the store" refused "$insp" copy "$S" "$dir"
mkdir -p "$dir/other/rank-0"
REASON="already holds a store" refused "$insp" copy "$S" "$dir/other"
rm -rf "$dir/other"

# the writer finishes on its own, and everything it wrote is there
rm -f "$hold"
wait "$writer" || fail "the writer failed: $(cat "$dir/writer.out")"
writer="" ranks=""
grep -q "^result: phase=write" "$dir/writer.out" || fail "the writer did not finish its workload"
run 2 verify --store "$S" "${W[@]}" >"$dir/out" 2>&1 || fail "the writer's store does not verify"
echo "after the writer finished: $(cat "$dir/out")"
"$insp" verify "$S" >"$dir/out" 2>&1 || fail "ckpt-inspect verify after the live commands"
echo "ckpt-inspect: $(tail -1 "$dir/out")"
ls -d "$dir"/store.new-* >/dev/null 2>&1 && fail "a replacing write left a directory beside the store"

# no writer: --force replaces the whole store, only with a complete one
W2=(--objects 300 --tags-per-object 2)
cp -a "$S/rank-1" "$dir/rank-1.saved"
run 2 write --store "$S" --objects 300 >"$dir/out" 2>&1 && fail "write over a store without --force"
grep -q "already there" "$dir/out" || fail "write without --force: no \"already there\""
run 1 write --store "$S" "${W2[@]}" --force >"$dir/out" 2>&1 || fail "write --force on 1 rank"
[ -d "$S/rank-1" ] && fail "write --force on 1 rank kept the old store's rank-1"
run 1 verify --store "$S" "${W2[@]}" >"$dir/out" 2>&1 || fail "the replaced store does not verify"
ls -d "$dir"/store.new-* >/dev/null 2>&1 && fail "write --force left a directory beside the store"
run 2 demo --store "$S" --objects 100 >"$dir/out" 2>&1 && fail "demo over a store without --force"
grep -q "already there" "$dir/out" || fail "demo without --force: no \"already there\""
run 2 demo --store "$S" --objects 100 --force >"$dir/out" 2>&1 || fail "demo --force"
grep -q "verify .*OK" "$dir/out" || fail "demo --force did not verify"
ls -d "$dir"/store.new-* >/dev/null 2>&1 && fail "demo --force left a directory beside the store"
"$insp" verify "$S" >"$dir/out" 2>&1 || fail "ckpt-inspect verify after demo --force"
echo "destructive commands against a live store: $tried refused, nothing lost; write --force and demo --force replace only with a complete store: OK"
