#!/usr/bin/env bash
# build-pdc.sh - build PDC's real metadata server, patched with the series in
# server_hooks/pdc/patches/ (PDC fixes, then the PDC_ENABLE_CKPT option and
# the server's calls into pdc-ckpt), with or without pdc-ckpt inside it.
#
# In this order, into --prefix:
#   1. Mercury 2.3.1, from mercury-2.3.1.tar.gz (skipped when the prefix
#      already holds the Mercury built from the same tarball: a stamp file
#      records its sha256), or none when --mercury names an installed one;
#   2. this project (pdc-ckpt), position-independent, with cmake --install
#      (--ckpt on only);
#   3. PDC: unpacked from pdc-2e5de75a.tar.gz or copied from a source tree,
#      the series applied with patch -p1 (a tree that already holds it, e.g.
#      a git checkout with the series committed, is built as it is), and
#      configured with -DPDC_ENABLE_CKPT=ON or OFF.
# Result: PREFIX/bin/{pdc_server.exe,close_server}, PREFIX/include/pdc.h,
# PREFIX/lib/{libpdc.so,libmercury*.so,...}; the installed programs carry an
# RPATH to PREFIX/lib. PDC's build tree (its test programs and its own
# ctest, e.g. `ctest -L serial`) is W/pdc-build, its patched sources W/pdc-src.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: tools/pdc/build-pdc.sh --sources DIR --prefix PREFIX [--ckpt on|off]
                              [--mercury TARBALL|PREFIX] [--jobs N] [--workdir W]

  --sources DIR    either a folder holding pdc-2e5de75a.tar.gz (and
                   mercury-2.3.1.tar.gz), as the shared thirdparty/ folder
                   lays them out, or a PDC source tree or git checkout
                   (at 2e5de75a, with or without the series applied)
  --prefix PREFIX  install prefix for Mercury, pdc-ckpt and PDC
  --ckpt on|off    build PDC with -DPDC_ENABLE_CKPT=ON (default, pdc-ckpt is
                   built and installed first) or OFF (PDC as without pdc-ckpt)
  --mercury M      mercury-2.3.1.tar.gz to build, or a prefix where Mercury is
                   installed (default: DIR/mercury-2.3.1.tar.gz when DIR holds
                   the tarballs; for a source tree, the Mercury already in
                   PREFIX)
  --jobs N         parallel build jobs (default 2)
  --workdir W      where the sources are unpacked and built
                   (default PREFIX-work; PDC's build tree is W/pdc-build)

Needs (Debian 12): build-essential cmake pkg-config patch mpich libmpich-dev
libfabric-dev uuid-dev, and for --ckpt on liblmdb-dev libcmocka-dev
libjson-c-dev. They are all checked before anything is built.
EOF
}

die() {
    echo "build-pdc.sh: $*" >&2
    exit 1
}

SOURCES='' PREFIX='' JOBS=2 WORK='' CKPT=on MERCURY=''
while [ $# -gt 0 ]; do
    case "$1" in
        --sources) [ $# -ge 2 ] || die "--sources needs a directory"; SOURCES=$2; shift 2 ;;
        --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; PREFIX=$2; shift 2 ;;
        --ckpt) [ $# -ge 2 ] || die "--ckpt needs on or off"; CKPT=$2; shift 2 ;;
        --mercury) [ $# -ge 2 ] || die "--mercury needs a tarball or a prefix"; MERCURY=$2; shift 2 ;;
        --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; JOBS=$2; shift 2 ;;
        --workdir) [ $# -ge 2 ] || die "--workdir needs a directory"; WORK=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
[ -n "$SOURCES" ] || { usage >&2; die "--sources is required"; }
[ -n "$PREFIX" ] || { usage >&2; die "--prefix is required"; }
case "$JOBS" in '' | *[!0-9]* | 0) die "--jobs must be a positive number, not '$JOBS'" ;; esac
case "$CKPT" in on | off) ;; *) die "--ckpt must be on or off, not '$CKPT'" ;; esac

