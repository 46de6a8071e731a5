#!/usr/bin/env bash
# PDC built from the same series with -DPDC_ENABLE_CKPT=OFF (pdc-ckpt not
# used, not even found) passes PDC's own serial suite: the series leaves
# PDC's behaviour alone when the option is off. The OFF build goes into
# OUT/pdc-off (tools/pdc/build-pdc.sh --ckpt off, Mercury from the ON
# build's prefix) and is redone only when the series or the script changed;
# then test_pdc_serial.sh runs PDC's `ctest -L serial` in its build tree.
# usage: test_pdc_off.sh BUILD_PDC_SH SOURCES MERCURY_PREFIX OUT EXPECTED PATCH...
set -euo pipefail
build_pdc=$1 sources=$2 mercury=$3 out=$4 expected=$5
shift 5
prefix=$out/pdc-off work=$out/pdc-off-work
stamp=$prefix/pdc-off.stamp
sum=$(cat "$build_pdc" "$@" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ] || [ ! -x "$work/pdc-build/bin/pdc_server.exe" ]; then
    rm -rf "$prefix" "$work"
    if ! bash "$build_pdc" --sources "$sources" --prefix "$prefix" --workdir "$work" \
        --ckpt off --mercury "$mercury" --jobs 2 >"$out/pdc-off-build.log" 2>&1; then
        echo "FAIL: PDC with PDC_ENABLE_CKPT=OFF did not build:"
        tail -n 30 "$out/pdc-off-build.log"
        exit 1
    fi
    echo "$sum" >"$stamp"
fi
# an OFF build must not link pdc-ckpt at all
if ldd "$work/pdc-build/bin/pdc_server.exe" | grep -q "libckpt"; then
    echo "FAIL: the PDC_ENABLE_CKPT=OFF server links pdc-ckpt:"
    ldd "$work/pdc-build/bin/pdc_server.exe" | grep "libckpt"
    exit 1
fi
export LD_LIBRARY_PATH="$mercury/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec bash "$(dirname "$0")/test_pdc_serial.sh" "$work/pdc-build" "$prefix" "$expected"
