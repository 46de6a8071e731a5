#!/usr/bin/env bash
# build-pdc.sh - build PDC's real metadata server with pdc-ckpt inside it.
#
# From the tarballs in --sources (laid out as in the shared thirdparty/
# folder: mercury-2.3.1.tar.gz, pdc-2e5de75a.tar.gz) it builds and installs
# into --prefix, in this order:
#   1. Mercury 2.3.1 (skipped when the prefix already holds the Mercury
#      built from the same tarball: a stamp file records its sha256);
#   2. this project (pdc-ckpt), position-independent, with cmake --install;
#   3. PDC 2e5de75a patched with server_hooks/pdc/pdc-2e5de75a.patch, which
#      compiles server_hooks/pdc/pdc_ckpt_server.c into PDC's server library
#      and finds pdc-ckpt with find_package(pdc-ckpt CONFIG).
# Result: PREFIX/bin/{pdc_server.exe,close_server}, PREFIX/include/pdc.h,
# PREFIX/lib/{libpdc.so,libmercury*.so,...}; the installed programs carry an
# RPATH to PREFIX/lib. PDC's build tree (its test programs and its own
# ctest, e.g. `ctest -L serial`) stays in the work directory.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: tools/pdc/build-pdc.sh --sources DIR --prefix PREFIX [--jobs N] [--workdir W]

  --sources DIR    folder holding mercury-2.3.1.tar.gz and pdc-2e5de75a.tar.gz
                   (as the shared thirdparty/ folder lays them out)
  --prefix PREFIX  install prefix for Mercury, pdc-ckpt and the patched PDC
  --jobs N         parallel build jobs (default 2)
  --workdir W      where the sources are unpacked and built
                   (default PREFIX-work; PDC's build tree is W/pdc-build)

Mercury is rebuilt only when PREFIX does not already hold Mercury built from
the same tarball (PREFIX/share/pdc-ckpt/mercury.stamp records its sha256), so
a second run only rebuilds pdc-ckpt and PDC.

Needs (Debian 12): build-essential cmake pkg-config mpich libmpich-dev
libfabric-dev uuid-dev liblmdb-dev libcmocka-dev libjson-c-dev.
EOF
}

die() {
    echo "build-pdc.sh: $*" >&2
    exit 1
}

SOURCES= PREFIX= JOBS=2 WORK=
while [ $# -gt 0 ]; do
    case "$1" in
        --sources) [ $# -ge 2 ] || die "--sources needs a directory"; SOURCES=$2; shift 2 ;;
        --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; PREFIX=$2; shift 2 ;;
        --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; JOBS=$2; shift 2 ;;
        --workdir) [ $# -ge 2 ] || die "--workdir needs a directory"; WORK=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
[ -n "$SOURCES" ] || { usage >&2; die "--sources is required"; }
[ -n "$PREFIX" ] || { usage >&2; die "--prefix is required"; }
case "$JOBS" in '' | *[!0-9]* | 0) die "--jobs must be a positive number, not '$JOBS'" ;; esac

MERCURY_TGZ=mercury-2.3.1.tar.gz
PDC_TGZ=pdc-2e5de75a.tar.gz
[ -d "$SOURCES" ] || die "sources directory '$SOURCES' does not exist"
for f in "$MERCURY_TGZ" "$PDC_TGZ"; do
    [ -f "$SOURCES/$f" ] || die "missing source tarball '$SOURCES/$f'"
done

# Tools and packages, each named with the Debian package that brings it.
need_cmd() {
    command -v "$1" > /dev/null 2>&1 || die "'$1' not found: install the Debian package $2"
}
need_cmd cmake cmake
need_cmd pkg-config pkg-config
need_cmd cc build-essential
need_cmd make build-essential
need_cmd patch patch
need_cmd tar tar
need_cmd sha256sum coreutils
need_cmd mpicc libmpich-dev
need_pc() {
    pkg-config --exists "$1" || die "pkg-config cannot find '$1': install the Debian package $2"
}
need_pc libfabric libfabric-dev
need_pc lmdb liblmdb-dev
need_pc cmocka libcmocka-dev
need_pc json-c libjson-c-dev
[ -f /usr/include/uuid/uuid.h ] || die "uuid/uuid.h not found: install the Debian package uuid-dev"

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PATCH=$REPO/server_hooks/pdc/pdc-2e5de75a.patch
GLUE=$REPO/server_hooks/pdc
[ -f "$PATCH" ] || die "missing $PATCH"
[ -f "$GLUE/pdc_ckpt_server.c" ] || die "missing $GLUE/pdc_ckpt_server.c"

