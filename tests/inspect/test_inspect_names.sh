#!/usr/bin/env bash
# ckpt-inspect's JSON is valid for any name and value bytes: a store whose
# container, object, kvtag names and values are not all UTF-8
# (inspect_names) goes through dump (friendly and --raw), get, find and
# stat --json; python3 reads every output as strict UTF-8 JSON, and finds
# each non-UTF-8 string as {"hex": "<its bytes>"} and each valid one as a
# plain string (docs/TOOLS.md, "Strings that are not UTF-8").
# usage: test_inspect_names.sh INSPECT INSPECT_NAMES
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
inspect=$1 mk=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
s=$dir/s
"$mk" "$s" >"$dir/ids" || fail "inspect_names"
{ read -r cont; read -r a; read -r b; read -r c; } <"$dir/ids"

"$inspect" dump "$s" >"$dir/dump.jsonl" || fail "dump"
"$inspect" dump "$s" --raw >"$dir/raw.jsonl" || fail "dump --raw"
"$inspect" get "$s" --id "$a" >"$dir/get-a.json" || fail "get --id $a"
"$inspect" get "$s" --name $'obj\xff\xfe' >"$dir/get-name.json" || fail "get --name (not UTF-8)"
"$inspect" get "$s" --name "café" --time-step 1 >"$dir/get-b.json" || fail "get --name café"
"$inspect" find "$s" --tag $'tag\xff' >"$dir/find.jsonl" || fail "find --tag (not UTF-8)"
"$inspect" find "$s" --tag "café" --value "€" >"$dir/find2.jsonl" || fail "find --tag café"
"$inspect" stat "$s" --json >"$dir/stat.json" || fail "stat --json"
"$inspect" verify "$s" | grep_all "verified 3 objects, 2 kvtags, 1 containers, 3 members" ||
    fail "verify"

python3 - "$dir" "$cont" "$a" "$b" "$c" <<'PY'
import json, sys
d, cont, a, b, c = sys.argv[1], *map(int, sys.argv[2:])

def load(name, lines=False):
    text = open(f"{d}/{name}", "rb").read().decode("utf-8")  # strict: raises on bad bytes
    if lines:
        return [json.loads(l) for l in text.splitlines()]
    return json.loads(text)

def hx(b):
    return {"hex": b.hex()}

dump = load("dump.jsonl", True)
raw = load("raw.jsonl", True)
assert len(dump) == len(raw) and len(dump) > 10, len(dump)
by = {}
for e in dump:
    by.setdefault(e["db"], []).append(e)
names = [e["key"]["name"] for e in by["obj_name"]]
assert hx(b"obj\xff\xfe") in names, names
assert "caf\u00e9" in names, names
long_prefix = b"a" * 447 + b"\xc3"  # the key's 448 bytes end inside the e-acute
assert any(n == hx(long_prefix) for n in names), names
assert any(e["key"].get("hashed") for e in by["obj_name"])
objs = {e["value"]["obj_id"]: e["value"] for e in by["obj"]}
assert objs[a]["obj_name"] == hx(b"obj\xff\xfe") and objs[a]["app_name"] == hx(b"app\xc3"), objs[a]
assert objs[b]["obj_name"] == "caf\u00e9", objs[b]
assert objs[c]["obj_name"] == ("a" * 447 + "\u00e9z"), objs[c]["obj_name"][-5:]
tags = {json.dumps(e["key"]["name"]): e for e in by["kvtag"]}
t = tags[json.dumps(hx(b"tag\xff"))]["value"]
assert t["name"] == hx(b"tag\xff") and t["value"] == hx(b"v\xe9"), t
t = tags[json.dumps("caf\u00e9")]["value"]
assert t["value"] == "\u20ac", t
assert by["cont"][0]["value"]["cont_name"] == hx(b"cont\xfe")
assert by["cont_name"][0]["key"]["name"] == hx(b"cont\xfe")
assert any(e["key"]["name"] == hx(b"tag\xff") for e in by["kvtag_name"])
# --raw: BULKI's own JSON form, same rule
rawtext = json.dumps(raw)
assert json.dumps(hx(b"obj\xff\xfe")) in rawtext and json.dumps(hx(b"cont\xfe")) in rawtext

g = load("get-a.json")
assert g["id"] == a and g["object"]["obj_name"] == hx(b"obj\xff\xfe"), g
assert {json.dumps(k["name"]) for k in g["kvtags"]} == {json.dumps(hx(b"tag\xff")), json.dumps("caf\u00e9")}
assert g["container"]["name"] == hx(b"cont\xfe"), g["container"]
assert load("get-name.json")["id"] == a
assert load("get-b.json")["id"] == b
f = load("find.jsonl", True)
assert len(f) == 1 and f[0]["owner"] == a and f[0]["name"] == hx(b"obj\xff\xfe") and f[0]["value"] == hx(b"v\xe9"), f
f = load("find2.jsonl", True)
assert len(f) == 1 and f[0]["owner"] == a and f[0]["value"] == "\u20ac", f
st = load("stat.json")
assert st["total"]["databases"]["obj"]["entries"] == 3
print("OK: every output is strict UTF-8 JSON")
PY
