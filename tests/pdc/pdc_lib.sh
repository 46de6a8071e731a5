# shellcheck shell=bash
# Shared by the `pdc` test scripts, tools/bench/pdc_bench.sh and
# tools/pdc/srv_roundtrip.sh (one copy of this logic): start real
# PDC servers (1 or more ranks under mpiexec), wait for "Server ready" with a
# timeout, run clients with timeouts, close_server, wait for the server's PID
# with a timeout, and kill by PID (never by name) on any failure. Nothing
# here can hang: every wait has a deadline.
#
# Source it, then call pdc_setup PREFIX WORKDIR. PREFIX holds bin/pdc_server.exe,
# bin/close_server and lib/ (build-pdc.sh's install prefix). PDC listens on
# fixed ports (7000 + rank, a client on 8000), so two PDC instances on one
# network stack take each other's clients. pdc_take_port_lock keeps them
# apart: when PDC_CKPT_TEST_NETNS names tests/pdc/netns_run.c's helper
# (ctest sets it when namespaces can be made here), it re-runs the calling
# script in a network namespace of its own; otherwise, when
# PDC_CKPT_PORT_LOCK names a file, it re-runs the script under `flock` on
# it, so scripts of several users wait for each other.

PDC_READY_TIMEOUT=${PDC_READY_TIMEOUT:-120}  # seconds to "Server ready"
PDC_EXIT_TIMEOUT=${PDC_EXIT_TIMEOUT:-60}     # seconds from close_server to exit
PDC_CLIENT_TIMEOUT=${PDC_CLIENT_TIMEOUT:-300} # seconds per client run
PDC_CLOSE_TIMEOUT=${PDC_CLOSE_TIMEOUT:-120}   # seconds for close_server to return
MPIEXEC=${MPIEXEC:-mpiexec}

# pdc_take_port_lock "$0" "$@": re-exec in a network namespace of its own
# (PDC_CKPT_TEST_NETNS) or under flock (PDC_CKPT_PORT_LOCK)
pdc_take_port_lock() {
    [ -z "${PDC_CKPT_NETNS_ENTERED:-}" ] || return 0
    if [ -n "${PDC_CKPT_TEST_NETNS:-}" ]; then
        exec "$PDC_CKPT_TEST_NETNS" bash "$@"
    fi
    if [ -n "${PDC_CKPT_PORT_LOCK:-}" ] && [ -z "${PDC_CKPT_PORT_LOCKED:-}" ]; then
        export PDC_CKPT_PORT_LOCKED=1
        exec flock -w 1800 "$PDC_CKPT_PORT_LOCK" bash "$@"
    fi
}

# pdc_setup PREFIX [WORKDIR]: environment for servers and clients; without
# WORKDIR a fresh temporary one, removed at exit
pdc_setup() {
    # servers and clients run in the work directory: absolute paths
    PDC_PREFIX=$(cd "$1" && pwd) || { echo "FAIL: no PDC prefix $1"; exit 1; }
    PDC_WORK=${2:-}
    PDC_WORK_TMP=
    if [ -z "$PDC_WORK" ]; then
        PDC_WORK=$(mktemp -d "${TMPDIR:-/tmp}/pdc-test.XXXXXX")
        PDC_WORK_TMP=$PDC_WORK
    fi
    local b
    for b in pdc_server.exe close_server; do
        if [ ! -x "$PDC_PREFIX/bin/$b" ]; then
            echo "FAIL: $PDC_PREFIX/bin/$b not found (build PDC with tools/pdc/build-pdc.sh)"
            exit 1
        fi
    done
    mkdir -p "$PDC_WORK"
    export LD_LIBRARY_PATH="$PDC_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PDC_TMPDIR="$PDC_WORK/pdc_tmp" PDC_DATA_LOC="$PDC_WORK"
    # ofi+tcp on 127.0.0.1, and MPICH's UCX off the network (thirdparty README, section 4)
    export HG_TRANSPORT=ofi+tcp UCX_TLS=self,sm
    SERVER_PID=
    SERVER_LOG=
    trap pdc_cleanup EXIT
}

# every descendant PID of $1 (children first listed after their parent)
pdc_descendants() {
    local c
    for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        echo "$c"
        pdc_descendants "$c"
    done
}

# pdc_kill_tree PID SIGNAL: the process and all its descendants
pdc_kill_tree() {
    local pids
    pids="$1 $(pdc_descendants "$1")"
    # shellcheck disable=SC2086
    kill "-$2" $pids 2>/dev/null || true
}

