#!/usr/bin/env bash
# write -> close -> restart (map) -> verify -> restart (rebuild, tables
# compared with the workload's) on NP ranks, plus the failure paths a user
# meets first: writing over an existing store, verifying a wrong workload.
# usage: test_ckpt_restart.sh WORKLOAD NP MPIEXEC NUMPROC_FLAG
set -euo pipefail
wl=$1 np=$2 mpiexec=$3 npflag=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { "$mpiexec" "$npflag" "$np" "$wl" "$@"; }
W=(--objects 2000 --tags-per-object 5 --tagged 100 --seed 7)

run write --store "$dir/s" "${W[@]}" | tee "$dir/write.out"
grep -q "^result: phase=write ranks=$np " "$dir/write.out"
for r in $(seq 0 $((np - 1))); do test -f "$dir/s/rank-$r/data.mdb"; done

run restart --store "$dir/s" | tee "$dir/map.out"
grep -q "^result: phase=restart_map ranks=$np " "$dir/map.out"
run verify --store "$dir/s" "${W[@]}"
run restart --store "$dir/s" --rebuild --check "${W[@]}" | tee "$dir/rebuild.out"
grep -q "tables equal to the workload's" "$dir/rebuild.out"
# the restarts must not have changed the content
run verify --store "$dir/s" "${W[@]}"

# writing over an existing store is refused with a clear error
if run write --store "$dir/s" "${W[@]}" 2>"$dir/err"; then
    echo "FAIL: write over an existing store succeeded"; exit 1
fi
grep -q "a store is already there" "$dir/err"

# a verifier given another workload names the first mismatch
if run verify --store "$dir/s" --objects 2000 --tags-per-object 5 --tagged 100 --seed 8 2>"$dir/err"; then
    echo "FAIL: verify accepted a store written with another seed"; exit 1
fi
grep -q "stored value differs" "$dir/err"
echo "mpi checkpoint/restart on $np ranks: OK"