mkdir -p "$PREFIX" || die "cannot create prefix '$PREFIX'"
PREFIX=$(cd "$PREFIX" && pwd)
SOURCES=$(cd "$SOURCES" && pwd)
[ -n "$WORK" ] || WORK=$PREFIX-work
mkdir -p "$WORK" || die "cannot create work directory '$WORK'"
WORK=$(cd "$WORK" && pwd)
STAMPS=$PREFIX/share/pdc-ckpt
mkdir -p "$STAMPS"

step() { echo "== build-pdc.sh: $* ($(date +%T))"; }
# Run a build step with its output in a log; on failure show the log's tail.
run_logged() {
    local log=$1
    shift
    if ! "$@" > "$log" 2>&1; then
        tail -n 40 "$log" >&2
        die "failed: $* (full log: $log)"
    fi
}

# ---- 1. Mercury ----
MERCURY_SUM=$(sha256sum "$SOURCES/$MERCURY_TGZ" | cut -d' ' -f1)
if [ -f "$STAMPS/mercury.stamp" ] && [ "$(cat "$STAMPS/mercury.stamp")" = "$MERCURY_SUM" ] &&
    [ -f "$PREFIX/lib/libmercury.so" ]; then
    step "Mercury 2.3.1 already in $PREFIX (same tarball): not rebuilt"
else
    step "Mercury 2.3.1"
    rm -rf "$WORK/mercury-2.3.1" "$WORK/mercury-build"
    tar xzf "$SOURCES/$MERCURY_TGZ" -C "$WORK" || die "cannot unpack $SOURCES/$MERCURY_TGZ"
    run_logged "$WORK/mercury-configure.log" cmake -S "$WORK/mercury-2.3.1" -B "$WORK/mercury-build" \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_SHARED_LIBS=ON \
        -DNA_USE_OFI=ON -DNA_USE_SM=ON -DBUILD_TESTING=OFF
    run_logged "$WORK/mercury-build.log" cmake --build "$WORK/mercury-build" -j "$JOBS"
    run_logged "$WORK/mercury-install.log" cmake --install "$WORK/mercury-build"
    echo "$MERCURY_SUM" > "$STAMPS/mercury.stamp"
fi

# ---- 2. pdc-ckpt ----
step "pdc-ckpt from $REPO"
run_logged "$WORK/pdc-ckpt-configure.log" cmake -S "$REPO" -B "$WORK/pdc-ckpt-build" \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DPDC_CKPT_PDC_SOURCES= -DPDC_CKPT_BUILD_TESTS=OFF
run_logged "$WORK/pdc-ckpt-build.log" cmake --build "$WORK/pdc-ckpt-build" -j "$JOBS"
run_logged "$WORK/pdc-ckpt-install.log" cmake --install "$WORK/pdc-ckpt-build"

# ---- 3. PDC, patched ----
step "PDC 2e5de75a + $(basename "$PATCH")"
rm -rf "$WORK/pdc-2e5de75a"
tar xzf "$SOURCES/$PDC_TGZ" -C "$WORK" || die "cannot unpack $SOURCES/$PDC_TGZ"
(cd "$WORK/pdc-2e5de75a" && patch -p1 --quiet < "$PATCH") || die "$PATCH does not apply to $PDC_TGZ"
run_logged "$WORK/pdc-configure.log" cmake -S "$WORK/pdc-2e5de75a" -B "$WORK/pdc-build" \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_C_COMPILER=mpicc \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=ON \
    -DBUILD_MPI_TESTING=ON -DPDC_ENABLE_MPI=ON -DPDC_SERVER_CACHE=OFF -DMPI_RUN_CMD=mpiexec \
    -DCMAKE_INSTALL_RPATH="$PREFIX/lib" -DPDC_CKPT_GLUE_DIR="$GLUE"
run_logged "$WORK/pdc-build.log" cmake --build "$WORK/pdc-build" -j "$JOBS"
run_logged "$WORK/pdc-install.log" cmake --install "$WORK/pdc-build"

for f in bin/pdc_server.exe bin/close_server include/pdc.h lib/libpdc.so; do
    [ -e "$PREFIX/$f" ] || die "the build finished but $PREFIX/$f is missing"
done
step "done: $PREFIX/bin/pdc_server.exe (PDC build tree: $WORK/pdc-build)"
