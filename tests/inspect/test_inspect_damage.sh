#!/usr/bin/env bash
# ckpt-inspect verify on damaged copies of a 2-rank ckpt-workload store:
# each damage gives exit 1 and a problem line naming rank, database and
# key, and verification goes on with the other ranks.
#   - bad BULKI bytes under a real obj key
#   - a missing rank directory
#   - an obj_name entry pointing at no object
#   - a kvtag_name entry with no kvtag behind it
#   - a rank whose data.mdb is not an LMDB file (open fails)
#   - a rank whose data.mdb is truncated
#   - a rank whose reading faults (SIGBUS), in every subcommand
# dump and find report the damaged records too.
# usage: test_inspect_damage.sh WORKLOAD INSPECT TAMPER MPIEXEC NUMPROC_FLAG
set -euo pipefail
wl=$1 insp=$2 tamper=$3 mpiexec=$4 npflag=$5
# shellcheck source=inspect_lib.sh
. "$(dirname "$0")/inspect_lib.sh"
fresh() { rm -rf "$dir/d"; cp -a "$dir/s" "$dir/d"; }

"$mpiexec" "$npflag" 2 "$wl" write --store "$dir/s" --objects 500 --tags-per-object 3 --tagged 10 >/dev/null
expect_rc 0 "$insp" verify "$dir/s"

# 1. garbage under a real obj key
fresh
id=$("$tamper" "$dir/d" 0 garbage-obj)
expect_rc 1 "$insp" verify "$dir/d"
has "^rank 0: obj: id $id: value does not decode as BULKI: "
has "^found [0-9]+ problems?; checked 500 objects, 1511 kvtags, 1 containers, 500 members, 63 regions in 2 ranks$"
grep -q "^ckpt-inspect: $dir/d: verification failed: " "$dir/err" || fail "stderr: $(cat "$dir/err")"
# only that record is wrong (its name entry and members still point at an existing key)
[ "$(grep -c '^rank ' "$dir/out")" = 1 ] || fail "one problem expected, got: $(cat "$dir/out")"
# dump shows it with an error and exits 1; get says so too
expect_rc 1 "$insp" dump "$dir/d" --db obj --prefix "$id"
python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["value"] is None and "does not decode as BULKI" in r["error"], r
' "$dir/out"
expect_rc 1 "$insp" get "$dir/d" --id "$id"
grep -q "object $id: value does not decode" "$dir/err" || fail "get: $(cat "$dir/err")"

# 2. a missing rank directory
fresh
rm -rf "$dir/d/rank-1"
expect_rc 1 "$insp" verify "$dir/d"
has "^rank 1: missing: no $dir/d/rank-1 directory, but the store has 2 ranks \(meta of rank 0\)$"
has " in 1 ranks$"

# 3. an obj_name entry pointing at no object
fresh
"$tamper" "$dir/d" 1 dangling-name ghost 2000777777
expect_rc 1 "$insp" verify "$dir/d"
has '^rank 1: obj_name: name "ghost" ts 0: points at id 2000777777, which is not an object of this rank$'
[ "$(grep -c '^rank ' "$dir/out")" = 1 ] || fail "one problem expected, got: $(cat "$dir/out")"

# 4. a tag index entry with no kvtag behind it; find reports it as well
fresh
"$tamper" "$dir/d" 0 orphan-tag-index Group 1000000042
expect_rc 1 "$insp" verify "$dir/d"
has '^rank 0: kvtag_name: name "Group" owner 1000000042: points nowhere: owner 1000000042 has no such kvtag$'
expect_rc 1 "$insp" find "$dir/d" --tag Group
[ "$(wc -l <"$dir/out")" = 10 ] || fail "find on damaged store: $(cat "$dir/out")"
grep -q "^ckpt-inspect: $dir/d/rank-0: kvtag_name: name \"Group\" owner 1000000042: points nowhere: owner 1000000042 has no such kvtag" "$dir/err" || fail "find: $(cat "$dir/err")"

# 5. a rank that does not open: verification goes on with the other
fresh
head -c 65536 /dev/urandom >"$dir/d/rank-1/data.mdb"
expect_rc 1 "$insp" verify "$dir/d"
has "^rank 1: open: $dir/d/rank-1/data.mdb: cannot open the LMDB environment"
has " in 1 ranks$"
# the members on the readable rank whose objects are on rank 1 are not
# reported one by one
[ "$(grep -c '^rank ' "$dir/out")" -le 2 ] || fail "too many problems: $(cat "$dir/out")"
expect_rc 1 "$insp" stat "$dir/d"
grep -q "^rank-0: format 5" "$dir/out" || fail "stat skipped the good rank"
grep -q "^ckpt-inspect: $dir/d/rank-1/data.mdb: cannot open" "$dir/err" || fail "stat: $(cat "$dir/err")"

# 6. a truncated data.mdb (the store refuses to open it: mapping it would
# fault): verify reports it and checks the other rank
fresh
truncate -s 8192 "$dir/d/rank-0/data.mdb"
expect_rc 1 "$insp" verify "$dir/d"
has "^rank 0: open: "
grep -q "^rank 1: " "$dir/out" && fail "problems reported on the intact rank 1: $(cat "$dir/out")"
has " in 1 ranks$"

# 7. reading a rank faults (SIGBUS, as LMDB reading a damaged map would;
# injected with CKPT_INSPECT_FAULT): every subcommand reports the rank,
# goes on with the others and exits 1, never dies of the signal
fresh
export CKPT_INSPECT_FAULT=rank-0
expect_rc 1 "$insp" verify "$dir/d"
has "^rank 0: open: reading $dir/d/rank-0/data.mdb crashed with SIGBUS: the file is damaged"
has " in 1 ranks$"
expect_rc 1 "$insp" stat "$dir/d" --json
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert "crashed with SIGBUS" in s["ranks"][0]["error"] and s["ranks"][1]["rank"] == 1, s["ranks"]
' "$dir/out"
grep -q "^ckpt-inspect: $dir/d/rank-0/data.mdb: reading the store crashed with SIGBUS" "$dir/err" \
    || fail "stat: $(cat "$dir/err")"
expect_rc 1 "$insp" dump "$dir/d" --db obj
python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert rs and all(r["rank"] == 1 for r in rs), len(rs)
' "$dir/out"
expect_rc 1 "$insp" find "$dir/d" --tag Group
[ "$(wc -l <"$dir/out")" -ge 1 ] || fail "find: no hits from rank 1"
expect_rc 1 "$insp" get "$dir/d" --name obj3
grep -q '"obj_name": "obj3"' "$dir/out" || fail "get: $(cat "$dir/out" "$dir/err")"
expect_rc 1 "$insp" copy "$dir/d" "$dir/c"
[ ! -e "$dir/c/rank-0" ] && [ ! -e "$dir/c/rank-1" ] || fail "copy left a partial copy"
unset CKPT_INSPECT_FAULT

echo "ckpt-inspect verify on damaged stores: OK"
