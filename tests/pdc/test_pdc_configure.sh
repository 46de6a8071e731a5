#!/usr/bin/env bash
# PDC configured with -DPDC_ENABLE_CKPT=ON and a build option the glue does
# not support stops at configure, with a message naming it:
# PDC_ENABLE_MULTITHREAD (the glue takes no PDC mutex), PDC_ENABLE_ROCKSDB
# and PDC_ENABLE_SQLITE3 (kvtag back-ends the glue does not hook).
# usage: test_pdc_configure.sh PDC_SOURCE_TREE PREFIX OPTION...
set -euo pipefail
src=$1 prefix=$2
shift 2
[ -f "$src/CMakeLists.txt" ] || { echo "FAIL: no patched PDC source tree at $src"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pdc-configure.XXXXXX")
trap 'rm -rf "$work"' EXIT
for opt in "$@"; do
    st=0
    cmake -S "$src" -B "$work/$opt" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER=mpicc \
        -DBUILD_SHARED_LIBS=ON -DPDC_ENABLE_MPI=ON -DPDC_SERVER_CACHE=OFF \
        -DPDC_ENABLE_CKPT=ON -D"$opt"=ON >"$work/$opt.log" 2>&1 || st=$?
    if [ "$st" -eq 0 ]; then
        echo "FAIL: PDC configured with $opt and pdc-ckpt"
        exit 1
    fi
    if ! grep -q "PDC_ENABLE_CKPT does not support" "$work/$opt.log"; then
        echo "FAIL: configure with $opt failed without pdc-ckpt's message:"
        grep -i "error" "$work/$opt.log" | head -10
        exit 1
    fi
    echo "ok: $opt refused at configure"
done
echo "PASS: PDC with pdc-ckpt refuses $* at configure"
