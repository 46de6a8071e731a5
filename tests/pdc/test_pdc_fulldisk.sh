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
#  B. The same, but space never comes back (PDC_CKPT_CLOSE_RETRY_S=2;
#     commits every 100 mutations, so that some are committed before):
#     close_server and the server exit non-zero, the log says how many
#     acknowledged mutations could not be persisted and names
#     PDC_CKPT_FALLBACK_DIR; the store verifies, and after a restart (space
#     back) every tag acknowledged before those reads back.
#  C. As B, with PDC_CKPT_FALLBACK_DIR set (a directory outside the store;
#     the file-size limit is the process's: commits every 100 mutations
#     keep the batch well below it): the close writes the staged batch to
#     the pending file there and says so, with the count; exit statuses stay
#     non-zero. A fresh start refuses while the file is there; a restart
#     from a damaged copy refuses (CKPT_E_CORRUPT, the file kept); a map
#     restart replays the file (and removes it) before "Server ready", and
#     every acknowledged tag reads back, also after a rebuild restart.
# usage: test_pdc_fulldisk.sh PREFIX CLIENT INSPECT NP
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3") np=$4
limit_kb=1536
command -v prlimit >/dev/null || { echo "FAIL: prlimit (util-linux) is missing"; exit 1; }
trap '' XFSZ # inherited by the servers: a write past the limit fails with EFBIG

run_client() { pdc_run "^(FAIL|full-)" "$1" "$client" "${@:2}"; }

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
# commits every 100 mutations: with the default 1000 (and 100 ms), a fast
# client staged over 600 tags before the first commit, which then did not
# fit, and nothing was committed to check afterwards
export PDC_TMPDIR=$PDC_WORK/pdc_tmpB PDC_CKPT_CLOSE_RETRY_S=2 PDC_CKPT_COMMIT_EVERY=100
start_full "$PDC_WORK/serverB0.log"
run_client "$PDC_WORK/fullB.out" full-put --count 100000 || { echo "FAIL: full-put"; exit 1; }
acked=$(sed -n 's/^full-put: acked \([0-9]*\)$/\1/p' "$PDC_WORK/fullB.out")
pdc_close_fails "$PDC_WORK/close_serverB.out"
echo "close_server exited $PDC_CLOSE_ST"
echo "the server exited $PDC_EXIT_ST"
lost=$(sed -n 's/.*store NOT closed: \([0-9]*\) acknowledged mutations.*/\1/p' "$PDC_WORK/serverB0.log" |
    awk '{ n += $1 } END { print n + 0 }')
grep -h "store NOT closed" "$PDC_WORK/serverB0.log"
grep -q "store NOT closed.*set PDC_CKPT_FALLBACK_DIR to keep them" "$PDC_WORK/serverB0.log" ||
    { echo "FAIL: the log does not name PDC_CKPT_FALLBACK_DIR"; exit 1; }
grep -q "store closed" "$PDC_WORK/serverB0.log" &&
    { echo "FAIL: the log says \"store closed\""; exit 1; }
"$inspect" verify "$PDC_TMPDIR/pdc-ckpt"
pdc_start "$np" "$PDC_WORK/serverB1.log" restart
keep=$((acked - lost))
[ "$keep" -gt 0 ] || { echo "FAIL: acked $acked, lost $lost"; exit 1; }
run_client "$PDC_WORK/checkB.out" full-check --acked "$keep" || { echo "FAIL: full-check"; exit 1; }
pdc_close

echo "== C. $np server(s): the disk stays full through close_server; PDC_CKPT_FALLBACK_DIR keeps the batch"
export PDC_TMPDIR=$PDC_WORK/pdc_tmpC PDC_CKPT_FALLBACK_DIR=$PDC_WORK/fallbackC
start_full "$PDC_WORK/serverC0.log"
run_client "$PDC_WORK/fullC.out" full-put --count 100000 || { echo "FAIL: full-put"; exit 1; }
acked=$(sed -n 's/^full-put: acked \([0-9]*\)$/\1/p' "$PDC_WORK/fullC.out")
pdc_close_fails "$PDC_WORK/close_serverC.out"
echo "close_server exited $PDC_CLOSE_ST, the server $PDC_EXIT_ST"
grep -h "store NOT closed" "$PDC_WORK/serverC0.log"
kept=$(sed -n 's/.*store NOT closed: \([0-9]*\) acknowledged mutations.*are kept in the pending file.*/\1/p' \
    "$PDC_WORK/serverC0.log" | awk '{ n += $1 } END { print n + 0 }')
