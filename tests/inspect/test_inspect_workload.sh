#!/usr/bin/env bash
# ckpt-inspect on a store written by ckpt-workload on 2 MPI ranks: stat,
# dump, get, find, verify and copy, every output parsed as JSON and checked
# against what the workload wrote; usage errors and exit codes.
# usage: test_inspect_workload.sh WORKLOAD INSPECT MPIEXEC NUMPROC_FLAG
set -euo pipefail
wl=$1 insp=$2 mpiexec=$3 npflag=$4
# shellcheck source=inspect_lib.sh
. "$(dirname "$0")/inspect_lib.sh"
S=$dir/s
py() { python3 -c "$@"; }

# 500 objects x 3 tags, obj0..obj9 tagged "Group" = i, a region every 8th
# object (63), container cont0 with all 500 members and its tag "owner"
"$mpiexec" "$npflag" 2 "$wl" write --store "$S" --objects 500 --tags-per-object 3 --tagged 10 >/dev/null

# ---- stat ----
expect_rc 0 "$insp" stat "$S" --json
py '
import json, sys
s = json.load(open(sys.argv[1]))
t = s["total"]; d = t["databases"]
assert t["ranks"] == 2, t
assert d["obj"]["entries"] == 500, d["obj"]
assert d["obj_name"]["entries"] == 500
assert d["kvtag"]["entries"] == 500 * 3 + 10 + 1, d["kvtag"]
assert d["kvtag_name"]["entries"] == d["kvtag"]["entries"]
assert d["cont"]["entries"] == 1 and d["cont_name"]["entries"] == 1
assert d["cont_obj"]["entries"] == 500
assert d["region"]["entries"] == 63
assert d["meta"]["entries"] == 2
assert [r["dir"] for r in s["ranks"]] == ["rank-0", "rank-1"]
for i, r in enumerate(s["ranks"]):
    assert r["rank"] == i and r["nranks"] == 2 and r["format_version"] == 5, r
    assert r["clean"] is True and r["generation"] == 1, r
    assert r["last_commit"].endswith("Z") and r["last_commit"][4] == "-", r["last_commit"]
    assert 0 < r["map_used"] <= r["map_size"], r
    # the tag index entries still in the delta (unmerged: a small store
    # closed within sync_ms), at most one per kvtag of the rank
    assert 0 <= r["tagidx_pending"] <= r["databases"]["kvtag"]["entries"], r
assert sum(r["databases"]["obj"]["entries"] for r in s["ranks"]) == 500
assert t["map_size"] == sum(r["map_size"] for r in s["ranks"])
' "$dir/out"
expect_rc 0 "$insp" stat "$S"
grep -q "^rank-0: format 5 (checksummed), rank 0 of 2, generation 1, closed cleanly, last commit 20" "$dir/out" \
    || fail "stat text: $(head -1 "$dir/out")"
grep -Eq "^  obj +500 +[0-9]+$" "$dir/out" || fail "stat text: no total obj line"

# ---- dump ----
expect_rc 0 "$insp" dump "$S" --db obj
py '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 500, len(lines)
names = set()
for l in lines:
    r = json.loads(l)
    assert r["db"] == "obj" and r["rank"] in (0, 1), r
    assert r["key"]["id"] == r["value"]["obj_id"], r
    assert r["key"]["id"] // 10**9 - 1 == r["rank"], r
    v = r["value"]
    i = int(v["obj_name"][3:])
    assert v["time_step"] == i % 3 and v["ndim"] == 1 + i % 3 and len(v["dims"]) == v["ndim"], v
    assert v["app_name"] == "ckpt-workload" and v["data_location"] == "/data/obj%d" % i, v
    names.add(v["obj_name"])
