#!/usr/bin/env bash
# Re-homing by id (PDC's server's placement): written on FROM ranks,
# restarted on TO ranks (checked), again on TO (nothing moves, the same
# checks), then back on FROM (re-homed again, checked). elastic_by_id.c
# says what is checked.
# usage: test_elastic_by_id.sh PROGRAM FROM TO MPIEXEC NUMPROC_FLAG
set -euo pipefail
prog=$1 from=$2 to=$3 mpiexec=$4 npflag=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$mpiexec" "$npflag" "$from" "$prog" write "$dir/s"
"$mpiexec" "$npflag" "$to" "$prog" check "$dir/s" "$from" | tee "$dir/out1"
grep -q "^restart: $from -> $to ranks" "$dir/out1"
"$mpiexec" "$npflag" "$to" "$prog" check "$dir/s" "$from" | tee "$dir/out2"
grep -q "^restart: $to -> $to ranks, 0 records" "$dir/out2"
"$mpiexec" "$npflag" "$from" "$prog" check "$dir/s" "$from" | tee "$dir/out3"
grep -q "^restart: $to -> $from ranks" "$dir/out3"
[ "$(ls "$dir/s" | grep -c '^rank-')" -eq "$from" ]
echo "re-homing by id $from -> $to -> $from: OK"
