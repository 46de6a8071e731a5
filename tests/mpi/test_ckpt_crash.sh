#!/usr/bin/env bash
# A writer SIGKILLed in the middle of its workload: every rank's store must
# open and hold an exact committed prefix of that rank's mutation stream,
# a restart (map) must succeed on it, and the store must take new writes.
# usage: test_ckpt_crash.sh WORKLOAD NP MPIEXEC NUMPROC_FLAG
set -euo pipefail
wl=$1 np=$2 mpiexec=$3 npflag=$4
dir=$(mktemp -d)
trap 'pkill -9 -f "$dir/s" 2>/dev/null || true; rm -rf "$dir"' EXIT
W=(--objects 400000 --tags-per-object 10)

"$mpiexec" "$npflag" "$np" "$wl" write --store "$dir/s" "${W[@]}" >"$dir/write.out" 2>&1 &
# kill once every rank has committed something, long before the end
for _ in $(seq 1 200); do
    n=0
    for r in $(seq 0 $((np - 1))); do
        s=$(stat -c %s "$dir/s/rank-$r/data.mdb" 2>/dev/null || echo 0)
        [ "$s" -gt 2000000 ] && n=$((n + 1))
    done
    [ "$n" -eq "$np" ] && break
    sleep 0.05
done
pkill -9 -f "ckpt-workload write --store $dir/s" || true
wait || true
if grep -q "^result: phase=write" "$dir/write.out"; then
    echo "FAIL: the writer finished before it was killed"; exit 1
fi

"$mpiexec" "$npflag" "$np" "$wl" verify --store "$dir/s" "${W[@]}" --after-crash | tee "$dir/v.out"
[ "$(grep -c 'holds a committed prefix' "$dir/v.out")" -eq "$np" ]
# something was committed, and not everything
grep -q "prefix of 0 of" "$dir/v.out" && { echo "FAIL: nothing committed"; exit 1; }
# a full verify must fail: the workload did not finish
if "$mpiexec" "$npflag" "$np" "$wl" verify --store "$dir/s" "${W[@]}" 2>/dev/null; then
    echo "FAIL: a killed workload verified as complete"; exit 1
fi
# restart works on the crashed store, and leaves the prefix intact
"$mpiexec" "$npflag" "$np" "$wl" restart --store "$dir/s"
"$mpiexec" "$npflag" "$np" "$wl" verify --store "$dir/s" "${W[@]}" --after-crash >"$dir/v2.out"
diff <(sort "$dir/v.out") <(sort "$dir/v2.out")
echo "crash/restart on $np ranks: OK"
