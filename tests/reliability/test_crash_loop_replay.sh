#!/usr/bin/env bash
# The crash loop's seeding replays exactly (docs/RELIABILITY.md): the same
# --seed gives the same draws (sync mode, commit policy, kill moment, kill
# mode, rank picked) in every iteration, and another seed other draws.
# Before the fix the kill mode was drawn in a subshell, where bash reseeds
# RANDOM, so it changed from run to run.
# usage: test_crash_loop_replay.sh CRASH_LOOP_SCRIPT
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
loop=$1
draws() { bash "$loop" unused unused unused unused --draws-only --iterations 40 --seed "$1"; }
a=$(draws 8) b=$(draws 8) c=$(draws 9)
[ "$(echo "$a" | grep -c '^iteration ')" = 40 ] || { echo "FAIL: not 40 draws: $a" >&2; exit 1; }
[ "$a" = "$b" ] || { echo "FAIL: seed 8 drew differently twice:" >&2; diff <(echo "$a") <(echo "$b") >&2; exit 1; }
[ "$a" != "$c" ] || { echo "FAIL: seeds 8 and 9 drew the same" >&2; exit 1; }
echo "$a" | grep_all 'kill one-rank' && echo "$a" | grep_all 'kill all-ranks' ||
    { echo "FAIL: 40 draws did not include both kill modes" >&2; exit 1; }
echo "crash loop seeding: 40 draws of seed 8 replay exactly, seed 9 differs: OK"
