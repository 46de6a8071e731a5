#!/usr/bin/env bash
# PDC's real server, one binary, two checkpoint methods: PDC's own fwrite
# checkpoint (PDC_CKPT=off) against the pdc-ckpt store (the default), with the
# same client workload (pdc-ckpt-client bench-write: N objects x T PDC_UINT64
# kvtags, one put RPC per kvtag).
# Per run: fresh server(s) (their start to "Server ready" is the floor of a
# restart); the writer; the servers' peak RSS (VmHWM, the
# largest rank) before close; close_server to the exit of every rank;
# the bytes the checkpoint left (metadata_checkpoint.* or the store, and
# everything under PDC_TMPDIR); restart to "Server ready"; the first lookup
# after it (PDCobj_open + PDCobj_get_tag of o0/t0, after PDCinit); close.
# Prints one line per run, then min/median/max per configuration as a
# Markdown table (docs/BENCHMARKS.md §9, "PDC's real server").
#
# usage: tools/bench/pdc_bench.sh PREFIX CLIENT [--runs R] [--sizes "NxT ..."]
#        [--np "1 2"] [--raw FILE]
#        tools/bench/pdc_bench.sh dart PREFIX DART_CLIENT ...   (the first DART
#        search after a map restart against warm: pdc_dart_bench.sh)
#        tools/bench/pdc_bench.sh --table RAW...   (the table of earlier runs'
#        --raw files, one table over all of them)
#   PREFIX: tools/pdc/build-pdc.sh's install prefix (bin/pdc_server.exe)
#   CLIENT: build/bin/pdc-ckpt-client (built by the `pdc` tests)
# Defaults: --runs 3 --sizes "1000x10 10000x100 100000x10" --np "1 2".
#
# usage: tools/bench/pdc_bench.sh PREFIX CLIENT --query QCLIENT [--runs R]
#        [--sizes "20000x4 10000x100"] [--np 1] [--raw FILE]
#   the first kvtag query after a map-form restart against the same query
#   on the warm server. Per run, with the store: fresh server(s), bench-write
#   N x T; on the warm server a new client (QCLIENT: build/bin/pdc-ckpt-query)
#   times the query t1 == value of o7's t1 (PDC_UINT64, one id) 5 times
#   (its first, and the median of the other 4); close_server; restart (map);
#   a new client times the same query the same way, first thing after the
#   restart. Prints one line per run and the medians per size (the ratio is
#   first after restart / first warm; each first includes the client's first
#   RPC to the server, both alike). Defaults with --query: --sizes
#   "20000x4 10000x100" --np 1.
#
# usage: tools/bench/pdc_bench.sh PREFIX CLIENT --cost [--runs R]
#        [--sizes "10000x100"] [--np 1] [--raw FILE] [--perf]
#   the hooks' cost on PDC's write path (docs/BENCHMARKS.md, "Cost on PDC's
#   write path"). Per run, PDC_CKPT=off and the store alternate (the order
#   swaps every run): fresh server(s), bench-write N x T, close. Over the
#   write phase (from "Server ready" to the client's exit) it reads the CPU
#   time (utime + stime, /proc) of the servers' RPC thread (the main thread:
#   PDC's default build runs every handler there) and of the whole process,
#   and divides by the mutations (N creates + N x T kvtag puts + 1
#   container). PDC's server polls for RPCs, so these include the polling:
#   their on - off difference is the hooks' cost only as far as the polling
#   is alike. With --perf, first a PDC_CKPT=off run and a store run each
#   sample the RPC thread over the write phase (perf record, task-clock, a
#   sample per ms of its CPU, DWARF call graphs of 16 KiB of stack: with 8 the
#   stacks of inline commits end before the glue) and print its CPU time per
#   mutation in the write RPC handlers (stacks through metadata_add_kvtag_cb
#   or gen_obj_id_cb), inside the hooks (through a PDC_Server_ckpt_* call of the
#   glue) and inside inline commits: the handlers' time without the polling.
#   Defaults with --cost: --sizes 10000x100 --np 1 --runs 5 (--runs 0
#   --perf: the two perf runs only).
# usage: tools/bench/pdc_bench.sh PREFIX CLIENT --elastic [--runs R]
#        [--sizes "10000x100"] [--pairs "2:1 1:2"] [--raw FILE]
#   restart to "Server ready" on M servers of a store written by N, against
#   the same-count rebuild restart (docs/BENCHMARKS.md, "Elastic restart").
#   Once per size: a fresh server writes N x T (bench-write) and closes;
#   that 1-server store is the source of every N:M pair with N = 1, and a
#   map restart of it on N servers (re-homed 1 -> N), closed, the source for
#   N > 1 (PDC's busy-polling servers and client put a 2-server write phase
#   of 10K x 100 at ~1 h on 2 cores). Then R runs; in each, every
#   configuration once, the order rotating from run to run: the rebuild
#   restart of each source on its own count (the baselines, and the map
#   restart for reference), and each N:M pair in the map and the rebuild
#   form. Each restart starts from a fresh copy of its source (so every
#   elastic one re-homes), is timed from mpiexec to "Server ready" (as the
#   other sections), must log the re-homing (rank 0's "re-homed the store
#   of N servers onto M" line, whose seconds it records), serves the first
#   and the last object's first and last kvtag (bench-lookup), and after
#   close_server the store (ckpt-inspect stat --json, next to CLIENT) must
#   hold M ranks of M with the source's objects, kvtags and containers.
#   Prints one line per restart, then the medians and the ratios to the
#   rebuild restart on N and on M. Defaults with --elastic: --sizes
#   10000x100 --pairs "2:1 1:2" --runs 5.
# Only one PDC instance can run per machine: set PDC_CKPT_PORT_LOCK=FILE to
# wait for others that use the same lock file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# print_table RAW...: min / median / max per configuration, as Markdown
print_table() {
    python3 - "$@" <<'EOF'
import csv, statistics, sys
rows = [r for f in sys.argv[1:] for r in csv.DictReader(open(f), delimiter="\t")]
metrics = [("put_us_median", "put latency median (us)"), ("put_us_mean", "put latency mean (us)"),
           ("write_s", "client write phase (s)"),
           ("rss_mib", "server peak RSS (MiB)"), ("close_s", "close_server to exit (s)"),
           ("ckpt_bytes", "checkpoint bytes"), ("restart_s", "restart to ready (s)"),
           ("lookup_s", "first lookup (s)"), ("start_s", "fresh start to ready (s)")]
def mmm(v):
    v = sorted(v)
    f = (lambda x: f"{x:.0f}") if max(v) >= 1000 else (lambda x: f"{x:.3g}")
    return f"{f(v[0])} / {f(statistics.median(v))} / {f(v[-1])}"
keys = []
for r in rows:
    k = (r["size"], r["np"])
    if k not in keys:
        keys.append(k)
print("\n| size | servers | metric | PDC fwrite (min / median / max) | pdc-ckpt store (min / median / max) | median ratio fwrite/store |")
print("|---|---|---|---|---|---|")
for size, np in keys:
    for m, label in metrics:
        vals = {meth: [float(r[m]) for r in rows if r["size"] == size and r["np"] == np and r["method"] == meth
                       and r.get(m)]
                for meth in ("fwrite", "store")}
        if not vals["fwrite"] or not vals["store"]:
            continue
        ms = statistics.median(vals["store"])
        ratio = f"{statistics.median(vals['fwrite']) / ms:.2f}" if ms > 0 else "-"
        print(f"| {size} | {np} | {label} | {mmm(vals['fwrite'])} | {mmm(vals['store'])} | {ratio} |")
EOF
}

