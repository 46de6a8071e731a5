#!/usr/bin/env bash
# test_bulki_cli.sh - the bulki CLI from the outside.
#   usage: test_bulki_cli.sh BULKI_BINARY VECTOR_DIR
# For every vector NAME.bin (entity_* with --entity):
#   - decode exits 0, prints valid JSON (checked by python3 or jq when
#     available) with the content of NAME.json (checked by encoding it);
#   - encoding that output gives back exactly NAME.bin;
#   - decoding a copy truncated by one byte exits 1 with nothing on stdout
#     and exactly one stderr line naming the file and "byte N".
# Then: invalid JSON and invalid content exit 1 with a one-line message and
# leave no output file; bad usage exits 2; a missing file exits 1.
set -u

bulki=${1:?usage: test_bulki_cli.sh BULKI_BINARY VECTOR_DIR}
vectors=${2:?usage: test_bulki_cli.sh BULKI_BINARY VECTOR_DIR}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_bulki_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

failures=0
checks=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
ok() { checks=$((checks + 1)); }

# A strict JSON validator, if one is installed (json-c, which the tool
# itself uses, is lenient).
if command -v python3 >/dev/null 2>&1 && python3 -c 'import json' 2>/dev/null; then
    validate() { python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }
elif command -v jq >/dev/null 2>&1; then
    validate() { jq -e . "$1" >/dev/null 2>&1; }
else
    echo "note: neither python3 nor jq found; JSON validity is checked by re-encoding only"
    validate() { return 0; }
fi

# run OUT ERR CMD...: run, capture stdout/stderr, echo exit status
run() {
    local out=$1 err=$2
    shift 2
    "$@" >"$out" 2>"$err"
    echo $?
}

lines() { wc -l <"$1" | tr -d ' '; }

