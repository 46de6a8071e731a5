#!/usr/bin/env bash
# Stores of formats 1 and 2 (tests/data/store_v1, store_v2: no record
# checksums) under ckpt-inspect: verify passes and says they have no
# checksums (text and --json); copy writes them out in format 5, with
# checksums and record keys (obj_keys, cont_keys: one per object and
# container), which verifies without that note, holds the same records
# (dump, values without checksums) and says format 5 (stat).
# usage: test_inspect_old_format.sh INSPECT DATA_DIR
set -euo pipefail
insp=$1 data=$2
# shellcheck source=inspect_lib.sh
. "$(dirname "$0")/inspect_lib.sh"
for v in 1 2; do
    cp -a "$data/store_v$v/root" "$dir/v$v"
    "$insp" verify "$dir/v$v" >"$dir/out" || fail "v$v: verify: $(cat "$dir/out")"
    grep -q "^note: rank 0: format $v: its records carry no checksums" "$dir/out" \
        || fail "v$v: no note on checksums: $(cat "$dir/out")"
    "$insp" verify --json "$dir/v$v" >"$dir/out.json" || fail "v$v: verify --json"
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and r["no_checksums"] == [0] and r["damaged_records"] == 0, r
' "$dir/out.json"
    "$insp" stat "$dir/v$v" >"$dir/out"
    grep -q "^rank-0: format $v (no checksums)" "$dir/out" || fail "v$v: stat: $(cat "$dir/out")"
    "$insp" copy "$dir/v$v" "$dir/c$v" >"$dir/out" || fail "v$v: copy"
    grep -q "compacted, converted from format $v to format 5)$" "$dir/out" \
        || fail "v$v: copy said: $(cat "$dir/out")"
    "$insp" verify "$dir/c$v" >"$dir/out" || fail "v$v copy: verify: $(cat "$dir/out")"
    ! grep -q "^note:" "$dir/out" || fail "v$v copy: $(cat "$dir/out")"
    "$insp" stat "$dir/c$v" >"$dir/out"
    grep -q "^rank-0: format 5 (checksummed)" "$dir/out" || fail "v$v copy: stat: $(cat "$dir/out")"
    # the same records, database by database (meta differs by its version)
    for db in obj obj_name kvtag kvtag_name cont cont_name cont_obj region; do
        "$insp" dump "$dir/v$v" --db "$db" >"$dir/a"
        "$insp" dump "$dir/c$v" --db "$db" >"$dir/b"
        cmp -s "$dir/a" "$dir/b" || fail "v$v copy: $db differs"
        [ -s "$dir/a" ] || [ "$db" = region ] || [ "$db" = cont ] || [ "$db" = cont_name ] \
            || [ "$db" = cont_obj ] || fail "v$v: $db is empty"
    done
    for db in obj cont; do
        [ "$("$insp" dump "$dir/c$v" --db "${db}_keys" | wc -l)" = \
          "$("$insp" dump "$dir/v$v" --db "$db" | wc -l)" ] || fail "v$v copy: ${db}_keys"
    done
done
echo "old formats: verified, noted, copied into format 5"
