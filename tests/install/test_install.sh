#!/usr/bin/env bash
# Install tests (tests/install/CMakeLists.txt). Modes:
#   install BUILD PREFIX          fresh `cmake --install BUILD --prefix PREFIX`
#   consumer-cmake SRC PREFIX DIR build SRC (tests/install/consumer) with
#                                 find_package(pdc-ckpt), run its programs
#   consumer-pkgconfig SRC PREFIX DIR   the same with plain cc and pkg-config
#   programs PREFIX               installed programs run from PREFIX without
#                                 LD_LIBRARY_PATH; installed libraries export
#                                 only ckpt_*/bulki_*
#   exports LIB.so...             every exported symbol is ckpt_* or bulki_*
#   library-only SRC BUILD PREFIX configure SRC with -DPDC_CKPT_BUILD_TESTS=OFF
#                                 -DPDC_CKPT_BUILD_BENCH=OFF into BUILD (it must
#                                 not look for SQLite, RocksDB or cmocka), build,
#                                 install into PREFIX, check what is there and
#                                 run the installed programs
# Environment: CC, CONSUMER_CFLAGS (sanitizer flags), MPIEXEC.
set -euo pipefail
. "$(dirname "$0")/../grep_all.sh"
mode=$1
shift
unset LD_LIBRARY_PATH
CC=${CC:-cc}
CFLAGS=${CONSUMER_CFLAGS:-}
MPIEXEC=${MPIEXEC:-mpiexec}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# libdir of an installed prefix (lib or lib/<multiarch>)
libdir_of() {
    local pc
    pc=$(find "$1" -name pdc-ckpt.pc -print -quit)
    [ -n "$pc" ] || fail "no pdc-ckpt.pc under $1"
    dirname "$(dirname "$pc")"
}

# check_exports LIB...: fails on an exported (defined, global, dynamic)
# symbol outside ckpt_*/bulki_*, or on a library exporting nothing of ours
check_exports() {
    local lib bad n
    for lib in "$@"; do
        [ -f "$lib" ] || fail "no library $lib"
        # nm -D --defined-only: the dynamic symbol table's definitions
        n=$(nm -D --defined-only "$lib" | awk '{print $NF}' | grep -cE '^(ckpt|bulki)_' || true)
        bad=$(nm -D --defined-only "$lib" | awk '{print $NF}' | grep -vE '^(ckpt|bulki)_' || true)
        [ "$n" -gt 0 ] || fail "$lib exports no ckpt_*/bulki_* symbol"
        [ -z "$bad" ] || fail "$lib exports symbols outside ckpt_*/bulki_*: $(echo $bad)"
        readelf -d "$lib" | grep_all "SONAME" || fail "$lib has no SONAME"
        echo "ok: $lib exports $n symbols, all ckpt_*/bulki_*; $(readelf -d "$lib" | grep SONAME | sed 's/.*\[\(.*\)\]/SONAME \1/')"
    done
}

# check_no_bench_deps PREFIX: no installed program or shared library loads
# SQLite, RocksDB or cmocka (ldd: also through what they load)
check_no_bench_deps() {
    local f n=0
    while IFS= read -r f; do
        readelf -h "$f" >/dev/null 2>&1 || continue # not ELF (a script)
        n=$((n + 1))
        ! ldd "$f" | grep_all -iE 'sqlite|rocksdb|cmocka' ||
            fail "$f loads $(ldd "$f" | grep -iE 'sqlite|rocksdb|cmocka' | awk '{print $1}' | tr '\n' ' ')"
    done < <(find "$1" -type f \( -path '*/bin/*' -o -name '*.so*' \))
    [ "$n" -ge 7 ] || fail "only $n programs and shared libraries under $1"
    echo "ok: none of the $n installed programs and shared libraries loads SQLite, RocksDB or cmocka"
}

