#!/usr/bin/env bash
# Thousands of ranks with few file descriptors: a store of NRANKS ranks
# (default 4096; import-legacy of the L2 legacy files makes it in seconds)
# under `ulimit -n 256`, where every LMDB environment holds 2-3 descriptors:
# import-legacy, stat, dump, get, find, verify and copy must open the ranks
# one at a time, and a re-homing of NRANKS old ranks onto 2 MPI ranks must
# read them one at a time too. Progress: a bar with ETA on a terminal
# (`script` gives the tools one), nothing on stderr otherwise.
# The store goes to /dev/shm when it is writable: importing 4096 ranks,
# each synced to disk, took 33 s on the development machine against 3 s in
# /dev/shm, which is fsync time, not what this test is about.
# usage: test_inspect_scale.sh INSPECT WORKLOAD LEGACY_DATA MPIEXEC NUMPROC_FLAG [NRANKS]
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
inspect=$1 wl=$2 data=$3 mpiexec=$4 npflag=$5 n=${6:-4096}
base=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
dir=$(mktemp -d "$base/inspect-scale.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

ulimit -n 256
[ "$(ulimit -n)" = 256 ] || fail "ulimit -n 256 did not take"
# the bound matters only if all ranks at once could not fit
[ $((2 * n)) -gt 256 ] || fail "NRANKS $n is too small to test anything"
s=$dir/s
exec 3>&2 # the times below, whatever the commands' stderr goes to
timed() { # label command...: run it, print how long it took on fd 3
    local label=$1 a b
    shift
    a=$(date +%s%N)
    "$@"
    b=$(date +%s%N)
    echo "$label: $(((b - a) / 1000000)) ms" >&3
}
timed "import-legacy into $n ranks" \
    "$inspect" import-legacy --store "$s" --nranks "$n" "$data/L2"/metadata_checkpoint.* >"$dir/out"
grep -q "into $n rank(s)" "$dir/out" || fail "import: $(cat "$dir/out")"
[ "$(ls -d "$s"/rank-* | wc -l)" = "$n" ] || fail "not $n rank directories"

# stat: every rank read, the totals of the L2 files
timed stat "$inspect" stat "$s" --json >"$dir/stat.json" 2>"$dir/err" || fail "stat: $(cat "$dir/err")"
python3 - "$dir/stat.json" "$n" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert len(st["ranks"]) == n, len(st["ranks"])
assert all("error" not in r for r in st["ranks"]), [r for r in st["ranks"] if "error" in r][:3]
assert st["total"]["ranks"] == n
db = st["total"]["databases"]
assert db["obj"]["entries"] == 200 and db["kvtag"]["entries"] == 600, db
assert db["meta"]["entries"] == n
PY
# dump: one line per entry of every rank
timed dump "$inspect" dump "$s" >"$dir/dump" 2>"$dir/err" || fail "dump: $(cat "$dir/err")"
want=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["total"]["databases"]; print(sum(v["entries"] for v in d.values()))' "$dir/stat.json")
[ "$(wc -l <"$dir/dump")" = "$want" ] || fail "dump printed $(wc -l <"$dir/dump") lines, stat counts $want"
# get by name and by id (searches all ranks when the first guess misses)
name=$(grep -m1 '"db":"obj_name"' "$dir/dump" | python3 -c 'import json,sys; k=json.loads(sys.stdin.read())["key"]; print(k["name"], k["time_step"])')
set -- $name
timed get "$inspect" get "$s" --name "$1" --time-step "$2" >"$dir/get.json" || fail "get --name $1"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$dir/get.json")
"$inspect" get "$s" --id "$id" | grep_all "\"obj_name\": \"$1\"" || fail "get --id $id"
"$inspect" get "$s" --id 999999999999 2>"$dir/err" && fail "get of a missing id succeeded"
grep -q "no object with id 999999999999 in $n ranks" "$dir/err" || fail "get miss: $(cat "$dir/err")"
# find: every owner of a tag that each of the 200 objects carries
timed find "$inspect" find "$s" --tag name >"$dir/find" || fail "find"
[ "$(wc -l <"$dir/find")" = 200 ] || fail "find --tag name: $(wc -l <"$dir/find") hits, not 200"
# verify, quiet on stderr when it is not a terminal
timed verify "$inspect" verify "$s" >"$dir/verify" 2>"$dir/err" || fail "verify: $(cat "$dir/verify" "$dir/err")"
grep -q "verified 200 objects, 600 kvtags, 1 containers, 200 members, 0 regions in $n ranks: OK" \
    "$dir/verify" || fail "verify: $(cat "$dir/verify")"
[ ! -s "$dir/err" ] || fail "verify wrote on stderr without a terminal: $(head -c 300 "$dir/err")"
# copy (the plain one: --compact runs the same loop, but LMDB hands every
# page of it to a second thread, which on a busy machine waits ~5 ms per
# rank), and the copy verifies
timed copy "$inspect" copy "$s" "$dir/c" >"$dir/copy" 2>"$dir/err" || fail "copy: $(cat "$dir/err")"
[ "$(grep -c ': copied ' "$dir/copy")" = "$n" ] || fail "copy did not copy $n ranks"
[ ! -s "$dir/err" ] || fail "copy wrote on stderr without a terminal"
"$inspect" verify "$dir/c" | grep_all "in $n ranks: OK" || fail "the copy does not verify"

# progress on a terminal: a count, a bar and an ETA on stderr
if command -v script >/dev/null; then
    script -qec "'$inspect' verify '$s' >'$dir/tty-out'" "$dir/tty" >/dev/null
    tr '\r' '\n' <"$dir/tty" >"$dir/tty.lines"
    grep -aq "verify pass 1/2 (meta, ids): [0-9]*/$n ranks \[" "$dir/tty.lines" ||
        fail "no progress on a terminal: $(head -c 300 "$dir/tty.lines")"
    grep -aq "verify pass 2/2 (records): $n/$n ranks \[#*\] 100%" "$dir/tty.lines" ||
        fail "progress never reached 100%"
    grep -q "in $n ranks: OK" "$dir/tty-out" || fail "verify on a terminal"
else
    echo "note: no script(1): progress on a terminal not checked"
fi

# re-homing: $n old environments onto 2 ranks, read one at a time
timed "re-homing $n -> 2 ranks" "$mpiexec" "$npflag" 2 "$wl" restart --store "$dir/c" >"$dir/rehome" 2>"$dir/err" ||
    fail "re-homing: $(cat "$dir/rehome" "$dir/err")"
grep -q "re-homed .* records from $n to 2 ranks" "$dir/rehome" || fail "re-homing: $(cat "$dir/rehome")"
[ "$(ls -d "$dir/c"/rank-* | wc -l)" = 2 ] || fail "not 2 ranks after the re-homing"
"$inspect" verify "$dir/c" | grep_all "verified 200 objects, 600 kvtags, 1 containers, 200 members, 0 regions in 2 ranks: OK" ||
    fail "the re-homed store does not verify"
"$inspect" get "$dir/c" --id "$id" | grep_all "\"obj_name\": \"$1\"" || fail "get --id $id after re-homing"
# re-homing onto 1 rank (a singleton, no mpiexec: under mpiexec a rank's
# stderr is a pipe to the launcher, never a terminal), on a terminal: rank
# 0's progress line counts the old environments it read, up to all of them
if command -v script >/dev/null; then
    "$inspect" copy "$s" "$dir/c1" >/dev/null || fail "second copy"
    script -qec "'$wl' restart --store '$dir/c1' >'$dir/rehome1'" "$dir/tty1" >/dev/null ||
        fail "re-homing $n -> 1: $(cat "$dir/rehome1" "$dir/tty1")"
    grep -q "re-homed .* records from $n to 1 ranks" "$dir/rehome1" || fail "re-homing onto 1 rank"
    tr '\r' '\n' <"$dir/tty1" | grep -aq "restart: re-homing, rank 0 read: $n/$n old environments \[#*\] 100%" ||
        fail "no re-homing progress on a terminal: $(head -c 300 "$dir/tty1")"
    "$inspect" verify "$dir/c1" | grep_all "verified 200 objects, .* in 1 ranks: OK" ||
        fail "the store re-homed onto 1 rank does not verify"
fi
echo "OK: $n ranks under ulimit -n 256"