# each_run FN ARGS...: FN ARGS... SIZE NP RUN for every size, server count
# and run
each_run() {
    local size np run
    for size in $sizes; do
        for np in $nps; do
            for run in $(seq 1 "$runs"); do
                "$@" "$size" "$np" "$run"
            done
        done
    done
}

# raw_table RAW: the python3 code on stdin prints a Markdown table of RAW's
# rows: it finds them grouped by size and server count in `groups` ((size,
# np, rows) in the order first seen), and prints the head with head(COLUMN...)
raw_table() {
    python3 -c 'import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
groups = [(k[0], k[1], [r for r in rows if (r["size"], r["np"]) == k])
          for k in dict.fromkeys((r["size"], r["np"]) for r in rows)]
def head(*cols):
    print("\n| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
exec(sys.stdin.read())' "$1"
}

# DART (IDIOMS): first search after a map restart against warm
if [ "${1:-}" = dart ]; then
    shift
    exec bash "$here/pdc_dart_bench.sh" "$@"
fi
if [ "${1:-}" = --table ]; then
    shift
    [ $# -gt 0 ] || { echo "usage: pdc_bench.sh --table RAW..." >&2; exit 2; }
    print_table "$@"
    exit 0
fi
# longer than the tests' defaults (pdc_lib.sh keeps values already set):
# with 2 servers a put takes milliseconds, and 20K x 4 is 100K RPCs
PDC_CLIENT_TIMEOUT=${PDC_CLIENT_TIMEOUT:-3600}
PDC_EXIT_TIMEOUT=${PDC_EXIT_TIMEOUT:-600}
PDC_READY_TIMEOUT=${PDC_READY_TIMEOUT:-600}
# shellcheck source=../../tests/pdc/pdc_lib.sh
. "$here/../../tests/pdc/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"

prefix=${1:?usage: pdc_bench.sh PREFIX CLIENT [--runs R] [--sizes \"NxT ...\"] [--np \"1 2\"] [--raw FILE]}
client=${2:?usage: pdc_bench.sh PREFIX CLIENT ...}
client=$(realpath "$client")
shift 2
runs='' sizes='' nps='' raw='' qclient='' cost='' perf='' elastic='' pairs=''
while [ $# -gt 0 ]; do
    case "$1" in
    --cost) cost=1; shift; continue ;;
    --elastic) elastic=1; shift; continue ;;
    --pairs) pairs=$2 ;;
    --perf) perf=1; shift; continue ;;
    --runs) runs=$2 ;;
    --sizes) sizes=$2 ;;
    --np) nps=$2 ;;
    --raw) raw=$2 ;;
    --query) qclient=$(realpath "$2") ;;
    *) echo "pdc_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