nfiles=0
for ((r = 0; r < np; r++)); do
    pend=$PDC_CKPT_FALLBACK_DIR/pdc-ckpt-pending.rank-$r
    if grep -q "kept in the pending file \[$pend\]" "$PDC_WORK/serverC0.log"; then
        [ -f "$pend" ] || { echo "FAIL: the log names $pend, which is not there"; exit 1; }
        nfiles=$((nfiles + 1))
    fi
done
[ "$kept" -gt 0 ] && [ "$nfiles" -gt 0 ] ||
    { echo "FAIL: no pending file written (kept $kept, files $nfiles)"; exit 1; }
grep -q "are lost" "$PDC_WORK/serverC0.log" && { echo "FAIL: the log says mutations are lost"; exit 1; }
"$inspect" verify "$PDC_TMPDIR/pdc-ckpt"

# refused NAME PATTERN [restart]: exits non-zero before "Server ready",
# the log matches PATTERN
refused() {
    pdc_refused "$np" "$PDC_WORK/refuseC-$1.log" "$2" "${3:-}"
    echo "ok: $1: exit status $PDC_REFUSED_ST; $(grep -Eo "$2" "$PDC_WORK/refuseC-$1.log" | head -1)"
}
# a fresh start (even for a new store) refuses while a pending file waits
export PDC_CKPT_DIR=$PDC_WORK/otherC
refused fresh-with-pending 'a pending file is at \[[^]]*pdc-ckpt-pending'
unset PDC_CKPT_DIR
# a damaged pending file refuses the restart and stays
pend0=$PDC_CKPT_FALLBACK_DIR/pdc-ckpt-pending.rank-0
if [ -f "$pend0" ]; then
    cp "$pend0" "$PDC_WORK/pending.good"
    printf '\xff' | dd of="$pend0" bs=1 seek=100 conv=notrunc status=none
    refused damaged-pending "CKPT_E_CORRUPT: $pend0: pending file damaged at offset [0-9]+" restart
    cmp -s "$pend0" "$PDC_WORK/pending.good" && { echo "FAIL: the damage did not take"; exit 1; }
    cp "$PDC_WORK/pending.good" "$pend0"
fi
# space is back (new processes): the map restart replays, then reads all
pdc_start "$np" "$PDC_WORK/serverC1.log" restart
replayed=$(sed -n 's/.*pdc-ckpt: replayed \([0-9]*\) mutations from the pending file.*/\1/p' \
    "$PDC_WORK/serverC1.log" | awk '{ n += $1 } END { print n + 0 }')
[ "$replayed" -eq "$kept" ] || { echo "FAIL: kept $kept mutations, replayed $replayed"; exit 1; }
for ((r = 0; r < np; r++)); do
    [ ! -e "$PDC_CKPT_FALLBACK_DIR/pdc-ckpt-pending.rank-$r" ] ||
        { echo "FAIL: pending file of rank $r still there after the replay"; exit 1; }
done
run_client "$PDC_WORK/checkC.out" full-check --acked "$acked" || { echo "FAIL: full-check (map)"; exit 1; }
pdc_close
"$inspect" verify "$PDC_TMPDIR/pdc-ckpt"
pdc_restart "$np" rebuild "$PDC_WORK/serverC2.log"
run_client "$PDC_WORK/checkC2.out" full-check --acked "$acked" || { echo "FAIL: full-check (rebuild)"; exit 1; }
pdc_close
unset PDC_CKPT_FALLBACK_DIR PDC_CKPT_COMMIT_EVERY
echo "PASS: $np server(s): a full disk refuses writes to the client, reads go on, nothing acknowledged is lost once space is back; a close that cannot persist says so ($lost mutations) and exits non-zero; with PDC_CKPT_FALLBACK_DIR it keeps them ($kept in the pending file) and a restart replays them: all $acked acknowledged tags read back"
