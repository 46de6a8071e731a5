#!/usr/bin/env bash
# SIGKILL during a write loop on PDC's real server with the pdc-ckpt store
# (default sync mode `close`): a client puts kvtags one by one and records
# each acknowledged put; after PAUSE puts it waits 2 s, so the store's
# background commit (PDC_CKPT_COMMIT_MS, 100 ms) has committed them; then it
# goes on until every server rank is killed with SIGKILL. The store must
# verify clean as the crash left it; after a restart, the tags on the object
# are exactly k0..k<K-1> with PAUSE <= K <= acknowledged + 1 (no holes, at
# most the one put in flight), and the store holds the same K.
# usage: test_pdc_sigkill.sh PREFIX CLIENT INSPECT NP
set -euo pipefail
# shellcheck source=pdc_lib.sh
. "$(dirname "$0")/pdc_lib.sh"
pdc_test_init "$0" "$@"

client=$2 inspect=$3 np=$4
pause=300 after=300
ack=$PDC_WORK/ack
CLIENT_PID=
kill_client() {
    if [ -n "$CLIENT_PID" ] && kill -0 "$CLIENT_PID" 2>/dev/null; then
        pdc_kill_tree "$CLIENT_PID" KILL
    fi
    wait "$CLIENT_PID" 2>/dev/null || true
    CLIENT_PID=
}
trap 'rc=$?; kill_client; pdc_cleanup "$rc"' EXIT

pdc_start "$np" "$PDC_WORK/server0.log"
(cd "$PDC_WORK" && exec timeout -k 5 300 "$client" putloop --count 10000000 \
    --pause-after "$pause" --ack "$ack") >"$PDC_WORK/putloop.out" 2>&1 &
CLIENT_PID=$!
# kill once the writer is well past the pause
for i in $(seq 1 1200); do
    n_after=$(awk 'p { n++ } /^pause$/ { p = 1 } END { print n + 0 }' "$ack" 2>/dev/null || echo 0)
    [ "$n_after" -ge "$after" ] && break
    kill -0 "$CLIENT_PID" 2>/dev/null || { echo "FAIL: the writer exited early"; cat "$PDC_WORK/putloop.out"; exit 1; }
    sleep 0.1
done
[ "$n_after" -ge "$after" ] || { echo "FAIL: the writer made $n_after puts after the pause in 120 s"; exit 1; }
pids=$(pdc_server_pids)
echo "SIGKILL server rank(s) $pids"
pdc_kill9
kill_client
acked=$(grep -c '^[0-9]' "$ack")
echo "acknowledged puts: $acked (pause after $pause)"

echo "== the store as the crash left it"
"$inspect" verify "$store"

echo "== restart, check"
pdc_start "$np" "$PDC_WORK/server1.log" restart
st=0
pdc_run "^(FAIL|putcheck:)" "$PDC_WORK/check.out" "$client" putcheck --acked "$acked" --pause-after "$pause" || st=$?
[ "$st" -eq 0 ] || { echo "FAIL: putcheck exited $st"; exit 1; }
pdc_close
k=$(sed -n 's/^putcheck: .* present k0..k\([0-9-]*\) .*/\1/p' "$PDC_WORK/check.out")
k=$((k + 1))
# the store holds the same K tags on ko, and verifies clean after the restart
ko=$("$inspect" dump "$store" --db obj_name --prefix ko | sed -n 's/.*"value":{"id":\([0-9]*\)}.*/\1/p')
[ -n "$ko" ] || { echo "FAIL: no object ko in the store"; exit 1; }
n_store=$("$inspect" dump "$store" --db kvtag --prefix "$ko" | wc -l)
[ "$n_store" -eq "$k" ] || { echo "FAIL: the store holds $n_store tags on ko, the server answered $k"; exit 1; }
"$inspect" verify "$store"
echo "PASS: SIGKILL after $acked acknowledged puts: $k committed and read back, none missing"
