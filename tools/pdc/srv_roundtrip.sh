#!/usr/bin/env bash
# srv_roundtrip.sh - one write / close_server / restart / read-back round
# trip of the patched PDC server built by build-pdc.sh, with timings.
#
#   tools/pdc/srv_roundtrip.sh PREFIX [options]
#     --servers R      server ranks (mpiexec -n R; default 1)
#     --objects N      objects written (default 20)
#     --tags T         int tags per object (default 5)
#     --check K        read back only objects o0..o<K-1> (default: all N)
#     --restart FORMS  map | rebuild | pdc (PDC_CKPT=off: PDC's own
#                      checkpoint file; default map). A comma list of map
#                      and rebuild restarts the same store once per form.
#     --kill           SIGKILL the server during a tag loop instead of
#                      close_server, restart, and check every acknowledged put
#                      (with PDC_CKPT_COMMIT_EVERY=1: each put commits before
#                      its answer)
#     --from-store DIR restart from a copy of an existing store root (e.g.
#                      one ckpt-workload wrote) instead of writing through
#                      PDC; needs --lookup
#     --lookup NAME TAG after each restart, time opening NAME and getting
#                      TAG (the first lookup) instead of the full read-back
#     --keep DIR       run in DIR and keep it (default: a temporary directory)
#
# CKPT_INSPECT names ckpt-inspect (default PREFIX/bin/ckpt-inspect), run
# as `ckpt-inspect verify` on the store at the end.
# Prints "ready_s", "write_s", "close_s", "restart_ready_s[form]",
# "read_s[form]" lines (wall seconds, server readiness by polling its log
# every 10 ms), the server's VmHWM before each close, the size of
# PDC_TMPDIR after the first close, and the client's checks.
# Servers are started, waited for, closed and killed by tests/pdc/pdc_lib.sh
# (the `pdc` tests' library: mpiexec -n R, "Server ready" within
# PDC_READY_TIMEOUT, close_server, exit within PDC_EXIT_TIMEOUT, every
# process stopped by PID). Only one PDC instance fits on a machine (port
# 7000 + rank): with PDC_CKPT_PORT_LOCK=FILE exported it first takes `flock`
# on FILE, as the `pdc` tests do. Exit status: 0 if every check passed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../tests/pdc/pdc_lib.sh
. "$HERE/../../tests/pdc/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"

PREFIX=${1:?usage: srv_roundtrip.sh PREFIX [--servers R] [--objects N] [--tags T] [--restart map|rebuild|pdc] [--kill] [--keep DIR]}
shift
R=1 N=20 T=5 FORM=map KILL=0 KEEP= K= FROM= LNAME= LTAG=
while [ $# -gt 0 ]; do
    case "$1" in
        --servers) R=$2; shift 2 ;;
        --objects) N=$2; shift 2 ;;
        --tags) T=$2; shift 2 ;;
        --check) K=$2; shift 2 ;;
        --restart) FORM=$2; shift 2 ;;
        --kill) KILL=1; shift ;;
        --from-store) FROM=$2; shift 2 ;;
        --lookup) LNAME=$2; LTAG=$3; shift 3 ;;
        --keep) KEEP=$2; shift 2 ;;
        *) echo "srv_roundtrip.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
case ",$FORM," in
    ,pdc,) ;;
    *,pdc,*) echo "srv_roundtrip.sh: --restart pdc cannot be combined with store forms" >&2; exit 2 ;;
    *) for f in ${FORM//,/ }; do
           case "$f" in map | rebuild) ;; *) echo "srv_roundtrip.sh: --restart map|rebuild|pdc, not '$f'" >&2; exit 2 ;; esac
       done ;;
esac
[ -x "$PREFIX/bin/pdc_server.exe" ] || { echo "no $PREFIX/bin/pdc_server.exe: run build-pdc.sh" >&2; exit 2; }
SRC=$HERE/../../server_hooks/pdc/srv_check.c
KEEP_ABS=
if [ -n "$KEEP" ]; then
    mkdir -p "$KEEP" && KEEP_ABS=$(cd "$KEEP" && pwd) || exit 2
fi
# pdc_setup: the work directory (KEEP, or a temporary one removed at exit),
# PDC_TMPDIR, PDC_DATA_LOC, HG_TRANSPORT, UCX_TLS, LD_LIBRARY_PATH, and the
# EXIT trap that kills what is still running
pdc_setup "$PREFIX" "$KEEP_ABS"
PREFIX=$PDC_PREFIX
W=$PDC_WORK
CLIENT=$W/srv_check
mpicc -O2 -I"$PREFIX/include" "$SRC" -o "$CLIENT" -L"$PREFIX/lib" -lpdc -lpdc_commons \
    -Wl,-rpath,"$PREFIX/lib" || exit 2