assert names == {"obj%d" % i for i in range(500)}
' "$dir/out"
# everything: one line per entry of every database
expect_rc 0 "$insp" dump "$S"
total=$("$insp" stat "$S" --json | py 'import json,sys; print(sum(d["entries"] for d in json.load(sys.stdin)["total"]["databases"].values()))')
[ "$(wc -l <"$dir/out")" = "$total" ] || fail "dump has $(wc -l <"$dir/out") lines, stat says $total entries"
py '
import json, sys
dbs = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    dbs.setdefault(r["db"], []).append(r)
m = dbs["meta"]
assert [r["value"]["rank"] for r in m] == [0, 1] and m[0]["value"]["magic"] == "pdc-ckpt", m
k = [r for r in dbs["kvtag"] if r["key"]["name"] == "tag1"][0]
assert k["value"]["type"] == "PDC_DOUBLE" and isinstance(k["value"]["value"], float), k
n = dbs["obj_name"][0]
assert set(n["key"]) == {"name", "time_step"} and "id" in n["value"], n
c = dbs["cont_obj"][0]
assert set(c["key"]) == {"cont_id", "obj_id"} and c["value"] is None, c
g = [r for r in dbs["region"] if "hist" in r["value"]][0]
assert g["key"]["start"] == g["value"]["start"] and g["value"]["hist"]["nbin"] == 4, g
assert len(g["value"]["hist"]["range"]) == 8
' "$dir/out"
# --rank, and --prefix per database
expect_rc 0 "$insp" dump "$S" --rank 1 --db obj
r1=$("$insp" stat "$S" --json | py 'import json,sys; print(json.load(sys.stdin)["ranks"][1]["databases"]["obj"]["entries"])')
[ "$(wc -l <"$dir/out")" = "$r1" ] || fail "dump --rank 1 --db obj: $(wc -l <"$dir/out") lines, stat says $r1"
py 'import json,sys; assert all(json.loads(l)["rank"] == 1 for l in open(sys.argv[1]))' "$dir/out"
expect_rc 0 "$insp" dump "$S" --db kvtag_name --prefix Group
py '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 10 and all(r["key"]["name"] == "Group" for r in rs), rs
' "$dir/out"
id7=$("$insp" dump "$S" --db obj_name --prefix obj7 | py 'import json,sys; r=[json.loads(l) for l in sys.stdin]; assert len(r)==1, r; print(r[0]["value"]["id"])')
expect_rc 0 "$insp" dump "$S" --db kvtag --prefix "$id7"
py '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert sorted(r["key"]["name"] for r in rs) == ["Group", "tag0", "tag1", "tag2"], rs
assert [r["value"]["value"] for r in rs if r["key"]["name"] == "Group"] == [7]
' "$dir/out"
expect_rc 0 "$insp" dump "$S" --db obj_name --prefix 'obj1*'
[ "$(wc -l <"$dir/out")" = 111 ] || fail "dump --prefix obj1*: $(wc -l <"$dir/out") lines, want 111"
expect_rc 0 "$insp" dump "$S" --db obj --prefix "$id7" --raw
py '
import json, sys
r = json.loads(open(sys.argv[1]).read())
pairs = {p["key"]["value"]: p["value"] for p in r["value"]["bulki"]}
assert pairs["obj_name"] == {"type": "PDC_STRING", "class": "item", "value": "obj7"}, pairs
' "$dir/out"

# ---- get ----
expect_rc 0 "$insp" get "$S" --id "$id7"
py '
import json, sys
g = json.load(open(sys.argv[1]))
assert g["id"] == int(sys.argv[2]) and g["object"]["obj_name"] == "obj7", g
assert g["object"]["time_step"] == 1
tags = {t["name"]: t for t in g["kvtags"]}
assert sorted(tags) == ["Group", "tag0", "tag1", "tag2"], tags
assert tags["Group"] == {"name": "Group", "type": "PDC_INT", "value": 7}, tags["Group"]
assert tags["tag0"]["value"] == 7 * 31 and tags["tag1"]["value"] == 7.25, tags
assert tags["tag2"] == {"name": "tag2", "type": "PDC_STRING", "value": "v7.2.0"}, tags["tag2"]
assert g["container"]["name"] == "cont0" and g["container"]["id"] == g["object"]["cont_id"], g
assert g["regions"] == []
' "$dir/out" "$id7"
expect_rc 0 "$insp" get "$S" --name obj16 --time-step 1
py '
import json, sys
g = json.load(open(sys.argv[1]))
assert g["object"]["obj_name"] == "obj16" and g["object"]["time_step"] == 1, g
assert len(g["regions"]) == 1 and g["regions"][0]["start"] == [16 * 1024], g["regions"]
assert "hist" in g["regions"][0] and g["regions"][0]["hist"]["bin"] == [16, 17, 18, 19]
assert "Group" not in [t["name"] for t in g["kvtags"]] and len(g["kvtags"]) == 3
assert g["container"]["name"] == "cont0"
' "$dir/out"
# obj7 has time step 1: asked for step 0 it is not found
expect_rc 1 "$insp" get "$S" --name obj7
grep -q '^ckpt-inspect: .*: no object named "obj7" with time step 0 in 2 ranks' "$dir/err" \
    || fail "get --name obj7: $(cat "$dir/err")"
expect_rc 1 "$insp" get "$S" --id 1000999999
grep -q "no object with id 1000999999" "$dir/err" || fail "get --id: $(cat "$dir/err")"
[ ! -s "$dir/out" ] || fail "get printed something for a missing object"
# an id of a rank that does not exist: the fallback searches all ranks
expect_rc 1 "$insp" get "$S" --id 7000000001

# ---- find ----
expect_rc 0 "$insp" find "$S" --tag Group
py '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 10, rs
assert sorted(r["name"] for r in rs) == sorted("obj%d" % i for i in range(10)), rs
for r in rs:
    assert r["kind"] == "object" and r["type"] == "PDC_INT" and r["value"] == int(r["name"][3:]), r
    assert r["owner"] // 10**9 - 1 == r["rank"], r
