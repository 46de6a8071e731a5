#!/usr/bin/env bash
# Region data with PDC_TMPDIR on a full file system (1 rank). A 32 MiB
# tmpfs holds PDC_TMPDIR (server.cfg, the store pdc-ckpt/, the IDIOMS dump)
# and PDC_DATA_LOC (pdc_data/: the files region transfers write; PDC puts
# them there, not under PDC_TMPDIR). A filler file leaves 3 MiB free, then:
#  1. `rfull-write` writes 64 KiB chunks of object w until a write fails:
#     the failure reaches the client (PDCregion_transfer_wait), three more
#     writes fail too, reads of the first and the last acknowledged chunk
#     go on; the filler goes (space back): the next chunk is accepted;
#     close_server and the server exit 0; the store verifies; after a
#     restart (map) every acknowledged chunk reads back byte for byte;
#  2. the same with object w2 on that restarted server, then 3 s of quiet
#     and SIGKILL instead of close; after a restart (rebuild) every
#     acknowledged chunk of w and w2 reads back; close exits 0.
# SKIPPED (77), saying why, only when a tmpfs cannot be mounted here.
# usage: test_pdc_tmpfull.sh PREFIX CLIENT INSPECT
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$(realpath "$2") inspect=$(realpath "$3")

fs=$PDC_WORK/fs
mkdir -p "$fs"
if ! mount -t tmpfs -o size=32m tmpfs "$fs" 2>"$PDC_WORK/mount.err"; then
    echo "SKIPPED: pdc_tmpfull: cannot mount a tmpfs here: $(cat "$PDC_WORK/mount.err")"
    exit 77
fi
# kill the server before unmounting (it holds files there), then the
# usual cleanup
fs_cleanup() {
    local rc=$?
    if [ -n "${SERVER_PID:-}" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        pdc_kill_tree "$SERVER_PID" KILL
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
    umount "$fs" 2>/dev/null || umount -l "$fs" 2>/dev/null || true
    pdc_cleanup "$rc"
}
trap fs_cleanup EXIT
export PDC_TMPDIR=$fs/pdc_tmp PDC_DATA_LOC=$fs
store=$PDC_TMPDIR/pdc-ckpt

# fill: leave 3 MiB free on the tmpfs
fill() {
    local avail
    avail=$(df --output=avail -B1 "$fs" | tail -1)
    fallocate -l $((avail - 3 * 1024 * 1024)) "$fs/filler"
    df -h "$fs" | tail -1
}

run_client() { pdc_run "^(FAIL|rfull-)" "$1" "$client" "${@:2}"; }

# full_round NAME: write NAME until refused, then space back and one more;
# sets ACKED (chunks acknowledged, the one after space back included)
full_round() {
    fill
    run_client "$PDC_WORK/$1-write.out" rfull-write --name "$1" --count 2000 --ack "$PDC_WORK/$1.ack" ||
        { echo "FAIL: rfull-write $1 on a full file system"; exit 1; }
    local a
    a=$(sed -n 's/^rfull-write: acked //p' "$PDC_WORK/$1-write.out")
    [ "$a" -gt 0 ] && [ "$a" -eq "$(wc -l <"$PDC_WORK/$1.ack")" ] ||
        { echo "FAIL: $1: acked $a"; exit 1; }
    rm -f "$fs/filler"
    run_client "$PDC_WORK/$1-more.out" rfull-more --name "$1" --acked "$a" ||
        { echo "FAIL: rfull-more $1 once space is back"; exit 1; }
    ACKED=$((a + 1))
    echo "$1: $a chunks acknowledged before the refusals, 1 after space came back"
}

echo "== 1. full, space back, close, restart (map)"
pdc_start 1 "$PDC_WORK/server0.log"
full_round w
acked_w=$ACKED
pdc_close || { echo "FAIL: close_server or the server's exit status once space was back"; exit 1; }
"$inspect" verify "$store" >/dev/null || { echo "FAIL: the store does not verify"; exit 1; }
pdc_start 1 "$PDC_WORK/server1.log" restart
run_client "$PDC_WORK/check1.out" rfull-check --name w --acked "$acked_w" ||
    { echo "FAIL: acknowledged chunks of w lost across close and restart"; exit 1; }

echo "== 2. full, space back, SIGKILL, restart (rebuild)"
full_round w2
acked_w2=$ACKED
sleep 3
pdc_kill9
"$inspect" verify "$store" >/dev/null || { echo "FAIL: the store does not verify after SIGKILL"; exit 1; }
pdc_restart 1 rebuild "$PDC_WORK/server2.log"
run_client "$PDC_WORK/check2.out" rfull-check --name w --acked "$acked_w" ||
    { echo "FAIL: acknowledged chunks of w lost across SIGKILL and restart"; exit 1; }
run_client "$PDC_WORK/check3.out" rfull-check --name w2 --acked "$acked_w2" ||
    { echo "FAIL: acknowledged chunks of w2 lost across SIGKILL and restart"; exit 1; }
pdc_close || { echo "FAIL: close_server or the server's exit status"; exit 1; }
echo "PASS: writes that cannot land fail to the client; nothing acknowledged is lost (close, SIGKILL)"
