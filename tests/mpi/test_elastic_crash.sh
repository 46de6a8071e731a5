#!/usr/bin/env bash
# A re-homing killed midway leaves a store that restarts on either count:
#  - killed while copying (before the commit point): the next restart on
#    the old count rolls it back and finds the old store intact;
#  - killed while switching layouts (after the commit point): the next
#    restart, on yet another count, rolls it forward and re-homes again.
# Every time, every record verifies.
# usage: test_elastic_crash.sh WORKLOAD MPIEXEC NUMPROC_FLAG
set -euo pipefail
wl=$1 mpiexec=$2 npflag=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
W=(--objects 3000 --tags-per-object 4 --tagged 50 --seed 5)
run() { local np=$1; shift; "$mpiexec" "$npflag" "$np" "$wl" "$@"; }

run 4 write --store "$dir/s" "${W[@]}" >/dev/null

# 1. crash during the copy, 4 -> 2
if PDC_CKPT_FAULT=rehome-copy run 2 restart --store "$dir/s" >/dev/null 2>&1; then
    echo "FAIL: the fault was not injected"; exit 1
fi
[ -d "$dir/s/.rehome" ]                       # the unfinished copy is there
run 4 restart --store "$dir/s" | tee "$dir/o1"  # old count: rolled back
grep -q "rolled back" "$dir/o1"
[ ! -e "$dir/s/.rehome" ]
run 4 verify --store "$dir/s" "${W[@]}"

# 2. crash during the switch, 4 -> 2 (after the commit point)
if PDC_CKPT_FAULT=rehome-switch run 2 restart --store "$dir/s" >/dev/null 2>&1; then
    echo "FAIL: the fault was not injected"; exit 1
fi
[ -e "$dir/s/.rehome/COMPLETE" ]               # committed, not yet switched
# the new layout's tag index is whole: the re-homing merged its delta
"$(dirname "$wl")/ckpt-inspect" stat "$dir/s/.rehome" --json | python3 -c '
import json, sys
ranks = json.load(sys.stdin)["ranks"]
assert len(ranks) == 2, ranks
for r in ranks:
    assert r["tagidx_pending"] == 0, (r["dir"], r["tagidx_pending"])
    assert r["databases"]["kvtag_name"]["entries"] == r["databases"]["kvtag"]["entries"], r["dir"]
'
run 3 restart --store "$dir/s" | tee "$dir/o2" # rolled forward to 2, then 2 -> 3
grep -q "rolled forward" "$dir/o2"
grep -q "phase=rehome from=2 to=3" "$dir/o2"
run 3 verify --store "$dir/s" "${W[@]}" --from-ranks 4
echo "re-homing crash recovery: OK"