if [ -n "$cost" ]; then
    sizes=${sizes:-"10000x100"} nps=${nps:-1} runs=${runs:-5}
elif [ -n "$elastic" ]; then
    sizes=${sizes:-"10000x100"} pairs=${pairs:-"2:1 1:2"} runs=${runs:-5}
elif [ -n "$qclient" ]; then
    sizes=${sizes:-"20000x4 10000x100"} nps=${nps:-1}
else
    sizes=${sizes:-"1000x10 10000x100 100000x10"} nps=${nps:-"1 2"}
fi
runs=${runs:-3}
pdc_setup "$prefix"
unset PDC_CKPT_RESTART PDC_CKPT_DIR PDC_CKPT_SYNC PDC_CKPT
[ -n "$raw" ] || raw=$PWD/pdc_bench-$(date +%Y%m%d-%H%M%S).tsv

# ---- --query: the first kvtag query after a map restart against warm ----
query_run() { # size np run
    local size=$1 np=$2 run=$3 n t v wq cq
    n=${size%x*} t=${size#*x}
    v=$((7 * 1000003 + 1)) # bench-write's value of o7's t1
    rm -rf "$PDC_WORK/pdc_tmp" "$PDC_WORK/pdc_data"
    pdc_start "$np" "$PDC_WORK/server.log"
    pdc_client "$client" bench-write --objects "$n" --tags "$t" >"$PDC_WORK/write.out" 2>&1 ||
        { echo "FAIL: bench-write"; tail "$PDC_WORK/write.out"; exit 1; }
    pdc_client "$qclient" bench --name t1 --value "$v" --repeat 5 >"$PDC_WORK/warm.out" 2>&1 ||
        { echo "FAIL: query on the warm server"; tail "$PDC_WORK/warm.out"; exit 1; }
    pdc_close
    PDC_CKPT_RESTART=map pdc_start "$np" "$PDC_WORK/server-restart.log" restart
    pdc_client "$qclient" bench --name t1 --value "$v" --repeat 5 >"$PDC_WORK/cold.out" 2>&1 ||
        { echo "FAIL: query after the restart"; tail "$PDC_WORK/cold.out"; exit 1; }
    pdc_close
    wq=$(grep '^bench-query:' "$PDC_WORK/warm.out")
    cq=$(grep '^bench-query:' "$PDC_WORK/cold.out")
    if [ "${wq%% first*}" != "bench-query: n=1" ] || [ "${cq%% first*}" != "bench-query: n=1" ]; then
        echo "FAIL: the query answered [$wq] warm and [$cq] after the restart, expected n=1"
        exit 1
    fi
    local f='s/.*first_ms=\([0-9.]*\) rest_median_ms=\([0-9.]*\).*/\1\t\2/p'
    printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$size" "$np" "$run" "$(sed -n "$f" <<<"$wq")" \
        "$(sed -n "$f" <<<"$cq")" "$(grep -o 'tag index, [0-9.]* ms' "$PDC_WORK/server-restart.log" |
        head -n 1 | tr -dc '0-9.')" | tee -a "$raw"
}
if [ -n "$qclient" ]; then
    printf "size\tnp\trun\twarm_first_ms\twarm_rest_ms\tmap_first_ms\tmap_rest_ms\tserver_index_ms\n" >"$raw"
    echo "PDC query bench: sizes [$sizes], servers [$nps], $runs runs, prefix $prefix"
    each_run query_run
    echo "raw results: $raw"
    raw_table "$raw" <<'EOF2'
head("size", "servers", "runs", "warm: first / rest (ms)", "after map restart: first / rest (ms)",
     "server, tag index (ms)", "first after restart / first warm", "target 2 x warm + 5 ms")
for size, np, rs in groups:
    med = lambda k: statistics.median([float(r[k]) for r in rs if r[k]] or [float("nan")])
    wf, wr, mf, mr = med("warm_first_ms"), med("warm_rest_ms"), med("map_first_ms"), med("map_rest_ms")
    # no "tag index" line: a server that faults everything in instead
    si = med("server_index_ms")
    ok = "met" if mf <= 2 * wf + 5 else "missed"
    print(f"| {size} | {np} | {len(rs)} | {wf:.2f} / {wr:.2f} | {mf:.2f} / {mr:.2f} | {si:.2f} | {mf / wf:.2f} | {ok} |")
EOF2
    exit 0
fi

# ---- --cost: the hooks' CPU time per mutation on the RPC thread ----
# server_ticks: "RPC-thread process" utime + stime (clock ticks), summed
# over the server ranks (the RPC thread is the main thread, tid = pid)
server_ticks() {
    local p m=0 a=0 v
    for p in $(pdc_server_pids); do
        v=$(awk '{ print $14 + $15 }' "/proc/$p/task/$p/stat") && m=$((m + v))
        v=$(awk '{ print $14 + $15 }' "/proc/$p/stat") && a=$((a + v))
    done
    echo "$m $a"
}
cost_run() { # size np method run
    local size=$1 np=$2 method=$3 run=$4 n t hz m0 a0 m1 a1 w tot muts
    n=${size%x*} t=${size#*x}
    muts=$((n * (t + 1) + 1))
    hz=$(getconf CLK_TCK)
    rm -rf "$PDC_WORK/pdc_tmp" "$PDC_WORK/pdc_data"
    if [ "$method" = off ]; then export PDC_CKPT=off; else unset PDC_CKPT; fi
    pdc_start "$np" "$PDC_WORK/server.log"
    read -r m0 a0 <<<"$(server_ticks)"
    pdc_client "$client" bench-write --objects "$n" --tags "$t" >"$PDC_WORK/write.out" 2>&1 ||
        { echo "FAIL: bench-write"; tail "$PDC_WORK/write.out"; exit 1; }
    read -r m1 a1 <<<"$(server_ticks)"
    pdc_close
    w=$(grep '^bench-write:' "$PDC_WORK/write.out")
    tot=$(sed -n 's/.*total_s=\([0-9.]*\).*/\1/p' <<<"$w")
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$size" "$np" "$method" "$run" "$muts" "$tot" \
        "$(awk -v d=$((m1 - m0)) -v hz="$hz" -v n="$muts" 'BEGIN { printf "%.0f", d / hz * 1e9 / n }')" \
        "$(awk -v d=$((a1 - a0)) -v hz="$hz" -v n="$muts" 'BEGIN { printf "%.0f", d / hz * 1e9 / n }')" |
        tee -a "$raw"
}
# cost_perf SIZE METHOD: one run, its RPC thread sampled over the whole
# write phase (a sample per ms of its CPU time)
cost_perf() {
    local size=$1 method=$2 n t tid muts hz m0 m1 perf_pid
    n=${size%x*} t=${size#*x}
    muts=$((n * (t + 1) + 1))
    hz=$(getconf CLK_TCK)
    rm -rf "$PDC_WORK/pdc_tmp" "$PDC_WORK/pdc_data"
    if [ "$method" = off ]; then export PDC_CKPT=off; else unset PDC_CKPT; fi
    pdc_start 1 "$PDC_WORK/server.log"
    tid=$(pdc_server_pids | head -n 1)
    perf record -q -e task-clock -c 1000000 --call-graph dwarf,16384 -t "$tid" \
        -o "$PDC_WORK/perf.data" >/dev/null 2>&1 &
    perf_pid=$!
    sleep 1 # attached
    m0=$(awk '{ print $14 + $15 }' "/proc/$tid/task/$tid/stat")
    pdc_client "$client" bench-write --objects "$n" --tags "$t" >"$PDC_WORK/write.out" 2>&1 ||
        { echo "FAIL: bench-write"; tail "$PDC_WORK/write.out"; kill -INT "$perf_pid"; exit 1; }
    m1=$(awk '{ print $14 + $15 }' "/proc/$tid/task/$tid/stat")
    kill -INT "$perf_pid"
    wait "$perf_pid" || true
    pdc_close
    local per
    per=$(awk -v d=$((m1 - m0)) -v hz="$hz" -v n="$muts" 'BEGIN { printf "%.0f", d / hz * 1e9 / n }')
    perf script --no-inline -F ip,sym -i "$PDC_WORK/perf.data" 2>/dev/null | python3 -c '
import sys
per, muts = float(sys.argv[1]), int(sys.argv[2])
ns = 1e6 / muts # one sample: 1 ms of CPU of the thread, per mutation
n = hooks = commit = handler = 0
stack = []
leaf = {}
def flush():
    global n, hooks, commit, handler
    if not stack:
        return
    n += 1
    if "metadata_add_kvtag_cb" in stack or "gen_obj_id_cb" in stack:
        handler += 1
    if any(f.startswith("PDC_Server_ckpt_") for f in stack):
        hooks += 1
        leaf[stack[0]] = leaf.get(stack[0], 0) + 1
        if "ckpt_commit_locked" in stack:
            commit += 1
for line in sys.stdin:
    line = line.strip()
    if not line:
        flush()
        stack = []
    else:
        f = line.split()
        stack.append(f[1] if len(f) > 1 else "")
flush()
if n == 0:
    sys.exit("no samples")
print(f"perf: {n} samples of the RPC thread (1 ms of CPU each) over the write phase; RPC thread "
      f"{per:.0f} ns CPU per mutation (/proc), of which in the write RPC handlers (stacks through "
      f"metadata_add_kvtag_cb or gen_obj_id_cb) {handler * ns:.0f} ns, inside the hooks (through "
      f"PDC_Server_ckpt_*) {hooks * ns:.0f} ns, inline commits {commit * ns:.0f} ns")
top = sorted(leaf.items(), key=lambda x: -x[1])[:10]
if hooks:
    print("perf: where the hooks spend it (leaf functions, share of the hooks samples): " +
          ", ".join(f"{k} {100 * v / hooks:.0f}%" for k, v in top))
' "$per" "$muts"
}
# cost_pair SIZE NP RUN: the two methods, the order swapping every run
cost_pair() {
    local order="off store" method
    [ $(($3 % 2)) -eq 1 ] || order="store off"
    for method in $order; do
        cost_run "$1" "$2" "$method" "$3"
    done
}
if [ -n "$cost" ]; then
    printf "size\tnp\tmethod\trun\tmutations\twrite_s\trpc_thread_ns\tprocess_ns\n" >"$raw"
    echo "PDC hooks cost bench: sizes [$sizes], servers [$nps], $runs runs, prefix $prefix"
    if [ -n "$perf" ]; then
        for size in $sizes; do
            for method in off store; do
                echo "perf run, $size, 1 server, $method:"
                cost_perf "$size" "$method"
            done
        done
    fi
    each_run cost_pair
    echo "raw results: $raw"
    raw_table "$raw" <<'EOF3'
head("size", "servers", "runs", "client write phase: off / store (s)",
     "ratio store/off (of the medians; median of each run's)",
     "RPC thread CPU per mutation: off / store (ns)", "difference (ns)",
     "server process CPU per mutation: off / store (ns)")
for size, np, rs in groups:
    med = lambda m, k: statistics.median([float(r[k]) for r in rs if r["method"] == m])
    w0, w1 = med("off", "write_s"), med("store", "write_s")
    w = {(r["method"], r["run"]): float(r["write_s"]) for r in rs}
    pair = statistics.median([w["store", run] / w["off", run] for m, run in w if m == "off"])
    t0, t1 = med("off", "rpc_thread_ns"), med("store", "rpc_thread_ns")
    p0, p1 = med("off", "process_ns"), med("store", "process_ns")
    nr = len([r for r in rs if r["method"] == "off"])
    print(f"| {size} | {np} | {nr} | {w0:.2f} / {w1:.2f} | {w1 / w0:.3f}; {pair:.3f} | {t0:.0f} / {t1:.0f} | {t1 - t0:.0f} | {p0:.0f} / {p1:.0f} |")
EOF3
    exit 0
fi

# ---- --elastic: restart to ready on M servers of a store of N ----
# el_stat ROOT: "ranks nranks_ok objs kvtags conts" of the store (closed)
el_stat() {
    "$inspect" stat "$1" --json | python3 -c 'import json, sys
j = json.load(sys.stdin)
t = j["total"]
d = t["databases"]
ok = all(r["nranks"] == t["ranks"] for r in j["ranks"])
print(t["ranks"], int(ok), d["obj"]["entries"], d["kvtag"]["entries"], d["cont"]["entries"])'
}
# el_source SIZE N: the closed N-server store of SIZE in $PDC_WORK/src-SIZE-N
# (a copy of PDC_TMPDIR), and its counts in $PDC_WORK/src-SIZE-N.stat
el_source() {
    local size=$1 np=$2 n t src=$PDC_WORK/src-$1-$2
    n=${size%x*} t=${size#*x}
    [ -d "$src" ] && return 0
    rm -rf "$PDC_TMPDIR" "$PDC_WORK/pdc_data"
    if [ "$np" -eq 1 ]; then
        pdc_start 1 "$PDC_WORK/server.log"
        pdc_client "$client" bench-write --objects "$n" --tags "$t" >"$PDC_WORK/write.out" 2>&1 ||
            { echo "FAIL: bench-write"; tail "$PDC_WORK/write.out"; exit 1; }
        pdc_close
    else
        el_source "$size" 1
        cp -a "$PDC_WORK/src-$size-1" "$PDC_TMPDIR"
        pdc_start "$np" "$PDC_WORK/server.log" restart
        pdc_close
    fi
    cp -a "$PDC_TMPDIR" "$src"
    local st r ok o k c
    st=$(el_stat "$src/pdc-ckpt")
    read -r r ok o k c <<<"$st"
    if [ "$r" != "$np" ] || [ "$ok" != 1 ] || [ "$o" != "$n" ] || [ "$k" != $((n * t)) ] || [ "$c" != 1 ]; then
        echo "FAIL: the $np-server source store of $size holds [ranks objs kvtags conts] [$r $o $k $c]"
        exit 1
    fi
    echo "$st" >"$src.stat"
    echo "source: $size on $np server(s): $(du -sb "$src/pdc-ckpt" | cut -f1) bytes"
}
# el_restart SIZE FROM TO FORM RUN: one restart of a fresh copy of the
# FROM-server store on TO servers in FORM (map or rebuild), checked
el_restart() {
    local size=$1 from=$2 to=$3 form=$4 run=$5 n t src log=$PDC_WORK/server-restart.log
    n=${size%x*} t=${size#*x}
    src=$PDC_WORK/src-$size-$from
    rm -rf "$PDC_TMPDIR" "$PDC_WORK/pdc_data"
    cp -a "$src" "$PDC_TMPDIR"
    sync -f "$PDC_TMPDIR" 2>/dev/null || true
    if [ "$form" = rebuild ]; then export PDC_CKPT_RESTART=rebuild; else unset PDC_CKPT_RESTART; fi
    pdc_start "$to" "$log" restart
    unset PDC_CKPT_RESTART
    local ready=$PDC_READY_S rh=''
    rh=$(sed -n 's/.*pdc-ckpt: re-homed the store of \([0-9]*\) servers onto \([0-9]*\) in \([0-9.]*\) s:.*/\1 \2 \3/p' "$log")
    if [ "$from" != "$to" ] && [ "${rh% *}" != "$from $to" ]; then
        echo "FAIL: $from -> $to ($form): no re-homing logged [$rh]"; exit 1
    fi
    if [ "$from" = "$to" ] && [ -n "$rh" ]; then
        echo "FAIL: $from -> $to ($form): a same-count restart re-homed [$rh]"; exit 1
    fi
    local o
    for o in "o0 t0" "o$((n - 1)) t$((t - 1))"; do
        # shellcheck disable=SC2086
        pdc_client "$client" bench-lookup --name ${o% *} --tag ${o#* } >"$PDC_WORK/lookup.out" 2>&1 ||
            { echo "FAIL: $from -> $to ($form): bench-lookup $o"; tail "$PDC_WORK/lookup.out"; exit 1; }
    done
    pdc_close
    local st
    st=$(el_stat "$PDC_TMPDIR/pdc-ckpt")
    if [ "$st" != "$to 1 $(cut -d' ' -f3- "$src.stat")" ]; then
        echo "FAIL: $from -> $to ($form): the store holds [ranks ok objs kvtags conts] [$st]," \
            "its source [$(cat "$src.stat")]"
        exit 1
    fi
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$size" "$from" "$to" "$form" "$run" "$ready" \
        "${rh##* }" | tee -a "$raw"
}
if [ -n "$elastic" ]; then
    inspect=$(dirname "$client")/ckpt-inspect
    [ -x "$inspect" ] || { echo "FAIL: $inspect not found (the build's ckpt-inspect)"; exit 1; }
    printf "size\tfrom\tto\tform\trun\tready_s\trehome_s\n" >"$raw"
    echo "PDC elastic restart bench: sizes [$sizes], N:M [$pairs], $runs runs, prefix $prefix"
    for size in $sizes; do
        confs=() counts=()
        for p in $pairs; do
            for c in "${p%:*}" "${p#*:}"; do
                [[ " ${counts[*]} " == *" $c "* ]] || counts+=("$c")
            done
        done
        for c in "${counts[@]}"; do
            el_source "$size" "$c"
            confs+=("$c $c rebuild" "$c $c map")
        done
        for p in $pairs; do
            confs+=("${p%:*} ${p#*:} map" "${p%:*} ${p#*:} rebuild")
        done
        for run in $(seq 1 "$runs"); do
            k=${#confs[@]}
            for i in $(seq 0 $((k - 1))); do
                # shellcheck disable=SC2086
                el_restart "$size" ${confs[$(((i + run - 1) % k))]} "$run"
            done
        done
    done
    echo "raw results: $raw"
    python3 - "$raw" <<'EOF4'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
def med(size, f, t, form, key="ready_s"):
    v = [float(r[key]) for r in rows if (r["size"], r["from"], r["to"], r["form"]) == (size, f, t, form)]
    return statistics.median(v) if v else float("nan"), v
def runs_ratio(size, a, b):
    # the median of each run's ratio a / b
    ra = {r["run"]: float(r["ready_s"]) for r in rows if (r["size"], r["from"], r["to"], r["form"]) == (size,) + a}
    rb = {r["run"]: float(r["ready_s"]) for r in rows if (r["size"], r["from"], r["to"], r["form"]) == (size,) + b}
    v = [ra[k] / rb[k] for k in ra if k in rb]
    return statistics.median(v) if v else float("nan")
print("\n| size | restart | runs | ready, median (min..max) s | re-homing (rank 0's log), median s | / rebuild on N (median; of each run's) | / rebuild on M | target 2x rebuild on N |")
print("|---|---|---|---|---|---|---|---|")
for size in dict.fromkeys(r["size"] for r in rows):
    for f, t, form in dict.fromkeys((r["from"], r["to"], r["form"]) for r in rows if r["size"] == size):
        m, v = med(size, f, t, form)
        rh = [float(r["rehome_s"]) for r in rows if (r["size"], r["from"], r["to"], r["form"]) == (size, f, t, form) and r["rehome_s"]]
        rhs = f"{statistics.median(rh):.3f}" if rh else "-"
        bn, _ = med(size, f, f, "rebuild")
        bm, _ = med(size, t, t, "rebuild")
        rn = f"{m / bn:.2f}; {runs_ratio(size, (f, t, form), (f, f, 'rebuild')):.2f}"
        rm = f"{m / bm:.2f}" if bm == bm else "-"
        ok = "-" if f == t else ("met" if m <= 2 * bn else "missed")
        print(f"| {size} | {f} -> {t} {form} | {len(v)} | {m:.3f} ({min(v):.3f}..{max(v):.3f}) | {rhs} | {rn} | {rm} | {ok} |")
EOF4
    exit 0
fi

printf "size\tnp\tmethod\trun\tput_us_median\tput_us_mean\twrite_s\trss_mib\tclose_s\tckpt_bytes\ttmpdir_bytes\trestart_s\tlookup_s\tstart_s\n" >"$raw"

one_run() { # size np method run
    local size=$1 np=$2 method=$3 run=$4 n t
    n=${size%x*} t=${size#*x}
    rm -rf "$PDC_WORK/pdc_tmp" "$PDC_WORK/pdc_data"
    if [ "$method" = fwrite ]; then export PDC_CKPT=off; else unset PDC_CKPT; fi
    pdc_start "$np" "$PDC_WORK/server.log"
    local start=$PDC_READY_S
    pdc_client "$client" bench-write --objects "$n" --tags "$t" >"$PDC_WORK/write.out" 2>&1 ||
        { echo "FAIL: bench-write"; tail "$PDC_WORK/write.out"; exit 1; }
    local w rss
    w=$(grep '^bench-write:' "$PDC_WORK/write.out")
    rss=$(awk -v k="$(pdc_server_hwm_kb)" 'BEGIN { printf "%.1f", k / 1024 }')
    pdc_close
    local ckpt tmpb
    if [ "$method" = fwrite ]; then
        ckpt=$(cat "$PDC_TMPDIR"/*/metadata_checkpoint.* 2>/dev/null | wc -c)
    else
        ckpt=$(du -sb "$PDC_TMPDIR/pdc-ckpt" | cut -f1)
    fi
    tmpb=$(du -sb "$PDC_TMPDIR" | cut -f1)
    pdc_start "$np" "$PDC_WORK/server-restart.log" restart
    local l
    pdc_client "$client" bench-lookup --name o0 --tag t0 >"$PDC_WORK/lookup.out" 2>&1 ||
        { echo "FAIL: bench-lookup after restart"; tail "$PDC_WORK/lookup.out"; exit 1; }
    l=$(sed -n 's/^bench-lookup: .* lookup_s=\([0-9.]*\)$/\1/p' "$PDC_WORK/lookup.out")
    local ready=$PDC_READY_S
    pdc_close
    local med mean tot
    med=$(sed -n 's/.*put_us_median=\([0-9.]*\).*/\1/p' <<<"$w")
    mean=$(sed -n 's/.*put_us_mean=\([0-9.]*\).*/\1/p' <<<"$w")
    tot=$(sed -n 's/.*total_s=\([0-9.]*\).*/\1/p' <<<"$w")
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$size" "$np" "$method" "$run" \
        "$med" "$mean" "$tot" "$rss" "$PDC_CLOSE_S" "$ckpt" "$tmpb" "$ready" "$l" "$start" | tee -a "$raw"
}

echo "PDC bench: sizes [$sizes], servers [$nps], $runs runs, prefix $prefix"
# the two methods alternate inside each repetition, so drift in the
# machine's load hits both alike
both_methods() { # size np run
    local method
    for method in fwrite store; do
        one_run "$1" "$2" "$method" "$3"
    done
}
each_run both_methods
echo "raw results: $raw"
print_table "$raw"
