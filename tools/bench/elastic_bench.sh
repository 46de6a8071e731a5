#!/usr/bin/env bash
# Elastic restart timing (docs/ELASTIC.md): 100K objects x 10 tags, re-homed
# 4->2 and 2->4, against map and rebuild restarts of the same stores on the
# same count. usage: tools/bench/elastic_bench.sh build/bin/ckpt-workload [REPEATS]
set -e
WL=$1; R=${2:-5}; D=$(mktemp -d)
W="--objects 100000 --tags-per-object 10"
mpiexec -n 4 $WL write --store $D/s4 $W >/dev/null
mpiexec -n 2 $WL write --store $D/s2 $W >/dev/null
for i in $(seq $R); do
  rm -rf $D/t; cp -r $D/s4 $D/t
  mpiexec -n 2 $WL restart --store $D/t | grep "phase=rehome" | sed "s/^/4to2 /"
  rm -rf $D/t; cp -r $D/s2 $D/t
  mpiexec -n 4 $WL restart --store $D/t | grep "phase=rehome" | sed "s/^/2to4 /"
  mpiexec -n 4 $WL restart --store $D/s4 | grep "phase=restart_map" | sed "s/^/same4map /"
  mpiexec -n 2 $WL restart --store $D/s2 | grep "phase=restart_map" | sed "s/^/same2map /"
  mpiexec -n 4 $WL restart --store $D/s4 --rebuild | grep "phase=restart_rebuild" | sed "s/^/same4rebuild /"
  mpiexec -n 2 $WL restart --store $D/s2 --rebuild | grep "phase=restart_rebuild" | sed "s/^/same2rebuild /"
done
rm -rf $D