# check_installed PREFIX: the headers, programs, libraries and packages
check_installed() {
    local prefix=$1 libdir f l
    libdir=$(libdir_of "$prefix")
    for f in include/pdc-ckpt/ckpt_hooks.h include/pdc-ckpt/ckpt_hooks_mpi.h \
             include/pdc-ckpt/ckpt_store.h include/pdc-ckpt/bulki.h \
             include/pdc-ckpt/ckpt_export.h bin/bulki bin/ckpt-inspect bin/ckpt-workload; do
        [ -e "$prefix/$f" ] || fail "not installed: $f"
    done
    for l in bulki ckpt_store ckpt_hooks ckpt_hooks_mpi; do
        [ -f "$libdir/lib$l.a" ] || fail "not installed: lib$l.a"
        [ -L "$libdir/lib$l.so" ] || fail "not installed: lib$l.so (symlink)"
    done
    [ -f "$libdir/cmake/pdc-ckpt/pdc-ckpt-config.cmake" ] || fail "no CMake package"
    [ -f "$libdir/cmake/pdc-ckpt/pdc-ckpt-config-version.cmake" ] || fail "no version file"
    [ -f "$libdir/pkgconfig/pdc-ckpt-mpi.pc" ] || fail "no pdc-ckpt-mpi.pc"
    # the benchmarks stay in the build tree
    for f in ckpt-bench ckpt-bench-workload store-bench bulki-bench; do
        [ ! -e "$prefix/bin/$f" ] || fail "a benchmark was installed: bin/$f"
    done
    # nothing of the model server or the benchmarks went into the libraries
    for l in "$libdir"/lib*.a; do
        ! nm "$l" 2>/dev/null | grep_all -iE ' [TDBR] (model_|bench_)' ||
            fail "$l carries model server or benchmark code"
    done
    check_no_bench_deps "$prefix"
}

# check_programs PREFIX: the installed programs run from PREFIX without
# LD_LIBRARY_PATH
check_programs() {
    local prefix=$1 tmp
    tmp=$(mktemp -d)
    "$prefix/bin/ckpt-inspect" --version | grep_all "^ckpt-inspect " || fail "ckpt-inspect --version"
    "$prefix/bin/bulki" -V || fail "bulki -V"
    "$MPIEXEC" -n 1 "$prefix/bin/ckpt-workload" write --store "$tmp/s" --objects 50 \
        --tags-per-object 2 >/dev/null || fail "ckpt-workload write"
    "$prefix/bin/ckpt-inspect" verify "$tmp/s" >/dev/null || fail "ckpt-inspect verify"
    "$MPIEXEC" -n 1 "$prefix/bin/ckpt-workload" verify --store "$tmp/s" --objects 50 \
        --tags-per-object 2 >/dev/null || fail "ckpt-workload verify"
    rm -rf "$tmp"
    check_exports "$(libdir_of "$prefix")"/lib*.so
}

