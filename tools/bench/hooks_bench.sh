#!/usr/bin/env bash
# Hooks end to end (README "Numbers"): 10K objects x 100 kvtags on 1 and 4
# ranks, 5 runs each of write (workload + close), map restart and rebuild
# restart, each in a fresh process; prints the median, min and max of each
# phase (the max over ranks per run).
# usage: tools/bench/hooks_bench.sh build/bin/ckpt-workload [RUNS]
set -euo pipefail
wl=$1 runs=${2:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
W=(--objects 10000 --tags-per-object 100)
for np in 1 4; do
    for _ in $(seq "$runs"); do
        rm -rf "$dir/s"
        mpiexec -n "$np" "$wl" write --store "$dir/s" "${W[@]}" | grep '^result:' | sed "s/^/np$np /"
        mpiexec -n "$np" "$wl" restart --store "$dir/s" | grep '^result:' | sed "s/^/np$np /"
        mpiexec -n "$np" "$wl" restart --store "$dir/s" --rebuild | grep '^result:' | sed "s/^/np$np /"
    done
done >"$dir/out"
python3 - "$dir/out" <<'PY'
import re, statistics, sys
d = {}
for line in open(sys.argv[1]):
    np = line.split()[0]
    for k in ("workload_s", "close_s"):
        m = re.search(k + r"=([0-9.]+)", line)
        if m:
            d.setdefault((np, k), []).append(float(m.group(1)))
    m = re.search(r"phase=(restart_\w+) .*seconds=([0-9.]+)", line)
    if m:
        d.setdefault((np, m.group(1)), []).append(float(m.group(2)))
for (np, k), v in sorted(d.items()):
    print(f"{np:4} {k:16} median {statistics.median(v):.4f} s  min {min(v):.4f}  max {max(v):.4f}  ({len(v)} runs)")
PY