nvec=0
for bin in "$vectors"/*.bin; do
    [ -e "$bin" ] || break
    name=$(basename "$bin" .bin)
    nvec=$((nvec + 1))
    opt=()
    case $name in entity_*) opt=(--entity) ;; esac

    # decode -> JSON
    rc=$(run "$tmp/$name.json" "$tmp/$name.err" "$bulki" decode "${opt[@]}" "$bin")
    if [ "$rc" != 0 ]; then
        fail "$name: decode exited $rc: $(cat "$tmp/$name.err")"
        continue
    fi
    [ -s "$tmp/$name.err" ] && fail "$name: decode wrote to stderr: $(cat "$tmp/$name.err")"
    validate "$tmp/$name.json" || fail "$name: decode output is not valid JSON"
    ok

    # JSON -> the same bytes
    rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/$name.json" "$tmp/$name.bin")
    if [ "$rc" != 0 ]; then
        fail "$name: encode exited $rc: $(cat "$tmp/err")"
    elif ! cmp -s "$bin" "$tmp/$name.bin"; then
        fail "$name: decode + encode does not reproduce $name.bin"
    else
        ok
    fi
    # the checked-in JSON encodes to the same bytes too
    rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$vectors/$name.json" "$tmp/$name.2.bin")
    if [ "$rc" != 0 ] || ! cmp -s "$bin" "$tmp/$name.2.bin"; then
        fail "$name: encode of $name.json does not give $name.bin (exit $rc)"
    else
        ok
    fi

    # truncated by one byte -> exit 1, one stderr line with file and offset
    size=$(wc -c <"$bin" | tr -d ' ')
    cut="$tmp/$name.cut.bin"
    head -c $((size - 1)) "$bin" >"$cut"
    rc=$(run "$tmp/out" "$tmp/err" "$bulki" decode "${opt[@]}" "$cut")
    if [ "$rc" != 1 ]; then
        fail "$name: truncated decode exited $rc, expected 1"
    elif [ "$(lines "$tmp/err")" != 1 ]; then
        fail "$name: truncated decode wrote $(lines "$tmp/err") stderr lines: $(cat "$tmp/err")"
    elif ! grep -qF "$cut" "$tmp/err" || ! grep -qE "byte [0-9]+" "$tmp/err"; then
        fail "$name: truncated decode message lacks the file or byte offset: $(cat "$tmp/err")"
    elif [ -s "$tmp/out" ]; then
        fail "$name: truncated decode wrote to stdout"
    else
        ok
    fi
done
[ "$nvec" -ge 11 ] || fail "only $nvec vectors in $vectors"

# A known offset: empty.bin without its offset_2 ends at byte 5.
head -c 5 "$vectors/empty.bin" >"$tmp/empty5.bin"
rc=$(run "$tmp/out" "$tmp/err" "$bulki" decode "$tmp/empty5.bin")
if [ "$rc" = 1 ] && grep -qE "empty5\.bin: byte 5 of 5: .*BULKI_E_TRUNCATED" "$tmp/err"; then
    ok
else
    fail "truncated empty.bin: exit $rc, message: $(cat "$tmp/err")"
fi
# A trailing byte is reported at the old end.
{ cat "$vectors/empty.bin"; printf '\0'; } >"$tmp/trailing.bin"
rc=$(run "$tmp/out" "$tmp/err" "$bulki" decode "$tmp/trailing.bin")
if [ "$rc" = 1 ] && grep -qE "byte 6 of 7: .*BULKI_E_TRAILING" "$tmp/err"; then
    ok
else
    fail "trailing byte: exit $rc, message: $(cat "$tmp/err")"
fi

# encode: invalid JSON (cut short, and a syntax error)
nonblank() { grep -c . "$1"; }
printf '{"bulki": [ {"key": ' >"$tmp/broken.json"
printf '{"bulki": [ } ]}\n' >"$tmp/syntax.json"
for bad in broken syntax; do
    rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/$bad.json" "$tmp/$bad.bin")
    if [ "$rc" != 1 ]; then
        fail "invalid JSON ($bad): exit $rc, expected 1"
    elif [ "$(nonblank "$tmp/err")" != 1 ] || ! grep -qF "$tmp/$bad.json" "$tmp/err" ||
        ! grep -qi "invalid JSON" "$tmp/err"; then
        fail "invalid JSON ($bad): unclear message: $(cat "$tmp/err")"
    elif [ -e "$tmp/$bad.bin" ]; then
        fail "invalid JSON ($bad): an output file was written"
    else
        ok
    fi
    if [ "$rc" = 1 ] && [ "$(lines "$tmp/err")" != 1 ]; then
        fail "invalid JSON ($bad): message is $(lines "$tmp/err") lines, not 1: $(cat "$tmp/err")"
    fi
done

# encode: valid JSON, invalid content -> message names the JSON path
cat >"$tmp/badtype.json" <<'EOF'
{"bulki": [{"key": {"type": "PDC_STRING", "class": "item", "value": "k"},
            "value": {"type": "PDC_NOPE", "class": "item", "value": 1}}]}
EOF
rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/badtype.json" "$tmp/badtype.bin")
if [ "$rc" = 1 ] && [ "$(lines "$tmp/err")" = 1 ] &&
    grep -qF '$.bulki[0].value' "$tmp/err" && grep -qF 'PDC_NOPE' "$tmp/err" &&
    [ ! -e "$tmp/badtype.bin" ]; then
    ok
else
    fail "invalid content: exit $rc, message: $(cat "$tmp/err")"
fi
cat >"$tmp/strarray.json" <<'EOF'
{"type": "PDC_STRING", "class": "array", "value": ["a", "b"]}
EOF
rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/strarray.json" "$tmp/strarray.bin")
if [ "$rc" = 1 ] && grep -qi "string arrays" "$tmp/err" && [ ! -e "$tmp/strarray.bin" ]; then
    ok
else
    fail "string array: exit $rc, message: $(cat "$tmp/err")"
fi

# Deeply nested BULKIs through the CLI: JSON -> bytes -> JSON -> bytes.
# nested_json N [array]: a BULKI nested N levels deep ({"k": {"k": ... {}}});
# with "array", each level's value is a one-element PDC_BULKI array.
nested_json() {
    local n=$1 class=${2:-item} i open="" close="" lb="" rb=""
    if [ "$class" = array ]; then
        lb='[' rb=']'
    fi
    for ((i = 1; i < n; i++)); do
        open+='{"bulki": [{"key": {"type": "PDC_STRING", "class": "item", "value": "k"}, "value": {"type": "PDC_BULKI", "class": "'$class'", "value": '$lb
        close+=$rb'}}]}'
    done
    printf '%s{"bulki": []}%s\n' "$open" "$close"
}
for depth in 8 9 64; do
    nested_json "$depth" >"$tmp/deep$depth.json"
    rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/deep$depth.json" "$tmp/deep$depth.bin")
    if [ "$rc" != 0 ]; then
        fail "nesting $depth: encode exited $rc: $(cat "$tmp/err")"
        continue
    fi
    rc=$(run "$tmp/deep$depth.out.json" "$tmp/err" "$bulki" decode "$tmp/deep$depth.bin")
    rc2=$(run "$tmp/out" "$tmp/err2" "$bulki" encode "$tmp/deep$depth.out.json" "$tmp/deep$depth.2.bin")
    if [ "$rc" = 0 ] && [ "$rc2" = 0 ] && cmp -s "$tmp/deep$depth.bin" "$tmp/deep$depth.2.bin"; then
        ok
    else
        fail "nesting $depth: decode exit $rc, re-encode exit $rc2: $(cat "$tmp/err" "$tmp/err2")"
    fi
done
# The deepest JSON per BULKI level: one-element PDC_BULKI arrays, 64 deep.
nested_json 64 array >"$tmp/deeparr.json"
rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/deeparr.json" "$tmp/deeparr.bin")
rc2=$(run "$tmp/deeparr.out.json" "$tmp/err2" "$bulki" decode "$tmp/deeparr.bin")
rc3=$(run "$tmp/out" "$tmp/err3" "$bulki" encode "$tmp/deeparr.out.json" "$tmp/deeparr.2.bin")
if [ "$rc" = 0 ] && [ "$rc2" = 0 ] && [ "$rc3" = 0 ] && cmp -s "$tmp/deeparr.bin" "$tmp/deeparr.2.bin"; then
    ok
else
    fail "64 nested BULKI arrays: encode $rc, decode $rc2, re-encode $rc3: $(cat "$tmp/err" "$tmp/err2" "$tmp/err3")"
fi

# One level past BULKI_MAX_DEPTH is refused with a message, exit 1.
nested_json 65 >"$tmp/deep65.json"
rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/deep65.json" "$tmp/deep65.bin")
if [ "$rc" = 1 ] && [ -s "$tmp/err" ] && [ ! -e "$tmp/deep65.bin" ]; then
    ok
else
    fail "nesting 65: exit $rc, expected 1: $(cat "$tmp/err")"
fi

# missing input file: exit 1, one line
rc=$(run "$tmp/out" "$tmp/err" "$bulki" decode "$tmp/does-not-exist.bin")
if [ "$rc" = 1 ] && [ "$(lines "$tmp/err")" = 1 ] && grep -qF "does-not-exist.bin" "$tmp/err"; then
    ok
else
    fail "missing file: exit $rc, message: $(cat "$tmp/err")"
fi

# bad usage: exit 2 with the usage text on stderr, nothing on stdout
usage_case() {
    local rc
    rc=$(run "$tmp/out" "$tmp/err" "$bulki" "$@")
    if [ "$rc" != 2 ]; then
        fail "usage '$*': exit $rc, expected 2"
    elif ! grep -q "usage:" "$tmp/err" || [ -s "$tmp/out" ]; then
        fail "usage '$*': no usage text on stderr, or output on stdout"
    else
        ok
    fi
}
usage_case
usage_case frobnicate
usage_case decode
usage_case decode --entity
usage_case decode --bogus "$vectors/empty.bin"
usage_case decode "$vectors/empty.bin" extra
usage_case encode "$vectors/empty.json"
usage_case encode "$vectors/empty.json" "$tmp/x.bin" extra

# Non-finite floats have no JSON literal: every NaN keeps its exact bits
# through decode -> JSON -> encode (float and double, signed, payloads).
printf '\x22\x2d\x04\x00\x00\xc0\x7f\x01\x00\xc0\xff\x00\x00\x80\x7f\x00\x00\x80\xff' >"$tmp/nanf.bin"
rc=$(run "$tmp/nanf.json" "$tmp/err" "$bulki" decode --entity "$tmp/nanf.bin")
rc2=$(run "$tmp/out" "$tmp/err2" "$bulki" encode "$tmp/nanf.json" "$tmp/nanf2.bin")
if [ "$rc" = 0 ] && [ "$rc2" = 0 ] && cmp -s "$tmp/nanf.bin" "$tmp/nanf2.bin" &&
    grep -q '"NaN"' "$tmp/nanf.json" && grep -q '"NaN:0xffc00001"' "$tmp/nanf.json" &&
    grep -q '"-Infinity"' "$tmp/nanf.json"; then
    ok
else
    fail "NaN/Infinity bits: decode $rc, encode $rc2: $(cat "$tmp/nanf.json" "$tmp/err" "$tmp/err2")"
fi

# encode refuses every integer no BULKI type can hold (json-c alone would
# clamp it to the nearest 64-bit bound), and every out-of-range value of
# its type, naming the element's JSON path; the bounds themselves encode.
range_case() { # JSON PATH WHAT
    printf '%s\n' "$1" >"$tmp/range.json"
    rm -f "$tmp/range.bin"
    rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/range.json" "$tmp/range.bin")
    if [ "$rc" != 1 ] || [ -e "$tmp/range.bin" ]; then
        fail "out of range ($1): exit $rc, expected 1 and no output"
    elif [ "$(nonblank "$tmp/err")" != 1 ] || ! grep -qF "range.json: $2: " "$tmp/err" ||
        ! grep -qF -- "$3" "$tmp/err"; then
        fail "out of range ($1): message lacks path $2 or \"$3\": $(cat "$tmp/err")"
    else
        ok
    fi
}
ent() { printf '{"type":"%s","class":"%s","value":%s}' "$1" "$2" "$3"; }
range_case "$(ent PDC_UINT64 item 18446744073709551616)" '$.value' "18446744073709551616 is out of range"
range_case "$(ent PDC_SIZE_T array '[1,99999999999999999999999]')" '$.value[1]' "out of range"
range_case "$(ent PDC_INT64 item -9223372036854775809)" '$.value' "-9223372036854775809 is out of range"
range_case "$(ent PDC_INT64 item 9223372036854775808)" '$.value' "out of range for PDC_INT64"
range_case "$(ent PDC_UINT64 item -1)" '$.value' "out of range for PDC_UINT64"
range_case "$(ent PDC_INT8 array '[0,128]')" '$.value[1]' "out of range for PDC_INT8"
range_case "$(ent PDC_DOUBLE item 100000000000000000000)" '$.value' "is out of range"
# json-c also takes comments: they are not elements
range_case "$(ent PDC_UINT64 array '[1, /* c, d */ 18446744073709551616 // e
]')" '$.value[1]' "18446744073709551616 is out of range"
range_case "{\"bulki\":[{\"key\":$(ent PDC_STRING item '"k"'),\"value\":$(ent PDC_INT64 array '[1,-18446744073709551616]')}]}" \
    '$.bulki[0].value.value[1]' "-18446744073709551616 is out of range"