' "$dir/out"
expect_rc 0 "$insp" find "$S" --tag Group --value 3
py '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 1 and rs[0]["name"] == "obj3" and rs[0]["value"] == 3, rs
' "$dir/out"
expect_rc 0 "$insp" find "$S" --tag tag1 --value 42.25
py '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 1 and rs[0]["name"] == "obj42" and rs[0]["type"] == "PDC_DOUBLE", rs
' "$dir/out"
expect_rc 0 "$insp" find "$S" --tag tag2 --value v42.2.0
[ "$(wc -l <"$dir/out")" = 1 ] && grep -q '"name":"obj42"' "$dir/out" || fail "find string value"
expect_rc 0 "$insp" find "$S" --tag owner
py '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 1 and rs[0]["kind"] == "container" and rs[0]["name"] == "cont0", rs
assert rs[0]["value"] == "ckpt-workload"
' "$dir/out"
expect_rc 0 "$insp" find "$S" --tag Group --value notanumber
[ ! -s "$dir/out" ] || fail "find --value notanumber matched"
expect_rc 0 "$insp" find "$S" --tag nosuchtag
[ ! -s "$dir/out" ] || fail "find --tag nosuchtag matched"

# ---- verify ----
expect_rc 0 "$insp" verify "$S"
[ "$(cat "$dir/out")" = "verified 500 objects, 1511 kvtags, 1 containers, 500 members, 63 regions in 2 ranks: OK" ] \
    || fail "verify: $(cat "$dir/out")"

# ---- copy (of a closed store; the live case is test_inspect_live) ----
for mode in plain compact; do
    flag=""; [ $mode = compact ] && flag=--compact
    expect_rc 0 "$insp" copy "$S" "$dir/copy-$mode" $flag
    grep -q "^rank 1: copied .*/rank-1 to $dir/copy-$mode/rank-1 (" "$dir/out" || fail "copy: $(cat "$dir/out")"
    [ "$(stat -c %a "$dir/copy-$mode/rank-0/data.mdb")" = 600 ] || fail "copy is not 0600"
    [ "$(stat -c %a "$dir/copy-$mode/rank-0")" = 700 ] || fail "copy dir is not 0700"
    expect_rc 0 "$insp" verify "$dir/copy-$mode"
    grep -q "^verified 500 objects, 1511 kvtags" "$dir/out" || fail "verify of copy: $(cat "$dir/out")"
    "$insp" dump "$S" >"$dir/a"; "$insp" dump "$dir/copy-$mode" >"$dir/b"
    cmp -s "$dir/a" "$dir/b" || fail "copy ($mode) dumps differently"
done
# the copy is a store the workload can restart and verify
"$mpiexec" "$npflag" 2 "$wl" verify --store "$dir/copy-compact" --objects 500 --tags-per-object 3 --tagged 10 >/dev/null
# never over an existing store, nothing written
expect_rc 1 "$insp" copy "$S" "$dir/copy-plain"
grep -q "already holds a store" "$dir/err" || fail "copy over a store: $(cat "$dir/err")"
expect_rc 1 "$insp" copy "$S" "$S"

# ---- usage, errors, exit codes ----
expect_rc 0 "$insp" -V
grep -Eq "^ckpt-inspect [0-9]+\.[0-9]+\.[0-9]+ \(store format 5\)$" "$dir/out" || fail "-V: $(cat "$dir/out")"
expect_rc 0 "$insp" -h
grep -q "^usage: ckpt-inspect stat ROOT" "$dir/out" || fail "-h"
expect_rc 2 "$insp"
grep -q "^usage:" "$dir/err" || fail "no usage on stderr"
expect_rc 2 "$insp" frobnicate "$S"
expect_rc 2 "$insp" stat
expect_rc 2 "$insp" stat "$S" extra
expect_rc 2 "$insp" stat "$S" --bogus
expect_rc 2 "$insp" dump "$S" --db nosuchdb
expect_rc 2 "$insp" dump "$S" --prefix 5
expect_rc 2 "$insp" dump "$S" --db obj --prefix notanid
expect_rc 2 "$insp" get "$S"
expect_rc 2 "$insp" get "$S" --id 1 --name x
expect_rc 2 "$insp" get "$S" --id 1 --time-step 2
expect_rc 2 "$insp" find "$S"
expect_rc 2 "$insp" verify
expect_rc 2 "$insp" copy "$S"
expect_rc 1 "$insp" stat "$dir/nonexistent"
grep -q "^ckpt-inspect: $dir/nonexistent: No such file or directory$" "$dir/err" || fail "stat: $(cat "$dir/err")"
mkdir "$dir/empty"
expect_rc 1 "$insp" verify "$dir/empty"
grep -q "^ckpt-inspect: $dir/empty: no store here" "$dir/err" || fail "verify empty: $(cat "$dir/err")"
expect_rc 1 "$insp" dump "$S" --rank 5
grep -q "no rank 5 here" "$dir/err" || fail "dump --rank 5: $(cat "$dir/err")"
echo "ckpt-inspect on a 2-rank workload store: OK"
