#!/usr/bin/env bash
# CLI conventions of every program (issue 14, item 7), docs/TOOLS.md
# "Command-line conventions":
#   - -h and --help, of the program and of each subcommand: the usage on
#     stdout, nothing on stderr, exit 0;
#   - an unknown option: exit 2, stderr names the option, nothing on stdout;
#   - an option value that does not parse: exit 2, stderr names the option;
#   - user errors are one clear line, never a signal or a Python traceback:
#     store-bench -d /nonexistent, ckpt-bench --report with a missing,
#     non-JSON or foreign file, ckpt-workload restart of a missing store;
#   - ckpt-workload verify takes the rank counts from the store and a
#     mismatch says what to run; after a re-homing no --from-ranks is
#     needed; ckpt-inspect verify --json is one JSON document;
#   - PDC_CKPT_DIR names ckpt-workload's store when --store is absent.
#   - ckpt-workload has this project's store only: --method of a benchmark
#     method is a usage error naming ckpt-bench-workload, which runs it.
# usage: test_cli.sh BULKI INSPECT WORKLOAD MPIEXEC NUMPROC_FLAG
#                    [STORE_BENCH BULKI_BENCH CKPT_BENCH BENCH_WORKLOAD]
# (the benchmark programs when the build has them: PDC_CKPT_BUILD_BENCH)
set -uo pipefail
bulki=$1 insp=$2 wl=$3 mpiexec=$4 npflag=$5
sbench=${6:-} bbench=${7:-} cbench=${8:-} bwl=${9:-}
dir=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-cli-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0 checked=0
bad() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}
mpi1() { timeout 120 "$mpiexec" "$npflag" 1 "$@"; }

# runc CMD...: run it; its stdout and stderr in $dir/out and $dir/err, its
# exit status in $rc
runc() {
    rc=0
    "$@" >"$dir/out" 2>"$dir/err" || rc=$?
    checked=$((checked + 1))
}
# help CMD...: usage on stdout, empty stderr, exit 0
help() {
    runc "$@"
    [ "$rc" = 0 ] || bad "'$*': exit $rc, expected 0"
    grep -qi "usage" "$dir/out" || bad "'$*': no usage on stdout"
    [ -s "$dir/err" ] && bad "'$*': wrote to stderr: $(head -2 "$dir/err")"
}
# usage_error WORD CMD...: exit 2, WORD on stderr, nothing on stdout
usage_error() {
    local word=$1
    shift
    runc "$@"
    [ "$rc" = 2 ] || bad "'$*': exit $rc, expected 2 ($(head -2 "$dir/err"))"
    grep -q -- "$word" "$dir/err" || bad "'$*': stderr does not name $word: $(head -3 "$dir/err")"
    [ -s "$dir/out" ] && bad "'$*': wrote to stdout on a usage error"
}
# user_error WORD CMD...: exit 1, WORD on stderr, no traceback or signal
user_error() {
    local word=$1
    shift
    runc "$@"
    [ "$rc" = 1 ] || bad "'$*': exit $rc, expected 1 ($(head -3 "$dir/err"))"
    grep -q "Traceback" "$dir/err" && bad "'$*': a Python traceback"
    grep -q -- "$word" "$dir/err" || bad "'$*': stderr does not say \"$word\": $(head -3 "$dir/err")"
}

# --- every program and subcommand: -h, --help, an unknown option ---
for h in -h --help; do
    help "$bulki" "$h"
    help "$bulki" decode "$h"
    help "$bulki" encode "$h"
    help "$insp" "$h"
    for c in stat dump get find verify copy import-legacy; do
        help "$insp" "$c" "$h"
    done
    help mpi1 "$wl" "$h"
    for c in write restart verify demo; do
        help mpi1 "$wl" "$c" "$h"
    done
done
usage_error --no-such-option "$bulki" decode --no-such-option x
usage_error --no-such-option "$bulki" encode --no-such-option x y
usage_error frobnicate "$bulki" frobnicate
usage_error --no-such-option "$insp" --no-such-option
usage_error frobnicate "$insp" frobnicate
for c in stat dump get find verify copy import-legacy; do
    usage_error --no-such-option "$insp" "$c" --no-such-option
done
usage_error ROOT "$insp" stat
usage_error '"extra"' "$insp" verify "$dir" extra
usage_error --rank "$insp" dump "$dir" --rank x
usage_error --id "$insp" get "$dir"
usage_error --tag "$insp" find "$dir"
usage_error --nranks "$insp" import-legacy --store "$dir/x" --nranks 0 f
usage_error frobnicate mpi1 "$wl" frobnicate
for c in write restart verify demo; do
    usage_error --no-such-option mpi1 "$wl" "$c" --no-such-option
done
usage_error --objects mpi1 "$wl" write --store "$dir/x" --objects many
usage_error --from-ranks mpi1 "$wl" verify --store "$dir/x" --objects 1 --from-ranks 0
usage_error --sync mpi1 "$wl" write --store "$dir/x" --objects 1 --sync never
usage_error ckpt-bench-workload mpi1 "$wl" write --store "$dir/x" --objects 1 --method sqlite