unset PDC_CKPT PDC_CKPT_RESTART PDC_CKPT_DIR
[ "$FORM" = pdc ] && export PDC_CKPT=off
# --kill: every put commits before it is answered, so every acknowledged put
# must survive the SIGKILL (by default commits come every 1000 puts or 100 ms)
[ "$KILL" = 1 ] && export PDC_CKPT_COMMIT_EVERY=1
cd "$W" || exit 2
status=0

now() { date +%s.%N; }

# client TIMEOUT ARGS...: the check client (stdin passed on), ended by
# pdc_client after TIMEOUT seconds or as soon as the server dies
client() {
    local t=$1
    shift
    PDC_CLIENT_TIMEOUT=$t pdc_client "$CLIENT" "$@"
}

# peak RSS (VmHWM, kB) of the largest server rank
if [ -n "$FROM" ]; then
    [ -n "$LNAME" ] || { echo "srv_roundtrip.sh: --from-store needs --lookup" >&2; exit 2; }
    mkdir -p "$PDC_TMPDIR" && cp -a "$FROM" "$PDC_TMPDIR/pdc-ckpt" || exit 2
    du -sk "$PDC_TMPDIR" | awk '{ print "tmpdir_kB " $1 }'
else
    pdc_start "$R" server0.log || exit 1
    echo "ready_s $PDC_READY_S"
fi
if [ -n "$FROM" ]; then
    :
elif [ "$KILL" = 1 ]; then
    timeout -k 5 600 "$CLIENT" loop "$N" > loop.out 2>&1 &
    CPID=$!
    for i in $(seq 3000); do
        [ "$(grep -c '^acked' loop.out)" -ge $((N / 2)) ] && break
        kill -0 "$CPID" 2> /dev/null || break
        sleep 0.01
    done
    pdc_kill9
    pdc_kill_tree "$CPID" KILL
    wait "$CPID" 2> /dev/null
    last=$(grep '^acked' loop.out | tail -1 | cut -d' ' -f2)
    echo "killed after acked ${last:-none}"
    [ -n "$last" ] || exit 1
else
    t0=$(now)
    client 3600 write "$N" "$T" > write.out 2>&1 || { cat write.out; status=1; }
    echo "write_s $(awk "BEGIN { printf \"%.3f\", $(now) - $t0 }") ($N objects x $T tags)"
    tail -1 write.out
    rss=$(pdc_server_hwm_kb)
    pdc_close || exit 1
    echo "close_s $PDC_CLOSE_S (server VmHWM ${rss:-?} kB)"
    du -sk "$PDC_TMPDIR" | awk '{ print "tmpdir_kB " $1 }'
fi
# one restart per form named in --restart (map,rebuild,...: the same store
# restarted again); only the first read creates the object "fresh"
n=0
for f in ${FORM//,/ }; do
    n=$((n + 1))
    [ "$f" = rebuild ] && export PDC_CKPT_RESTART=rebuild
    [ "$f" = map ] && export PDC_CKPT_RESTART=map
    pdc_start "$R" server$n.log restart || exit 1
    echo "restart_ready_s[$f] $PDC_READY_S"
    grep -h "restarted from\|Server restarted\|IDIOMS_Index_Recover" server$n.log | head -3
    if [ -n "$LNAME" ]; then
        client 600 lookup "$LNAME" "$LTAG" > read$n.out 2>&1 || status=1
        grep -h "^lookup_ms" read$n.out | sed "s/^lookup_ms/lookup_ms[$f]/"
    elif [ "$KILL" = 1 ]; then
        client 120 loopread "$last" > read$n.out 2>&1 || status=1
    else
        t0=$(now)
        client 600 read "${K:-$N}" "$T" $([ $n -gt 1 ] && echo nofresh) < write.out > read$n.out 2>&1 || status=1
        echo "read_s[$f] $(awk "BEGIN { printf \"%.3f\", $(now) - $t0 }") (${K:-$N} objects)"
        client 600 query 0 < write.out > query$n.out 2>&1 || status=1
        grep -h "FAIL\|check(s) failed\|died" query$n.out
    fi
    grep -h "FAIL\|check(s) failed\|^id fresh\|died" read$n.out
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2> /dev/null; then
        rss=$(pdc_server_hwm_kb)
        pdc_close || exit 1
        echo "close_s[$f] $PDC_CLOSE_S (server VmHWM ${rss:-?} kB)"
    else
        echo "the restarted server died (server$n.log)"
        SERVER_PID=
        status=1
    fi
done
INSPECT=${CKPT_INSPECT:-$PREFIX/bin/ckpt-inspect}
if [ "$FORM" != pdc ]; then
    "$INSPECT" verify "$PDC_TMPDIR/pdc-ckpt" > verify.out 2>&1 ||
        { echo "ckpt-inspect verify failed:"; cat verify.out; status=1; }
    echo "verify: $(tail -1 verify.out)"
fi
echo "srv_roundtrip: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
