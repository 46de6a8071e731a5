#!/usr/bin/env bash
# Elastic restart: a store written on FROM ranks restarts on TO ranks; every
# record is re-homed by PDC's routing rule and verified record by record on
# the new count, the rebuilt tables equal the workload's, ids keep their
# values and are found through the id directory, and new ids never collide.
# usage: test_elastic.sh WORKLOAD FROM TO MPIEXEC NUMPROC_FLAG
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
wl=$1 from=$2 to=$3 mpiexec=$4 npflag=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
W=(--objects 3000 --tags-per-object 4 --tagged 50 --seed 3)

"$mpiexec" "$npflag" "$from" "$wl" write --store "$dir/s" "${W[@]}" >/dev/null
"$mpiexec" "$npflag" "$to" "$wl" restart --store "$dir/s" --new-ids 1000 | tee "$dir/out"
grep -q "^result: phase=rehome from=$from to=$to records=" "$dir/out"
grep -q "none in use" "$dir/out"
# the store is now an ordinary TO-rank store: no leftovers of the old layout
[ "$(ls "$dir/s" | grep -c '^rank-')" -eq "$to" ]
[ ! -e "$dir/s/.rehome" ] && [ ! -e "$dir/s/.rehome-old" ]
"$mpiexec" "$npflag" "$to" "$wl" verify --store "$dir/s" "${W[@]}" --from-ranks "$from"
"$mpiexec" "$npflag" "$to" "$wl" restart --store "$dir/s" --rebuild --check "${W[@]}" \
    --from-ranks "$from" | grep_all "tables equal to the workload's"
# a second restart on the same count moves nothing
"$mpiexec" "$npflag" "$to" "$wl" restart --store "$dir/s" >"$dir/out2"
! grep -q "phase=rehome" "$dir/out2"
echo "elastic restart $from -> $to: OK"