# ---- what to build from: tarballs or a source tree ----
MERCURY_TGZ_NAME=mercury-2.3.1.tar.gz
PDC_TGZ_NAME=pdc-2e5de75a.tar.gz
[ -d "$SOURCES" ] || die "sources directory '$SOURCES' does not exist"
SOURCES=$(cd "$SOURCES" && pwd)
if [ -f "$SOURCES/$PDC_TGZ_NAME" ]; then
    PDC_FROM=tarball
    [ -n "$MERCURY" ] || MERCURY=$SOURCES/$MERCURY_TGZ_NAME
elif [ -f "$SOURCES/CMakeLists.txt" ] && [ -f "$SOURCES/src/server/pdc_server.c" ]; then
    PDC_FROM=tree
else
    die "'$SOURCES' holds neither $PDC_TGZ_NAME nor a PDC source tree (CMakeLists.txt, src/server/pdc_server.c)"
fi

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SERIES=$REPO/server_hooks/pdc/patches
shopt -s nullglob
PATCHES=("$SERIES"/[0-9][0-9][0-9][0-9]-*.patch)
shopt -u nullglob
[ ${#PATCHES[@]} -gt 0 ] || die "no patches in $SERIES"

# nothing is created before every check passed
PREFIX=$(realpath -m "$PREFIX")

# Mercury: a tarball to build, or an installed prefix
if [ -z "$MERCURY" ]; then
    [ -f "$PREFIX/lib/libmercury.so" ] ||
        die "no Mercury: $PREFIX holds none; give --mercury $MERCURY_TGZ_NAME or an installed Mercury's prefix"
    MERCURY_MODE=prefix MERCURY_PREFIX=$PREFIX
elif [ -f "$MERCURY" ]; then
    MERCURY_MODE=tarball MERCURY_TGZ=$(cd "$(dirname "$MERCURY")" && pwd)/$(basename "$MERCURY")
elif [ -d "$MERCURY" ] && [ -f "$MERCURY/lib/libmercury.so" ]; then
    MERCURY_MODE=prefix MERCURY_PREFIX=$(cd "$MERCURY" && pwd)
else
    die "--mercury '$MERCURY' is neither a tarball nor a prefix with lib/libmercury.so"
fi

# ---- every tool and package, each named with the Debian package that brings it ----
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
need_cmd mpiexec mpich
need_pc() {
    pkg-config --exists "$1" || die "pkg-config cannot find '$1': install the Debian package $2"
}
need_pc libfabric libfabric-dev
[ -f /usr/include/uuid/uuid.h ] || die "uuid/uuid.h not found: install the Debian package uuid-dev"
if [ "$CKPT" = on ]; then
    need_pc lmdb liblmdb-dev
    need_pc cmocka libcmocka-dev
    need_pc json-c libjson-c-dev
fi

mkdir -p "$PREFIX" || die "cannot create prefix '$PREFIX'"
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
if [ "$MERCURY_MODE" = prefix ]; then
    step "Mercury: the one installed in $MERCURY_PREFIX"
else
    MERCURY_SUM=$(sha256sum "$MERCURY_TGZ" | cut -d' ' -f1)
    if [ -f "$STAMPS/mercury.stamp" ] && [ "$(cat "$STAMPS/mercury.stamp")" = "$MERCURY_SUM" ] &&
        [ -f "$PREFIX/lib/libmercury.so" ]; then
        step "Mercury already in $PREFIX (same tarball): not rebuilt"
    else
        step "Mercury from $(basename "$MERCURY_TGZ")"
        rm -rf "$WORK/mercury-src" "$WORK/mercury-build"
        mkdir -p "$WORK/mercury-src"
        tar xzf "$MERCURY_TGZ" -C "$WORK/mercury-src" --strip-components=1 ||
            die "cannot unpack $MERCURY_TGZ"
        run_logged "$WORK/mercury-configure.log" cmake -S "$WORK/mercury-src" -B "$WORK/mercury-build" \
            -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_SHARED_LIBS=ON \
            -DNA_USE_OFI=ON -DNA_USE_SM=ON -DBUILD_TESTING=OFF
        run_logged "$WORK/mercury-build.log" cmake --build "$WORK/mercury-build" -j "$JOBS"
        run_logged "$WORK/mercury-install.log" cmake --install "$WORK/mercury-build"
        echo "$MERCURY_SUM" > "$STAMPS/mercury.stamp"
    fi
    MERCURY_PREFIX=$PREFIX
fi

# ---- 2. pdc-ckpt ----
if [ "$CKPT" = on ]; then
    step "pdc-ckpt from $REPO"
    run_logged "$WORK/pdc-ckpt-configure.log" cmake -S "$REPO" -B "$WORK/pdc-ckpt-build" \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DPDC_CKPT_PDC_SOURCES= -DPDC_CKPT_BUILD_TESTS=OFF
    run_logged "$WORK/pdc-ckpt-build.log" cmake --build "$WORK/pdc-ckpt-build" -j "$JOBS"
    run_logged "$WORK/pdc-ckpt-install.log" cmake --install "$WORK/pdc-ckpt-build"
fi

# ---- 3. PDC with the series ----
SRC=$WORK/pdc-src
rm -rf "$SRC"
mkdir -p "$SRC"
if [ "$PDC_FROM" = tarball ]; then
    step "PDC from $PDC_TGZ_NAME"
    tar xzf "$SOURCES/$PDC_TGZ_NAME" -C "$SRC" --strip-components=1 || die "cannot unpack $SOURCES/$PDC_TGZ_NAME"
else
    step "PDC from the source tree $SOURCES"
    # the working tree as it is (a git checkout's uncommitted changes too)
    tar -C "$SOURCES" --exclude=.git -cf - . | tar -C "$SRC" -xf - || die "cannot copy $SOURCES"
fi
if [ -f "$SRC/src/server/pdc_server_ckpt.c" ]; then
    step "the sources already hold the series (src/server/pdc_server_ckpt.c): not patched"
else
    step "applying ${#PATCHES[@]} patches of $SERIES"
    for p in "${PATCHES[@]}"; do
        (cd "$SRC" && patch -p1 --quiet --forward < "$p") > "$WORK/patch.log" 2>&1 || {
            cat "$WORK/patch.log" >&2
            die "$(basename "$p") does not apply to $SOURCES"
        }
    done
fi
CKPT_OPT=OFF
[ "$CKPT" = on ] && CKPT_OPT=ON
step "PDC, PDC_ENABLE_CKPT=$CKPT_OPT"
rm -rf "$WORK/pdc-build"
run_logged "$WORK/pdc-configure.log" cmake -S "$SRC" -B "$WORK/pdc-build" \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_PREFIX_PATH="$PREFIX;$MERCURY_PREFIX" -DCMAKE_C_COMPILER=mpicc \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=ON \
    -DBUILD_MPI_TESTING=ON -DPDC_ENABLE_MPI=ON -DPDC_SERVER_CACHE=OFF -DMPI_RUN_CMD=mpiexec \
    -DCMAKE_INSTALL_RPATH="$PREFIX/lib;$MERCURY_PREFIX/lib" -DPDC_ENABLE_CKPT="$CKPT_OPT"
run_logged "$WORK/pdc-build.log" cmake --build "$WORK/pdc-build" -j "$JOBS"
run_logged "$WORK/pdc-install.log" cmake --install "$WORK/pdc-build"

for f in bin/pdc_server.exe bin/close_server include/pdc.h lib/libpdc.so; do
    [ -e "$PREFIX/$f" ] || die "the build finished but $PREFIX/$f is missing"
done
step "done: $PREFIX/bin/pdc_server.exe, PDC_ENABLE_CKPT=$CKPT_OPT (PDC build tree: $WORK/pdc-build)"