# check_needs EXE PREFIX LIBNAME: EXE loads LIBNAME from PREFIX
check_needs() {
    local exe=$1 prefix=$2 lib=$3 where
    where=$(ldd "$exe" | awk -v l="$lib" '$1 ~ "^"l"\\.so" {print $3}')
    [ -n "$where" ] || fail "$exe does not load $lib.so: $(ldd "$exe")"
    case "$(realpath "$where")" in
    "$(realpath "$prefix")"/*) ;;
    *) fail "$exe loads $lib from $where, not from $prefix" ;;
    esac
}

run_consumers() {
    local dir=$1 prefix=$2
    rm -rf "$dir/store" "$dir/store-mpi"
    "$dir/consumer" "$dir/store" || fail "consumer"
    check_needs "$dir/consumer" "$prefix" libckpt_hooks
    "$MPIEXEC" -n 1 "$dir/consumer-mpi" "$dir/store-mpi" || fail "consumer-mpi"
    check_needs "$dir/consumer-mpi" "$prefix" libckpt_hooks_mpi
}

case "$mode" in
install)
    build=$1 prefix=$2
    rm -rf "$prefix"
    cmake --install "$build" --prefix "$prefix" >/dev/null
    check_installed "$prefix"
    echo "installed into $prefix"
    ;;
consumer-cmake)
    src=$1 prefix=$2 dir=$3
    rm -rf "$dir"
    cmake -S "$src" -B "$dir" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" \
          -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$dir" -j2 >/dev/null || cmake --build "$dir" -j1
    run_consumers "$dir" "$prefix"
    [ -f "$dir/libconsumer_server.so" ] || fail "shared consumer library not built"
    [ -f "$dir/libconsumer_server_static.so" ] || fail "shared consumer on the static libraries not built"
    # a shared consumer linked against the static libraries carries them and
    # needs no libckpt_*.so
    ! ldd "$dir/libconsumer_server_static.so" | grep_all libckpt_ ||
        fail "libconsumer_server_static.so loads libckpt_*"
    echo "ok: find_package(pdc-ckpt) consumer"
    ;;
consumer-pkgconfig)
    src=$1 prefix=$2 dir=$3
    rm -rf "$dir"
    mkdir -p "$dir"
    libdir=$(libdir_of "$prefix")
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    pkg-config --exists --print-errors pdc-ckpt pdc-ckpt-mpi
    rpath="-Wl,-rpath,$(pkg-config --variable=libdir pdc-ckpt)"
    # shellcheck disable=SC2046,SC2086
    $CC $CFLAGS -o "$dir/consumer" "$src/consumer.c" \
        $(pkg-config --cflags --libs pdc-ckpt) "$rpath"
    # shellcheck disable=SC2046,SC2086
    $CC $CFLAGS -DCONSUMER_MPI -o "$dir/consumer-mpi" "$src/consumer.c" \
        $(pkg-config --cflags --libs pdc-ckpt-mpi) "$rpath"
    # the static libraries, position-independent, into a shared library
    # shellcheck disable=SC2046,SC2086
    $CC $CFLAGS -fPIC -shared -Dmain=consumer_server_main -o "$dir/libconsumer_server.so" \
        "$src/consumer.c" $(pkg-config --cflags pdc-ckpt) "$libdir/libckpt_hooks.a" \
        "$libdir/libckpt_store.a" "$libdir/libbulki.a" \
        $(pkg-config --static --libs-only-l --libs-only-other pdc-ckpt | sed 's/-lckpt_[a-z_]*//g; s/-lbulki//')
    run_consumers "$dir" "$prefix"
    echo "ok: pkg-config consumer"
    ;;
programs)
    check_programs "$1"
    echo "ok: installed programs"
    ;;
library-only)
    src=$1 build=$2 prefix=$3
    rm -rf "$build" "$prefix"
    cmake -S "$src" -B "$build" -DPDC_CKPT_BUILD_TESTS=OFF -DPDC_CKPT_BUILD_BENCH=OFF \
          -DPDC_CKPT_PDC_SOURCES= -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          >"$build.log" 2>&1 || { cat "$build.log"; fail "configure"; }
    # the configure did not look for them: nothing of theirs in the cache
    ! grep -qiE 'sqlite|rocksdb|cmocka' "$build/CMakeCache.txt" ||
        fail "the library-only configure looked for SQLite, RocksDB or cmocka: $(grep -iE 'sqlite|rocksdb|cmocka' "$build/CMakeCache.txt" | head -3)"
    cmake --build "$build" -j2 >>"$build.log" 2>&1 || { tail -40 "$build.log"; fail "build"; }
    cmake --install "$build" --prefix "$prefix" >/dev/null
    check_installed "$prefix"
    check_programs "$prefix"
    echo "ok: library-only build and install"
    ;;
exports)
    check_exports "$@"
    ;;
*)
    fail "unknown mode $mode"
    ;;
esac