# pdc_cleanup [STATUS]: the EXIT trap (STATUS: the script's, when another
# trap calls it)
pdc_cleanup() {
    local rc=${1:-$?}
    if [ -n "${CLIENT_RUNNING:-}" ] && kill -0 "$CLIENT_RUNNING" 2>/dev/null; then
        pdc_kill_tree "$CLIENT_RUNNING" KILL # a client the script was waiting for
    fi
    if [ -n "${SERVER_PID:-}" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "cleanup: killing server PID $SERVER_PID and its children"
        pdc_kill_tree "$SERVER_PID" KILL
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [ "$rc" -ne 0 ] && [ -n "${SERVER_LOG:-}" ] && [ -f "$SERVER_LOG" ]; then
        echo "---- last lines of $SERVER_LOG"
        tail -n 30 "$SERVER_LOG"
    fi
    # a work directory made by pdc_setup is removed; set PDC_KEEP=1 to keep it
    if [ -n "${PDC_WORK_TMP:-}" ] && [ -z "${PDC_KEEP:-}" ]; then
        rm -rf "$PDC_WORK_TMP"
    elif [ -n "${PDC_WORK_TMP:-}" ]; then
        echo "kept $PDC_WORK_TMP"
    fi
    exit "$rc"
}

# pdc_start NP LOG [restart]: start NP server ranks and wait for "Server ready".
# Sets SERVER_PID (mpiexec's) and PDC_READY_S (seconds from start to ready,
# polled every 10 ms).
pdc_start() {
    local np=$1 log=$2 mode=${3:-}
    SERVER_LOG=$log
    local t0 now
    # Servers listen on 7000 + rank, a client (MPI rank 0) on 8000. Another
    # PDC on this machine that did not take PDC_CKPT_PORT_LOCK would take
    # our clients or refuse them: say so instead of failing obscurely.
    # A process killed just before (a client or server of the previous step)
    # may hold its port for a moment while it exits: wait up to 10 s.
    local port tries
    for port in $(seq 7000 $((7000 + np - 1))) 8000; do
        tries=0
        while [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; do
            if [ "$tries" -ge 100 ]; then
                echo "FAIL: port $port is in use: another PDC server or client runs on this machine"
                ss -Hltnp "sport = :$port" 2>/dev/null
                return 1
            fi
            tries=$((tries + 1))
            sleep 0.1
        done
    done
    # emptied here, not by the background job's redirection, which may run
    # after the first look below and let it find the last run's "Server ready"
    : >"$log"
    t0=$(date +%s.%N)
    (cd "$PDC_WORK" && exec "$MPIEXEC" -n "$np" "$PDC_PREFIX/bin/pdc_server.exe" $mode) \
        >>"$log" 2>&1 &
    SERVER_PID=$!
    while ! grep -q "Server ready" "$log" 2>/dev/null; do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            wait "$SERVER_PID" 2>/dev/null
            echo "FAIL: the server exited (status $?) before it was ready"
            SERVER_PID=
            return 1
        fi
        now=$(date +%s.%N)
        if awk -v a="$t0" -v b="$now" -v t="$PDC_READY_TIMEOUT" 'BEGIN { exit !(b - a > t) }'; then
            echo "FAIL: no \"Server ready\" within ${PDC_READY_TIMEOUT}s"
            return 1
        fi
        sleep 0.01
    done
    now=$(date +%s.%N)
    PDC_READY_S=$(awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.3f", b - a }')
}

# pdc_client CMD...: run a client with a timeout (and a KILL 5 s after it).
# If the server dies meanwhile, the client (which would wait for its answer
# until the timeout) is killed at once and the status is 1. The client
# reads the caller's stdin (`pdc_client CMD < FILE`; without the explicit
# 0<&0 a background job's stdin is /dev/null).
pdc_client() {
    (cd "$PDC_WORK" && exec timeout -k 5 "$PDC_CLIENT_TIMEOUT" "$@") 0<&0 &
    local cpid=$! st=0 t0=$SECONDS dumped=
    CLIENT_RUNNING=$cpid
    while kill -0 "$cpid" 2>/dev/null; do
        # a client about to be timed out is hung: show where every PDC
        # process waits before timeout kills it
        if [ -z "$dumped" ] && [ "$PDC_CLIENT_TIMEOUT" -gt 30 ] &&
            [ $((SECONDS - t0)) -ge $((PDC_CLIENT_TIMEOUT - 10)) ]; then
            dumped=1
            pdc_dump_stacks "$cpid" "$1" >&2
        fi
        if [ -n "${SERVER_PID:-}" ] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
            sleep 0.5 # a client that just finished is not killed for nothing
            if kill -0 "$cpid" 2>/dev/null; then
                echo "FAIL: the server died while a client ran ($1)" >&2
                pdc_kill_tree "$cpid" KILL
                wait "$cpid" 2>/dev/null || true
                CLIENT_RUNNING=
                return 1
            fi
        fi
        sleep 0.05
    done
    wait "$cpid" || st=$?
    CLIENT_RUNNING=
    return "$st"
}

# pdc_dump_stacks CLIENT_PID NAME: the threads' stacks (gdb) of a client
# that seems hung and of the servers, for the test's log
pdc_dump_stacks() {
    local p
    echo "---- $2 (PID $1) has run $((PDC_CLIENT_TIMEOUT - 10)) s: stacks of the client and servers"
    if ! command -v gdb >/dev/null; then
        echo "(no gdb here)"
        return 0
    fi
    for p in $(pdc_descendants "$1") $(pdc_server_pids); do
        echo "-- PID $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        timeout 60 gdb -p "$p" -batch -nx -ex "thread apply all bt" 2>&1 |
            grep -E '^(Thread|#)' | head -n 200
    done
    echo "---- end of stacks"
}

# pdc_wait_exit: wait for the server's PID to exit, at most PDC_EXIT_TIMEOUT s
pdc_wait_exit() {
    local i
    for i in $(seq 1 $((PDC_EXIT_TIMEOUT * 20))); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "FAIL: the server did not exit within ${PDC_EXIT_TIMEOUT}s"
        return 1
    fi
    local st=0
    wait "$SERVER_PID" 2>/dev/null || st=$?
    SERVER_PID=
    return "$st"
}

# pdc_close: close_server (checkpoint), then wait for the server to exit.
# Sets PDC_CLOSE_S: wall seconds from running close_server to the server's exit.
pdc_close() {
    local t0 now st=0
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "FAIL: the server is not running any more (crashed?)"
        return 1
    fi
    t0=$(date +%s.%N)
    PDC_CLIENT_TIMEOUT=$PDC_CLOSE_TIMEOUT pdc_client "$PDC_PREFIX/bin/close_server" \
        >"$PDC_WORK/close_server.out" 2>&1 || st=$?
    if [ "$st" -ne 0 ]; then
        echo "FAIL: close_server exited $st"
        cat "$PDC_WORK/close_server.out"
        return 1
    fi
    pdc_wait_exit || { echo "FAIL: the server's exit status after close_server is not 0"; return 1; }
    now=$(date +%s.%N)
    PDC_CLOSE_S=$(awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.3f", b - a }')
}

# pdc_kill9: SIGKILL every server rank (the pdc_server.exe processes under
# mpiexec) and wait for mpiexec to go
pdc_kill9() {
    local pids p
    pids=$(pdc_descendants "$SERVER_PID")
    for p in $pids; do
        if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "pdc_server.exe" ]; then
            kill -KILL "$p" 2>/dev/null || true
        fi
    done
    local i
    for i in $(seq 1 200); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$SERVER_PID" 2>/dev/null && pdc_kill_tree "$SERVER_PID" KILL
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# pdc_server_pids: PIDs of the running pdc_server.exe ranks
pdc_server_pids() {
    local p
    for p in $(pdc_descendants "$SERVER_PID"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "pdc_server.exe" ] && echo "$p"
    done
}

# pdc_server_hwm_kb: the peak RSS (VmHWM, kB) of the largest server rank
pdc_server_hwm_kb() {
    local p v m=0
    for p in $(pdc_server_pids); do
        v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
        [ "${v:-0}" -gt "$m" ] && m=$v
    done
    echo "$m"
}

# The test scripts' own helpers (tests/pdc/test_pdc_*.sh).

# pdc_test_preload: PDC's processes in Mercury's blocking progress
# (tests/pdc/hg_progress_block.c: the module ctest names in
# PDC_CKPT_TEST_PRELOAD), unless PDC_CKPT_TEST_BUSY_POLL=1
pdc_test_preload() {
    [ "${PDC_CKPT_TEST_BUSY_POLL:-0}" = 1 ] && return 0
    [ -n "${PDC_CKPT_TEST_PRELOAD:-}" ] || return 0
    [ -f "$PDC_CKPT_TEST_PRELOAD" ] ||
        { echo "FAIL: PDC_CKPT_TEST_PRELOAD=$PDC_CKPT_TEST_PRELOAD: no such file"; exit 1; }
    export LD_PRELOAD="$PDC_CKPT_TEST_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}"
}

# pdc_test_init "$0" "$@": the port lock, then pdc_setup PREFIX ($1) with a
# fresh work directory and none of the caller's PDC_CKPT_* settings (each
# test sets its own); sets store (where the servers keep the store)
pdc_test_init() {
    pdc_take_port_lock "$@"
    pdc_setup "$2"
    pdc_test_preload
    unset PDC_CKPT_RESTART PDC_CKPT PDC_CKPT_DIR PDC_CKPT_COMMIT_EVERY PDC_CKPT_COMMIT_MS \
        PDC_CKPT_SYNC PDC_CKPT_CLOSE_RETRY_S PDC_CKPT_FALLBACK_DIR
    store=$PDC_TMPDIR/pdc-ckpt
}

# pdc_need_mode MODE ALLOWED...: exit 2 (usage) unless MODE is one of ALLOWED
pdc_need_mode() {
    local m=$1 a
    shift
    for a in "$@"; do
        [ "$m" = "$a" ] && return 0
    done
    echo "usage: MODE is one of: $*"
    exit 2
}

# pdc_run SHOW OUT CMD ARGS...: pdc_client CMD ARGS with its output in OUT;
# the lines of OUT matching the extended regex SHOW are shown; the client's
# status
pdc_run() {
    local show=$1 out=$2 st=0
    shift 2
    pdc_client "$@" >"$out" 2>&1 || st=$?
    grep -E "$show" "$out" || true
    # the stacks of a hung client (pdc_client) went to OUT with the rest
    [ "$st" -eq 0 ] || sed -n '/^---- .* stacks of the client and servers$/,/^---- end of stacks$/p' "$out"
    return "$st"
}

# pdc_restart NP MODE LOG: pdc_start NP LOG restart, in the restart form
# MODE (rebuild: PDC_CKPT_RESTART=rebuild for this start only; anything
# else: the default, map)
pdc_restart() {
    local st=0
    [ "$2" = rebuild ] && export PDC_CKPT_RESTART=rebuild
    pdc_start "$1" "$3" restart || st=$?
    unset PDC_CKPT_RESTART
    return "$st"
}

# pdc_refused NP LOG PATTERN [restart]: a server start that must be refused:
# pdc_server.exe (NP ranks) exits non-zero by itself (not by the timeout)
# before "Server ready", without PDC's misleading "Error with Mercury init",
# and its LOG matches PATTERN (extended regex); exits the script otherwise.
# Sets PDC_REFUSED_ST (the exit status).
pdc_refused() {
    local np=$1 log=$2 pattern=$3 mode=${4:-} st=0
    (cd "$PDC_WORK" && exec timeout -k 5 "$PDC_READY_TIMEOUT" "$MPIEXEC" -n "$np" \
        "$PDC_PREFIX/bin/pdc_server.exe" $mode) >"$log" 2>&1 || st=$?
    if [ "$st" -eq 0 ] || [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
        cat "$log"
        echo "FAIL: $log: the server exited with status $st (expected a refusal, non-zero)"
        exit 1
    fi
    grep -q "Server ready" "$log" && { cat "$log"; echo "FAIL: $log: \"Server ready\" after a refusal"; exit 1; }
    grep -q "Error with Mercury init" "$log" &&
        { cat "$log"; echo "FAIL: $log: misleading \"Error with Mercury init\" after the refusal"; exit 1; }
    grep -Eq "$pattern" "$log" || { cat "$log"; echo "FAIL: $log: no /$pattern/ in the log"; exit 1; }
    PDC_REFUSED_ST=$st
}

# pdc_close_fails OUT: close_server (output in OUT) and the server's exit
# must both fail (a close that could not persist); sets PDC_CLOSE_ST and
# PDC_EXIT_ST
pdc_close_fails() {
    PDC_CLOSE_ST=0
    PDC_CLIENT_TIMEOUT=$PDC_CLOSE_TIMEOUT pdc_client "$PDC_PREFIX/bin/close_server" >"$1" 2>&1 ||
        PDC_CLOSE_ST=$?
    [ "$PDC_CLOSE_ST" -ne 0 ] || { echo "FAIL: close_server exited 0 although the store could not persist"; exit 1; }
    PDC_EXIT_ST=0
    pdc_wait_exit || PDC_EXIT_ST=$?
    [ "$PDC_EXIT_ST" -ne 0 ] || { echo "FAIL: the server exited 0 although the store could not persist"; exit 1; }
}