printf '[%s,%s,%s]' "$(ent PDC_UINT64 item 18446744073709551615)" "$(ent PDC_SIZE_T item 18446744073709551615)" \
    "$(ent PDC_INT64 item -9223372036854775808)" >"$tmp/bounds.json"
printf '{"type":"PDC_BULKI_ENT","class":"array","value":%s}\n' "$(cat "$tmp/bounds.json")" >"$tmp/bounds.json"
rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/bounds.json" "$tmp/bounds.bin")
rc2=$(run "$tmp/bounds.out" "$tmp/err2" "$bulki" decode --entity "$tmp/bounds.bin")
if [ "$rc" = 0 ] && [ "$rc2" = 0 ] && grep -c 18446744073709551615 "$tmp/bounds.out" | grep -qx 2 &&
    grep -q -- -9223372036854775808 "$tmp/bounds.out"; then
    ok
else
    fail "64-bit bounds: encode $rc, decode $rc2: $(cat "$tmp/err" "$tmp/err2" "$tmp/bounds.out")"
fi

# Strings that are not UTF-8 decode as {"hex": ...} (strict JSON, which
# python3 reads as UTF-8) and encode back to the same bytes; valid UTF-8
# stays a string.
strict() { python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$1" 2>/dev/null; }
printf '{"bulki":[{"key":%s,"value":%s},{"key":%s,"value":%s}]}\n' \
    "$(ent PDC_STRING item '{"hex":"6f62ff"}')" "$(ent PDC_STRING item '{"hex":"c0af"}')" \
    "$(ent PDC_STRING item '"caf\u00e9"')" "$(ent PDC_STRING item '{"hex":"e282ac"}')" >"$tmp/utf.json"
rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/utf.json" "$tmp/utf.bin")
rc2=$(run "$tmp/utf.out" "$tmp/err2" "$bulki" decode "$tmp/utf.bin")
rc3=$(run "$tmp/out" "$tmp/err3" "$bulki" encode "$tmp/utf.out" "$tmp/utf2.bin")
if [ "$rc" = 0 ] && [ "$rc2" = 0 ] && [ "$rc3" = 0 ] && cmp -s "$tmp/utf.bin" "$tmp/utf2.bin" &&
    { ! command -v python3 >/dev/null || strict "$tmp/utf.out"; } &&
    grep -q '"hex": "6f62ff"' "$tmp/utf.out" && grep -q '"hex": "c0af"' "$tmp/utf.out" &&
    grep -q '"value": "café"' "$tmp/utf.out" && grep -q '"value": "€"' "$tmp/utf.out"; then
    ok
else
    fail "non-UTF-8 strings: encode $rc, decode $rc2, re-encode $rc3: $(cat "$tmp/err" "$tmp/err2" "$tmp/err3" "$tmp/utf.out")"
fi
printf '%s\n' "$(ent PDC_STRING item '{"hex":"6g"}')" >"$tmp/badhex.json"
rc=$(run "$tmp/out" "$tmp/err" "$bulki" encode "$tmp/badhex.json" "$tmp/badhex.bin")
{ [ "$rc" = 1 ] && grep -q 'badhex.json: \$: hex: "6g"' "$tmp/err"; } && ok ||
    fail "bad hex: exit $rc: $(cat "$tmp/err")"

# -h and -V succeed
rc=$(run "$tmp/out" "$tmp/err" "$bulki" -h)
{ [ "$rc" = 0 ] && grep -q "usage:" "$tmp/out"; } && ok || fail "-h: exit $rc"
rc=$(run "$tmp/out" "$tmp/err" "$bulki" -V)
{ [ "$rc" = 0 ] && [ -s "$tmp/out" ]; } && ok || fail "-V: exit $rc"

if [ "$failures" -ne 0 ]; then
    echo "$failures of $((checks + failures)) CLI checks failed"
    exit 1
fi
echo "all $checks CLI checks passed ($nvec vectors)"
