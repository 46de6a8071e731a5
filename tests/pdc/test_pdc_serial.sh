#!/usr/bin/env bash
# PDC's own serial test suite (`ctest -L serial` in PDC's build tree: each
# test starts ./pdc_server.exe, runs one PDC test program, then
# ./close_server) against the server built there, which is the patched one
# with the pdc-ckpt store on by default. All EXPECTED tests must pass.
# PDC's runner starts servers without waiting for them and has no timeout of
# its own: ctest's --timeout bounds each test, and the whole run is in its
# own process group, which is killed (by its id) when it ends, so no server
# outlives it.
# usage: test_pdc_serial.sh PDC_BUILD_DIR PREFIX EXPECTED
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"

build=$1 prefix=$2 expected=$3
[ -f "$build/CTestTestfile.cmake" ] || { echo "FAIL: no PDC build tree at $build"; exit 1; }
[ -x "$build/bin/pdc_server.exe" ] || { echo "FAIL: no $build/bin/pdc_server.exe"; exit 1; }
# PDC's runner uses ./pdc_tmp of bin/ and removes it before each test
unset PDC_TMPDIR PDC_CKPT_DIR PDC_CKPT PDC_CKPT_RESTART
export HG_TRANSPORT=ofi+tcp UCX_TLS=self,sm
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pdc_test_preload
out=$(mktemp "${TMPDIR:-/tmp}/pdc-serial.XXXXXX")
PGID=
cleanup() {
    local rc=$?
    [ -n "$PGID" ] && kill -KILL -- "-$PGID" 2>/dev/null || true
    rm -f "$out"
    rm -rf "$build/bin/pdc_tmp" "$build/bin/pdc_data"
    exit "$rc"
}
trap cleanup EXIT
st=0
setsid ctest --test-dir "$build" -L serial --timeout 300 >"$out" 2>&1 &
PGID=$!
wait "$PGID" || st=$?
kill -KILL -- "-$PGID" 2>/dev/null || true # servers a failed test left behind
PGID=
grep -E "tests passed|\*\*\*|Failed|Timeout" "$out" || true
if ! grep -q "100% tests passed, 0 tests failed out of $expected\$" "$out"; then
    echo "FAIL: PDC's serial suite (ctest status $st): expected $expected of $expected to pass"
    tail -n 40 "$out"
    exit 1
fi
echo "PASS: PDC's serial suite, $expected/$expected, on the patched server"
