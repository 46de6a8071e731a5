#!/usr/bin/env bash
# The first DART (IDIOMS) search after a map-form restart of PDC's real
# server, against the same search on the warm server (run as
# `tools/bench/pdc_bench.sh dart ...`, or directly).
# Per record count N and run: a fresh server; `pdc-ckpt-dart insert` of
# records 0..N-1 (string key = value "dk<k>q", and an integer key "dkint"
# unless --strings-only); then each query Q is timed by a new client
# process (`pdc-ckpt-dart time`: its first search, then --reps more) on the
# warm server; close_server; `pdc_server.exe restart` (map form, the
# default), and the same clients again, in the same order, so each query's
# first search after the restart is the first DART request of a fresh
# client, as the warm one was. Also: restart to "Server ready" and the
# servers' own "DART index: E entries from the store in T ms" lines.
# Prints one line per run and query, then medians per N and query.
#
# usage: tools/bench/pdc_dart_bench.sh PREFIX DART_CLIENT [--records "5000 100000"]
#        [--runs R] [--np NP] [--reps R] [--strings-only] [--raw FILE]
#   DART_CLIENT: build/bin/pdc-ckpt-dart (built by the `pdc` tests)
# Set PDC_CKPT_PORT_LOCK=FILE to wait for other users of PDC's ports.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# pdc_lib.sh sets its own defaults: keep the caller's
timeouts="${PDC_CLIENT_TIMEOUT:-7200} ${PDC_EXIT_TIMEOUT:-600} ${PDC_READY_TIMEOUT:-600}"
# shellcheck source=../../tests/pdc/pdc_lib.sh
. "$here/../../tests/pdc/pdc_lib.sh"
pdc_take_port_lock "$0" "$@"

usage="usage: pdc_dart_bench.sh PREFIX DART_CLIENT [--records \"N ...\"] [--runs R] [--np NP] [--reps R] [--strings-only] [--raw FILE]"
prefix=${1:?$usage}
client=$(realpath "${2:?$usage}")
shift 2
records="5000 100000" runs=3 np=1 reps=5 so= raw=
while [ $# -gt 0 ]; do
    case "$1" in
    --records) records=$2 ;;
    --runs) runs=$2 ;;
    --np) np=$2 ;;
    --reps) reps=$2 ;;
    --strings-only) so=--strings-only; shift; continue ;;
    --raw) raw=$2 ;;
    *) echo "$usage" >&2; exit 2 ;;
    esac
    shift 2
done
read -r PDC_CLIENT_TIMEOUT PDC_EXIT_TIMEOUT PDC_READY_TIMEOUT <<<"$timeouts"
pdc_setup "$prefix"
unset PDC_CKPT_RESTART PDC_CKPT_DIR PDC_CKPT_SYNC PDC_CKPT
[ -n "$raw" ] || raw=$PWD/pdc_dart_bench-$(date +%Y%m%d-%H%M%S).tsv
printf "records\tnp\trun\tquery\twarm_first_ms\twarm_median_ms\trestart_first_ms\trestart_median_ms\tanswers\trestart_s\tinsert_s\n" >"$raw"

queries() { # the queries of N records
    local n=$1
    printf '%s\n' "$(printf 'dk%06dq="dk%06dq"' $((n / 2)) $((n / 2)))" 'dk0000*="dk0000*"' '*5q="*5q"'
    [ -n "$so" ] || printf '%s\n' "dkint=$((n / 3))" "dkint=20|~|60"
}
time_query() { # time_query Q OUT
    pdc_client "$client" time --query "$1" --reps "$reps" >"$2" 2>&1 ||
        { echo "FAIL: DART search $1"; tail "$2"; exit 1; }
    grep '^first_ms=' "$2"
}

echo "PDC DART bench: records [$records], $np server(s), $runs runs, $reps warm repetitions"
for n in $records; do
    for run in $(seq 1 "$runs"); do
        rm -rf "$PDC_WORK/pdc_tmp" "$PDC_WORK/pdc_data" "$PDC_WORK/dart.state"
        pdc_start "$np" "$PDC_WORK/server.log"
        t0=$(date +%s.%N)
        pdc_client "$client" insert --state "$PDC_WORK/dart.state" --from 0 --to "$n" $so \
            >"$PDC_WORK/insert.out" 2>&1 || { echo "FAIL: DART inserts"; tail "$PDC_WORK/insert.out"; exit 1; }
        ins=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        mapfile -t qs < <(queries "$n")
        warm=()
        for i in "${!qs[@]}"; do
            warm[$i]=$(time_query "${qs[$i]}" "$PDC_WORK/warm$i.out" </dev/null) || exit 1
        done
        pdc_close
        pdc_start "$np" "$PDC_WORK/server-restart.log" restart
        ready=$PDC_READY_S
        grep -h "DART index:" "$PDC_WORK/server-restart.log" | sed 's/^/  /'
        for i in "${!qs[@]}"; do
            q=${qs[$i]}
            r=$(time_query "$q" "$PDC_WORK/restart$i.out" </dev/null) || exit 1
            w=${warm[$i]}
            wf=$(sed -n 's/first_ms=\([0-9.]*\).*/\1/p' <<<"$w") wm=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<<"$w")
            rf=$(sed -n 's/first_ms=\([0-9.]*\).*/\1/p' <<<"$r") rm_=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<<"$r")
            wn=$(sed -n 's/.* n=\([0-9]*\)/\1/p' <<<"$w") rn=$(sed -n 's/.* n=\([0-9]*\)/\1/p' <<<"$r")
            [ "$wn" = "$rn" ] || { echo "FAIL: $q answered $wn records warm, $rn after the restart"; exit 1; }
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$n" "$np" "$run" "$q" "$wf" "$wm" "$rf" "$rm_" \
                "$wn" "$ready" "$ins" | tee -a "$raw"
        done
        pdc_close
    done
done
echo "raw results: $raw"
python3 - "$raw" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
keys = []
for r in rows:
    k = (r["records"], r["np"], r["query"])
    if k not in keys:
        keys.append(k)
print("\n| records | servers | query | answers | warm first (ms) | warm median (ms) | first after map restart (ms) | ratio restart/warm first | bound 2x warm + 5 ms | restart to ready (s) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n, np, q in keys:
    s = [r for r in rows if (r["records"], r["np"], r["query"]) == (n, np, q)]
    med = lambda f: statistics.median(float(r[f]) for r in s)
    wf, rf = med("warm_first_ms"), med("restart_first_ms")
    ok = "holds" if rf <= 2 * wf + 5 else "MISSED"
    print(f"| {n} | {np} | `{q}` | {s[0]['answers']} | {wf:.2f} | {med('warm_median_ms'):.2f} | {rf:.2f} | "
          f"{rf / wf:.2f} | {ok} | {med('restart_s'):.2f} |")
PY
