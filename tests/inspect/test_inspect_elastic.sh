#!/usr/bin/env bash
# ckpt-inspect on a store re-homed from 2 to 3 ranks (ckpt-workload restart
# on another rank count): records no longer live on the rank that handed
# out their ids, and the id directory (id_home) says where they are.
# stat/verify see 3 ranks; get --id finds moved objects; dump shows the id
# directory; verify checks it and catches a wrong entry.
# usage: test_inspect_elastic.sh WORKLOAD INSPECT TAMPER MPIEXEC NUMPROC_FLAG
set -euo pipefail
wl=$1 insp=$2 tamper=$3 mpiexec=$4 npflag=$5
# shellcheck source=inspect_lib.sh
. "$(dirname "$0")/inspect_lib.sh"
S=$dir/s
W=(--objects 500 --tags-per-object 3 --tagged 10)
"$mpiexec" "$npflag" 2 "$wl" write --store "$S" "${W[@]}" >/dev/null
"$mpiexec" "$npflag" 3 "$wl" restart --store "$S" >"$dir/restart.out"
grep -q "^result: phase=rehome from=2 to=3 " "$dir/restart.out" || fail "no re-homing: $(cat "$dir/restart.out")"

expect_rc 0 "$insp" verify "$S"
[ "$(cat "$dir/out")" = "verified 500 objects, 1511 kvtags, 1 containers, 500 members, 63 regions in 3 ranks: OK" ] \
    || fail "verify: $(cat "$dir/out")"
expect_rc 0 "$insp" stat "$S" --json
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["total"]["ranks"] == 3 and s["total"]["databases"]["obj"]["entries"] == 500, s["total"]
assert all(r["nranks"] == 3 for r in s["ranks"])
assert s["total"]["databases"]["id_home"]["entries"] > 0
' "$dir/out"

# objects whose rank is not the one their id names, with their id_home entries
"$insp" dump "$S" --db obj >"$dir/obj"
"$insp" dump "$S" --db id_home >"$dir/idhome"
python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
homes = {}
for l in open(sys.argv[2]):
    r = json.loads(l)
    assert r["value"]["home"] in (0, 1, 2), r
    homes[r["key"]["id"]] = (r["rank"], r["value"]["home"])
moved = [o for o in objs if o["key"]["id"] // 10**9 - 1 != o["rank"]]
assert len(moved) > 50, len(moved)
for o in moved:
    # the directory rank of an id is (id / 1e9 - 1) % 3, and it names the home
    d, h = homes[o["key"]["id"]]
    assert d == (o["key"]["id"] // 10**9 - 1) % 3 and h == o["rank"], (o["key"], d, h)
with open(sys.argv[3], "w") as f:
    for o in moved[:8]:
        f.write("%d %s %d %d\n" % (o["key"]["id"], o["value"]["obj_name"], o["value"]["time_step"], o["rank"]))
' "$dir/obj" "$dir/idhome" "$dir/moved"
while read -r id name ts rank; do
    expect_rc 0 "$insp" get "$S" --id "$id"
    python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
assert g["id"] == int(sys.argv[2]) and g["object"]["obj_name"] == sys.argv[3], g
assert g["rank"] == int(sys.argv[4]) and g["container"]["name"] == "cont0", g
assert len(g["kvtags"]) >= 3
' "$dir/out" "$id" "$name" "$rank"
    expect_rc 0 "$insp" get "$S" --name "$name" --time-step "$ts"
    grep -q "\"id\": $id," "$dir/out" || fail "get --name $name"
done <"$dir/moved"
expect_rc 0 "$insp" find "$S" --tag Group
[ "$(wc -l <"$dir/out")" = 10 ] || fail "find --tag Group: $(cat "$dir/out")"

# a wrong id directory entry: on the id's directory rank, naming a rank
# that does not hold the id
read -r id name ts rank <"$dir/moved"
d=$(( (id / 1000000000 - 1) % 3 ))
wrong=$(( (rank + 1) % 3 ))
cp -a "$S" "$dir/d"
"$tamper" "$dir/d" "$d" id-home "$id" "$wrong"
expect_rc 1 "$insp" verify "$dir/d"
grep -q "^rank $d: id_home: id $id: says rank $wrong, which has no object or container $id$" "$dir/out" \
    || fail "verify of a wrong id_home: $(cat "$dir/out")"
# get still finds the object, by falling back to every rank
expect_rc 0 "$insp" get "$dir/d" --id "$id"
echo "ckpt-inspect on a re-homed store: OK"
