#!/usr/bin/env bash
# A full disk under PDC's real server with the store (NP ranks). The end
# of the space is a file-size limit on the server processes (RLIMIT_FSIZE
# set with prlimit once they are ready, SIGXFSZ ignored: a write past it
# fails with EFBIG, as on a full file system with ENOSPC), raised again
# with prlimit to "free space".
#  A. `full-put` puts 2 KiB kvtags until one is refused: once a commit
#     fails, writes are refused to the client; three more are refused, and
#     reads go on. Space comes back: the next put is accepted (a commit
#     succeeded); close_server and the server exit 0; after a restart every
#     acknowledged tag reads back byte for byte.
#  B. The same, but space never comes back (PDC_CKPT_CLOSE_RETRY_S=2):
#     close_server and the server exit non-zero, the log says how many
#     acknowledged mutations could not be persisted; the store verifies,
#     and after a restart (space back) every tag acknowledged before those
#     reads back.
# usage: test_pdc_fulldisk.sh PREFIX CLIENT INSPECT NP
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=pdc_lib.sh
. "$here/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"

prefix=$1 client=$(realpath "$2") inspect=$(realpath "$3") np=$4
limit_kb=1536
pdc_setup "$prefix"
unset PDC_CKPT_RESTART PDC_CKPT PDC_CKPT_DIR PDC_CKPT_CLOSE_RETRY_S
command -v prlimit >/dev/null || { echo "FAIL: prlimit (util-linux) is missing"; exit 1; }
trap '' XFSZ # inherited by the servers: a write past the limit fails with EFBIG

run_client() {
    local out=$1 st=0
    shift
    pdc_client "$client" "$@" >"$out" 2>&1 || st=$?
    grep -E "^(FAIL|full-)" "$out" || true
    return "$st"
}

# start_full LOG: the servers, then a file-size limit of limit_kb KiB on
# them (set once they are ready: MPI's shared-memory setup writes larger
# files at start-up)
start_full() {
    local p
    pdc_start "$np" "$1"
    for p in $(pdc_server_pids); do
        prlimit --pid "$p" --fsize=$((limit_kb * 1024)):unlimited
    done
}

space_back() {
    local p
    for p in $(pdc_server_pids); do
        prlimit --pid "$p" --fsize=unlimited:unlimited
    done
}

echo "== A. $np server(s): the disk fills, then space comes back"
start_full "$PDC_WORK/serverA0.log"
run_client "$PDC_WORK/fullA.out" full-put --count 100000 || { echo "FAIL: full-put"; exit 1; }
acked=$(sed -n 's/^full-put: acked \([0-9]*\)$/\1/p' "$PDC_WORK/fullA.out")
grep -h "pdc-ckpt.*cannot commit\|write refused" "$PDC_WORK/serverA0.log" | head -3
space_back
run_client "$PDC_WORK/moreA.out" full-more --acked "$acked" || { echo "FAIL: full-more"; exit 1; }
grep -q "the store commits again" "$PDC_WORK/serverA0.log" ||
    { echo "FAIL: the server did not log that commits succeed again"; exit 1; }
pdc_close
"$inspect" verify "$PDC_TMPDIR/pdc-ckpt"
pdc_start "$np" "$PDC_WORK/serverA1.log" restart
run_client "$PDC_WORK/checkA.out" full-check --acked $((acked + 1)) || { echo "FAIL: full-check"; exit 1; }
pdc_close

echo "== B. $np server(s): the disk fills and stays full through close_server"
export PDC_TMPDIR=$PDC_WORK/pdc_tmpB PDC_CKPT_CLOSE_RETRY_S=2
start_full "$PDC_WORK/serverB0.log"
run_client "$PDC_WORK/fullB.out" full-put --count 100000 || { echo "FAIL: full-put"; exit 1; }
acked=$(sed -n 's/^full-put: acked \([0-9]*\)$/\1/p' "$PDC_WORK/fullB.out")
st=0
PDC_CLIENT_TIMEOUT=$PDC_CLOSE_TIMEOUT pdc_client "$PDC_PREFIX/bin/close_server" \
    >"$PDC_WORK/close_serverB.out" 2>&1 || st=$?
[ "$st" -ne 0 ] || { echo "FAIL: close_server exited 0 although the store could not persist"; exit 1; }
echo "close_server exited $st"
sst=0
pdc_wait_exit || sst=$?
[ "$sst" -ne 0 ] || { echo "FAIL: the server exited 0 although the store could not persist"; exit 1; }
echo "the server exited $sst"
lost=$(sed -n 's/.*store NOT closed: \([0-9]*\) acknowledged mutations.*/\1/p' "$PDC_WORK/serverB0.log" |
    awk '{ n += $1 } END { print n + 0 }')
grep -h "store NOT closed" "$PDC_WORK/serverB0.log"
grep -q "store closed" "$PDC_WORK/serverB0.log" &&
    { echo "FAIL: the log says \"store closed\""; exit 1; }
"$inspect" verify "$PDC_TMPDIR/pdc-ckpt"
pdc_start "$np" "$PDC_WORK/serverB1.log" restart
keep=$((acked - lost))
[ "$keep" -gt 0 ] || { echo "FAIL: acked $acked, lost $lost"; exit 1; }
run_client "$PDC_WORK/checkB.out" full-check --acked "$keep" || { echo "FAIL: full-check"; exit 1; }
pdc_close
echo "PASS: $np server(s): a full disk refuses writes to the client, reads go on, nothing acknowledged is lost once space is back; a close that cannot persist says so ($lost mutations) and exits non-zero"
