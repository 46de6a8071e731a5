#!/usr/bin/env bash
# ckpt-inspect get --name on a same-name group (objects that share name and
# time step and differ in user id or app name, as PDC allows): a store
# written through the hooks (samename_store) holds "results" ts 0 three
# times (a fourth deleted), "results" ts 1 once and "single" once.
# `get --name results` prints all three live ones, pretty-printed, in
# creation order, with their own kvtags, and says on stderr how many share
# the name; `--json` prints the same as one line each; a name held by one
# object prints that one only; the deleted one is never shown; a missing
# name exits 1. No PDC needed.
# usage: test_inspect_samename.sh INSPECT SAMENAME_STORE
set -euo pipefail
inspect=$1 gen=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/inspect-samename.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$gen" "$work/store" >"$work/ids" || fail "samename_store exited $?"
mapfile -t ids <"$work/ids"
"$inspect" verify "$work/store" >"$work/verify.out" || { cat "$work/verify.out"; fail "verify"; }

# check FILE MODE EXPECTED_IDS...: the documents of FILE (pretty: a
# sequence of JSON documents; lines: one per line) are objects with these
# ids in this order, each with its own record, kvtag and container
check() {
    python3 - "$@" <<'PY'
import json, sys
path, mode, want = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
text = open(path).read()
docs = []
if mode == "lines":
    lines = [l for l in text.split("\n") if l.strip()]
    docs = [json.loads(l) for l in lines]
else:
    dec, i = json.JSONDecoder(), 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            break
        d, i = dec.raw_decode(text, i)
        docs.append(d)
    if len(docs) > 0 and "\n" not in text.strip():
        sys.exit("not pretty-printed")
got = [d["id"] for d in docs]
if got != want:
    sys.exit("ids %s, expected %s" % (got, want))
for d in docs:
    o = d["object"]
    if o["obj_id"] != d["id"]:
        sys.exit("document %d holds object %d" % (d["id"], o["obj_id"]))
    if d["container"] is None or d["container"]["name"] != "sc":
        sys.exit("object %d: container %s" % (d["id"], d["container"]))
print(" ".join("%d:%s/%s/%d%s" % (d["id"], o["obj_name"], d["object"]["app_name"],
      d["object"]["user_id"], "".join("/" + t["name"] + "=" + str(t["value"]) for t in d["kvtags"]))
      for d in docs for o in [d["object"]]))
PY
}

st=0
"$inspect" get "$work/store" --name results >"$work/g.out" 2>"$work/g.err" || st=$?
[ "$st" -eq 0 ] || { cat "$work/g.err"; fail "get --name results exited $st"; }
out=$(check "$work/g.out" pretty "${ids[0]}" "${ids[1]}" "${ids[2]}") || fail "get --name results: $out"
echo "get --name results: $out"
[ "$out" = "${ids[0]}:results/appA/1001/who=A ${ids[1]}:results/appB/1001/who=B ${ids[2]}:results/appA/1002/who=C" ] ||
    fail "get --name results: wrong records or kvtags: $out"
grep -q "3 objects are named \"results\" with time step 0" "$work/g.err" ||
    { cat "$work/g.err"; fail "get does not say how many objects share the name"; }

st=0
"$inspect" get "$work/store" --name results --json >"$work/j.out" 2>"$work/j.err" || st=$?
[ "$st" -eq 0 ] || fail "get --name results --json exited $st"
[ "$(wc -l <"$work/j.out")" -eq 3 ] || fail "get --json: $(wc -l <"$work/j.out") lines, expected 3"
out=$(check "$work/j.out" lines "${ids[0]}" "${ids[1]}" "${ids[2]}") || fail "get --json: $out"
echo "get --name results --json: $out"

# one object of that name and time step: that one, no note
"$inspect" get "$work/store" --name results --time-step 1 >"$work/t1.out" 2>"$work/t1.err" ||
    fail "get --name results --time-step 1 exited $?"
out=$(check "$work/t1.out" pretty "${ids[4]}") || fail "get --time-step 1: $out"
[ ! -s "$work/t1.err" ] || { cat "$work/t1.err"; fail "get of a single object wrote to stderr"; }
"$inspect" get "$work/store" --name single --json >"$work/s.out" || fail "get --name single exited $?"
out=$(check "$work/s.out" lines "${ids[5]}") || fail "get --name single: $out"
# by id, the deleted one is gone, and a missing name exits 1
"$inspect" get "$work/store" --id "${ids[1]}" --json >"$work/i.out" || fail "get --id exited $?"
out=$(check "$work/i.out" lines "${ids[1]}") || fail "get --id: $out"
st=0
"$inspect" get "$work/store" --id "${ids[3]}" >/dev/null 2>&1 || st=$?
[ "$st" -eq 1 ] || fail "get --id of the deleted object exited $st, expected 1"
st=0
"$inspect" get "$work/store" --name nothing >"$work/n.out" 2>"$work/n.err" || st=$?
[ "$st" -eq 1 ] && [ ! -s "$work/n.out" ] && grep -q 'no object named "nothing"' "$work/n.err" ||
    fail "get --name nothing: exit $st, $(cat "$work/n.err")"
echo "PASS: get --name shows every object of a same-name group, in creation order"
