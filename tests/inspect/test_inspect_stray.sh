#!/usr/bin/env bash
# Stray entries in a store root (issue 14, item 5): a rank directory beyond
# the store's rank count (here a copy of rank-1 as rank-5, as a careless
# `cp -r` or a copy into the store would leave) and an unknown file.
#   - ckpt-inspect stat lists both, shows rank-5 as stray and leaves it out
#     of the totals (text and --json);
#   - ckpt-inspect verify reports both (exit 1; --json too);
#   - a restart on the same count and a re-homing to 3 ranks refuse before
#     changing anything, naming both entries and the command that removes
#     them: every data.mdb is unchanged byte for byte, no .rehome appears;
#   - once they are removed, the re-homing runs and the store verifies.
# usage: test_inspect_stray.sh WORKLOAD INSPECT MPIEXEC NUMPROC_FLAG
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
wl=$1 insp=$2 mpiexec=$3 npflag=$4
dir=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-stray-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/out" ] && cat "$dir/out" >&2; exit 1; }
run() { timeout 300 "$mpiexec" "$npflag" "$1" "$wl" "${@:2}"; }
S="$dir/s"
W=(--objects 500 --tags-per-object 2 --tagged 10)
run 2 write --store "$S" "${W[@]}" >/dev/null || fail "write"
"$insp" stat "$S" --json >"$dir/clean.json" || fail "stat of the clean store"
cp -a "$S/rank-1" "$S/rank-5"
echo "notes" >"$S/notes.txt"
sums() { md5sum "$S"/rank-*/data.mdb; }

# stat: both listed, rank-5 not counted
"$insp" stat "$S" >"$dir/out" 2>&1 || fail "stat with strays: exit $?"
grep -A1 "^rank-5: " "$dir/out" | grep_all "^  stray: beyond the store's ranks" ||
    fail "stat does not mark rank-5 stray"
grep -q "^stray: $S/rank-5: a rank directory beyond the store's 2 ranks" "$dir/out" || fail "stat: rank-5"
grep -q "^stray: $S/notes.txt: not part of a pdc-ckpt store" "$dir/out" || fail "stat: notes.txt"
grep -q "^total: 2 ranks" "$dir/out" || fail "stat counts the stray rank"
"$insp" stat "$S" --json >"$dir/stat.json" || fail "stat --json with strays"
python3 - "$dir/stat.json" "$dir/clean.json" <<'PY' || fail "stat --json: $(cat "$dir/stat.json")"
import json, sys
d, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert sorted(s["name"] for s in d["stray"]) == ["notes.txt", "rank-5"], d["stray"]
assert [r["dir"] for r in d["ranks"] if r.get("stray")] == ["rank-5"], d["ranks"]
assert d["total"] == c["total"], (d["total"], c["total"])
assert c["stray"] == []
PY

# verify: both are problems
if "$insp" verify "$S" >"$dir/out" 2>&1; then fail "verify passed a root with strays"; fi
grep -q "^rank 5: meta: directory rank-5 is beyond the store's 2 ranks" "$dir/out" || fail "verify: rank-5"
grep -q "^stray $S/notes.txt: not part of a pdc-ckpt store; remove it" "$dir/out" || fail "verify: notes.txt"
if "$insp" verify --json "$S" >"$dir/v.json" 2>"$dir/out"; then fail "verify --json passed strays"; fi
python3 - "$dir/v.json" <<'PY' || fail "verify --json: $(cat "$dir/v.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False
w = [p["where"] for p in d["problems"]]
assert any(x.endswith("/notes.txt") and x.startswith("stray ") for x in w), w
assert any(p.get("rank") == 5 for p in d["problems"]), d["problems"]
PY

# restart and re-homing refuse before changing anything
before=$(sums)
for np in 2 3; do
    if run "$np" restart --store "$S" >"$dir/out" 2>&1; then fail "restart on $np ranks with strays"; fi
    grep -q "rank-5 (a rank directory beyond the store's 2 ranks)" "$dir/out" || fail "restart $np: rank-5"
    grep -q "notes.txt (not part of a pdc-ckpt store)" "$dir/out" || fail "restart $np: notes.txt"
    grep -q "nothing was changed: remove them (rm -r" "$dir/out" || fail "restart $np: what to remove"
    [ "$(sums)" = "$before" ] || fail "restart on $np ranks changed a data.mdb"
    [ -e "$S/.rehome" ] && fail "restart on $np ranks left .rehome"
done
echo "refused: $(grep -m1 'rank 0' "$dir/out")"

rm -r "$S/rank-5" "$S/notes.txt"
run 3 restart --store "$S" >/dev/null || fail "re-homing once the strays are gone"
run 3 verify --store "$S" "${W[@]}" >/dev/null || fail "verify after the re-homing"
"$insp" verify "$S" >"$dir/out" 2>&1 || fail "ckpt-inspect verify after the re-homing"
echo "stray entries: reported by stat and verify, refused by restart and re-homing: OK"
