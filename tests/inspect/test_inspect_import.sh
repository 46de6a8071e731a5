#!/usr/bin/env bash
# ckpt-inspect import-legacy on files a real PDC server wrote: every shared
# legacy case imports (also into another rank count), the result passes
# ckpt-inspect verify and restarts under the model server (map and
# rebuild); a truncated or corrupted file imports nothing, and an existing
# store is never overwritten.
# usage: test_inspect_import.sh INSPECT WORKLOAD LEGACY_DATA MPIEXEC NUMPROC_FLAG
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
inspect=$1 wl=$2 data=$3 mpiexec=$4 npflag=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

check_import() { # case nranks objects
    local c=$1 n=$2 objs=$3 root="$dir/$1-$2"
    "$inspect" import-legacy --store "$root" --nranks "$n" "$data/$c"/metadata_checkpoint.* |
        tee "$dir/out"
    grep -q "objects $objs," "$dir/out"
    "$inspect" verify "$root" | grep_all "verified $objs objects, .* in $n ranks: OK"
    # the model PDC server restarts from it, both ways
    "$mpiexec" "$npflag" "$n" "$wl" restart --store "$root" >/dev/null
    "$mpiexec" "$npflag" "$n" "$wl" restart --store "$root" --rebuild | grep_all "$objs objects"
}
check_import L1 1 12
check_import L1 3 12
check_import L2 2 200
check_import L2 1 200

# one object's fields, tags and data-server regions as PDC wrote them
"$inspect" get "$dir/L1-3" --name sim/run1/obj_a0 --time-step 0 >"$dir/get.json"
python3 - "$dir/get.json" "$data/L1/expected.json" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
exp = json.load(open(sys.argv[2]))
objs = [o for f in exp["files"].values() for o in f["objects"]]
want = [o for o in objs if o["obj_name"] == "sim/run1/obj_a0" and o["time_step"] == 0][0]
text = json.dumps(got)
assert str(want["obj_id"]) in text, "obj_id"
for t in want["kvtags"]:
    assert t["name"] in text, "kvtag " + t["name"]
PY

# a file cut short: exit 1, the file and byte offset named, nothing written
head -c 300000 "$data/L2/metadata_checkpoint.1" >"$dir/cut.1"
if "$inspect" import-legacy --store "$dir/bad" "$data/L2/metadata_checkpoint.0" "$dir/cut.1" \
    2>"$dir/err"; then
    echo "FAIL: a truncated file imported"; exit 1
fi
grep -q "cut.1: byte [0-9]*:" "$dir/err"
grep -q "nothing was imported" "$dir/err"
[ ! -e "$dir/bad" ] && ! ls "$dir" | grep_all "bad.import"

# a corrupted count (n_cont = 2^31-1) likewise
cp "$data/L1/metadata_checkpoint.0" "$dir/huge.0"
printf '\xff\xff\xff\x7f' | dd of="$dir/huge.0" bs=1 seek=0 conv=notrunc status=none
if "$inspect" import-legacy --store "$dir/bad2" "$dir/huge.0" 2>"$dir/err"; then
    echo "FAIL: a corrupted file imported"; exit 1
fi
grep -q "huge.0: byte 0:" "$dir/err"
[ ! -e "$dir/bad2" ]

# an existing store is refused and left as it was
before=$(cksum <"$dir/L1-1/rank-0/data.mdb")
if "$inspect" import-legacy --store "$dir/L1-1" "$data/L1/metadata_checkpoint.0" 2>"$dir/err"; then
    echo "FAIL: imported over an existing store"; exit 1
fi
[ "$(cksum <"$dir/L1-1/rank-0/data.mdb")" = "$before" ]
echo "import-legacy: OK"