# --- the benchmark programs ---
if [ -n "$sbench" ]; then
    for h in -h --help; do
        help "$sbench" "$h"
        help "$bbench" "$h"
        help "$cbench" "$h"
        help mpi1 "$bwl" "$h"
    done
    usage_error "'x'" "$sbench" -x
    usage_error -n "$sbench" -n lots
    usage_error -r "$sbench" -r 1000
    usage_error -n "$bbench" -n 0
    usage_error "'x'" "$bbench" -x
    usage_error --no-such-option "$cbench" --no-such-option
    usage_error --repeat "$cbench" --repeat many
    usage_error --method mpi1 "$bwl" write --store "$dir/x" --objects 1 --method nosuch
    user_error "/nonexistent" "$sbench" -d /nonexistent/dir -n 100 -r 1
    user_error "No such file" "$cbench" --report "$dir/missing.json"
    echo '{"results": ' >"$dir/bad.json"
    user_error "not JSON" "$cbench" --report "$dir/bad.json"
    echo '{"results": [{"ranks": 1}]}' >"$dir/foreign.json"
    user_error "not a report" "$cbench" --report "$dir/foreign.json"
fi

# --- user errors: clear, no signal, no traceback ---
user_error "no store at" mpi1 "$wl" restart --store "$dir/typo"
[ -e "$dir/typo" ] && bad "restart of a missing store created $dir/typo"
mpi1 "$wl" restart --store "$dir/new" --create >"$dir/out" 2>&1 || bad "restart --create: $(cat "$dir/out")"
[ -d "$dir/new/rank-0" ] || bad "restart --create made no store"
checked=$((checked + 2))

# --- PDC_CKPT_DIR names the store when --store is absent (as the usage says) ---
PDC_CKPT_DIR="$dir/env" mpi1 "$wl" write --objects 20 >"$dir/out" 2>&1 || bad "write with PDC_CKPT_DIR: $(cat "$dir/out")"
[ -f "$dir/env/rank-0/data.mdb" ] || bad "write with PDC_CKPT_DIR did not write \$PDC_CKPT_DIR"
PDC_CKPT_DIR="$dir/env" mpi1 "$wl" verify --objects 20 >"$dir/out" 2>&1 || bad "verify with PDC_CKPT_DIR: $(cat "$dir/out")"
usage_error "PDC_CKPT_DIR" env -u PDC_CKPT_DIR "$mpiexec" "$npflag" 1 "$wl" verify --objects 20
checked=$((checked + 2))

# --- rank counts come from the store ---
W=(--objects 400 --tags-per-object 2 --tagged 10)
S="$dir/s"
timeout 120 "$mpiexec" "$npflag" 2 "$wl" write --store "$S" "${W[@]}" >/dev/null 2>&1 ||
    bad "write on 2 ranks"
rc=0
timeout 120 "$mpiexec" "$npflag" 3 "$wl" verify --store "$S" "${W[@]}" >"$dir/out" 2>"$dir/err" || rc=$?
checked=$((checked + 1))
[ "$rc" = 1 ] || bad "verify on 3 ranks of a 2-rank store: exit $rc"
grep -q "holds a store of 2 ranks and this job has 3" "$dir/err" || bad "verify 3 of 2: $(cat "$dir/err")"
grep -q "mpiexec -n 2 ckpt-workload verify --store $S" "$dir/err" || bad "verify 3 of 2 does not say what to run"
grep -q "mpiexec -n 3 ckpt-workload restart --store $S" "$dir/err" || bad "verify 3 of 2 does not say how to re-home"
[ "$(grep -c 'holds a store' "$dir/err")" = 1 ] || bad "verify 3 of 2: said more than once"
timeout 120 "$mpiexec" "$npflag" 3 "$wl" restart --store "$S" >/dev/null 2>&1 || bad "re-homing 2 -> 3"
timeout 120 "$mpiexec" "$npflag" 3 "$wl" verify --store "$S" "${W[@]}" >"$dir/out" 2>&1 ||
    bad "verify after re-homing without --from-ranks: $(cat "$dir/out")"
timeout 120 "$mpiexec" "$npflag" 3 "$wl" restart --store "$S" --rebuild --check "${W[@]}" >"$dir/out" 2>&1 ||
    bad "restart --rebuild --check after re-homing without --from-ranks: $(cat "$dir/out")"
"$insp" stat "$S" --json >"$dir/stat.json" 2>"$dir/err" || bad "stat --json"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = d["ranks"]
assert [x["nranks"] for x in r] == [3, 3, 3], r
assert [x["origin_nranks"] for x in r] == [2, 2, 2], r' "$dir/stat.json" || bad "stat --json: origin_nranks"
checked=$((checked + 3))
"$insp" verify --json "$S" >"$dir/v.json" 2>"$dir/err" || bad "verify --json: exit $?"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["problems"] == [] and d["ranks"] == 3, d
assert d["checked"]["objects"] == 400, d' "$dir/v.json" || bad "verify --json of a good store: $(cat "$dir/v.json")"
checked=$((checked + 1))

echo "CLI conventions: $checked checks, $fails failed"
[ "$fails" = 0 ]
