#!/usr/bin/env python3
"""ckpt-bench - run ckpt-bench-workload's persistence methods over rank counts,
workloads and repeats, and report workload, close and restart times, store
size and peak memory (JSON, a Markdown table, a gnuplot PNG).

Every write and every restart is its own `mpiexec ... ckpt-bench-workload`
process (ckpt-workload with the benchmark's methods), so each restart starts
from a fresh process; all timing happens inside it (MPI_Wtime around each phase, maximum over ranks). This
script only starts processes, parses their `result:` lines and summarises,
so its own speed does not enter any number.

  ckpt-bench --preset NAME [--repeat R] [--cold] [--json F] [--md F] [--plot F.png]
  ckpt-bench --methods LIST --ranks LIST --objects N[,N..] --tags-per-object M[,M..]
             --tagged T[,T..] [--per-rank] ...

Put into the build's bin/ by CMake (tools/bench/CMakeLists.txt), next to
ckpt-bench-workload; neither is installed.
"""
import argparse
import datetime
import itertools
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
CONFIGURED_MPIEXEC = "@MPIEXEC_EXECUTABLE@"
CONFIGURED_NPFLAG = "@MPIEXEC_NUMPROC_FLAG@"

METHODS = ["lmdb", "lmdb-raw", "fwrite", "bulki", "sqlite", "rocksdb"]
# Not in "all": the lmdb method on a store created without record checksums
# (format 3, PDC_CKPT_CHECKSUMS=0; docs/STORE.md "Record checksums"), and
# with the power-loss guard off (PDC_CKPT_POWERLOSS_GUARD=off; docs/STORE.md
# "Power loss"), to measure what each costs against "lmdb" in the same
# invocation.
EXTRA_METHODS = {"lmdb-nocsum": ("lmdb", {"PDC_CKPT_CHECKSUMS": "0"}),
                 "lmdb-noguard": ("lmdb", {"PDC_CKPT_POWERLOSS_GUARD": "off"})}
HAS_MAP = {"lmdb": True, "lmdb-raw": True, "fwrite": False, "bulki": False, "sqlite": True,
           "rocksdb": True, "lmdb-nocsum": True, "lmdb-noguard": True}
PHASES = ["workload_s", "close_s", "close_fsync_s", "restart_map_s", "restart_rebuild_s",
          "fsync_commit_s", "unmap_s"]

# objects, tags, tagged are lists; per_rank: objects are per rank
PRESETS = {
    "pr305": dict(objects=[10000], tags=[0], tagged=[100], ranks=[1, 5], per_rank=False,
                  about="PDC pull request 305's case: 10K objects, the first 100 with one int "
                        "kvtag, serial and 5 servers"),
    "strong": dict(objects=[100000], tags=[10], tagged=[0], ranks=[1, 2, 4, 8], per_rank=False,
                   about="strong scaling: 100K objects x 10 kvtags (1.1M records) on 1, 2, 4, 8 "
                         "ranks"),
    "weak": dict(objects=[10000], tags=[10], tagged=[0], ranks=[1, 2, 4, 8], per_rank=True,
                 about="weak scaling: 10K objects x 10 kvtags per rank on 1, 2, 4, 8 ranks"),
    "tags": dict(objects=[100, 1000, 10000], tags=[100], tagged=[0], ranks=[1], per_rank=False,
                 about="tag-heavy: 100 kvtags per object, 10K to 1M kvtags, serial"),
}

TARGETS_DOC = "docs/BENCHMARKS.md"


def die(msg, code=1):
    print("ckpt-bench: " + msg, file=sys.stderr)
    sys.exit(code)


def write_text(path, text, option):
    """Write an output file; a path that cannot be written is the user's error, not a crash."""
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        die("%s %s: %s" % (option, path, e.strerror or e))


def int_list(s):
    try:
        v = [int(x) for x in s.split(",") if x.strip() != ""]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integers, not %r" % s)
    if not v or any(x < 0 for x in v):
        raise argparse.ArgumentTypeError("expected non-negative integers, not %r" % s)
    return v


def method_list(s):
    if s == "all":
        return list(METHODS)
    v = [x.strip() for x in s.split(",") if x.strip()]
    bad = [x for x in v if x not in METHODS and x not in EXTRA_METHODS]
    if bad or not v:
        raise argparse.ArgumentTypeError("unknown method(s) %s; use %s or all"
                                         % (",".join(bad) or "''",
                                            ",".join(METHODS + list(EXTRA_METHODS))))
    return v


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="ckpt-bench",
        description="Benchmark pdc-ckpt against PDC's fwrite checkpoint, a BULKI snapshot, "
                    "SQLite, RocksDB and raw LMDB behind the same model server and mutation "
                    "stream.",
        epilog="Presets: " + "; ".join("%s: %s" % (k, v["about"]) for k, v in PRESETS.items())
               + ". Explicit flags override a preset's values.")
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--methods", type=method_list, help="comma-separated (default: all): "
                    + ",".join(METHODS) + "; also lmdb-nocsum: lmdb with record checksums off "
                    "(PDC_CKPT_CHECKSUMS=0), lmdb-noguard: lmdb with the power-loss guard off "
                    "(PDC_CKPT_POWERLOSS_GUARD=off)")
    ap.add_argument("--ranks", type=int_list, help="rank counts, e.g. 1,2,4 (default 1)")
    ap.add_argument("--objects", type=int_list, help="objects, total (or per rank with "
                    "--per-rank); a list runs several state sizes")
    ap.add_argument("--tags-per-object", type=int_list, help="kvtags per object (default 0)")
    ap.add_argument("--tagged", type=int_list, help="the first T objects get a \"Group\" "
                    "kvtag (default 0)")
    ap.add_argument("--per-rank", action="store_true", default=None,
                    help="--objects is per rank (weak scaling)")
    ap.add_argument("--repeat", type=int, help="runs per method and configuration (default 5)")
    ap.add_argument("--cold", action="store_true",
                    help="before each restart, sync and evict the store's files from the page "
                         "cache (posix_fadvise DONTNEED on every file)")
    ap.add_argument("--check", action="store_true",
                    help="compare every rebuilt table set with the workload's (outside the "
                         "timed part)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--md", metavar="FILE", help="write the Markdown tables to FILE (they are "
                    "printed to stdout in any case)")
    ap.add_argument("--plot", metavar="FILE.png", help="plot close and restart time against "
                    "rank count and state size (needs gnuplot)")
    ap.add_argument("--dir", metavar="DIR", help="where stores are written (default: a new "
                    "directory under $PDC_TMPDIR or /tmp, removed at the end)")
    ap.add_argument("--keep", action="store_true", help="keep the last store of each run")
    ap.add_argument("--workload", metavar="PATH", default=os.path.join(HERE, "ckpt-bench-workload"),
                    help="the ckpt-bench-workload binary (default: next to ckpt-bench)")
    ap.add_argument("--mpiexec", metavar="PATH", help="mpiexec to use")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per process "
                    "(default 3600)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--report", metavar="JSON", help="run nothing: render the Markdown (and "
                    "--md, --plot) again from a JSON file an earlier run wrote")
    a = ap.parse_args(argv)
    if a.report:
        return a

    p = dict(PRESETS[a.preset]) if a.preset else dict(objects=None, tags=[0], tagged=[0],
                                                        ranks=[1], per_rank=False, about="")
    a.objects = a.objects or p["objects"]
    a.tags_per_object = a.tags_per_object or p["tags"]
    a.tagged = a.tagged or p["tagged"]
    a.ranks = a.ranks or p["ranks"]
    a.per_rank = p["per_rank"] if a.per_rank is None else a.per_rank
    a.about = p["about"]
    a.methods = a.methods or list(METHODS)
    a.repeat = 5 if a.repeat is None else a.repeat
    if a.objects is None:
        ap.error("give --objects or --preset")
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    if any(r < 1 for r in a.ranks):
        ap.error("--ranks must be at least 1")
    if a.mpiexec is None:
        a.mpiexec = CONFIGURED_MPIEXEC if not CONFIGURED_MPIEXEC.startswith("@") else \
            (shutil.which("mpiexec") or "mpiexec")
    a.npflag = CONFIGURED_NPFLAG if not CONFIGURED_NPFLAG.startswith("@") and \
        CONFIGURED_NPFLAG else "-n"
    return a


# ---------------------------------------------------------------------------
# running


class RunError(Exception):
    pass


def run_proc(a, argv, env=None):
    t0 = time.monotonic()
    try:
        cp = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, timeout=a.timeout,
                            env=dict(os.environ, **env) if env else None)
    except subprocess.TimeoutExpired:
        raise RunError("timed out after %.0f s: %s" % (a.timeout, " ".join(map(shlex.quote, argv))))
    except OSError as e:
        raise RunError("cannot run %s: %s" % (argv[0], e))
    if cp.returncode != 0:
        raise RunError("exit status %d: %s\n%s%s" % (cp.returncode,
                                                    " ".join(map(shlex.quote, argv)),
                                                    cp.stdout[-2000:], cp.stderr[-4000:]))
    for line in cp.stdout.splitlines():
        if line.startswith("result: "):
            kv = {}
            for tok in line[len("result: "):].split():
                if "=" in tok:
                    k, v = tok.split("=", 1)
                    kv[k] = v
            kv["_wall"] = time.monotonic() - t0
            return kv
    raise RunError("no result line from: %s\n%s" % (" ".join(map(shlex.quote, argv)), cp.stdout))


def store_bytes(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def evict(path):
    """Sync, then drop every file of the store from the page cache."""
    os.sync()
    for root, _dirs, files in os.walk(path):
        for f in files:
            fd = os.open(os.path.join(root, f), os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def wl_args(cfg):
    return ["--objects", str(cfg["objects"]), "--tags-per-object", str(cfg["tags_per_object"]),
            "--tagged", str(cfg["tagged"])]


def run_once(a, method, cfg, store):
    """write, restart (map), restart (rebuild): one sample of every phase."""
    mpi = [a.mpiexec, a.npflag, str(cfg["ranks"]), a.workload]
    shutil.rmtree(store, ignore_errors=True)
    has_map = HAS_MAP[method]
    method, env = EXTRA_METHODS.get(method, (method, None))
    w = run_proc(a, mpi + ["write", "--method", method, "--store", store] + wl_args(cfg), env)
    s = {
        "workload_s": float(w["workload_s"]),
        "close_s": float(w["close_s"]),
        # methods whose close always syncs report it once; it is both numbers
        "close_fsync_s": float(w.get("close_fsync_s", w["close_s"])),
        # lmdb: one small fsync'd commit on the same file system, measured
        # right after close (the floor of a durable close)
        "fsync_commit_s": float(w["fsync_commit_s"]) if "fsync_commit_s" in w else None,
        # lmdb: close returns once durable; the environment's unmapping then
        # runs on a thread of its own, timed apart
        "unmap_s": float(w["unmap_s"]) if "unmap_s" in w else None,
        "mutations": int(w["mutations"]),
        "rss_write": int(w.get("peak_rss_kb", 0)),
        "store_bytes": store_bytes(store),
        "restart_map_s": None, "rss_map": None,
    }
    if has_map:
        if a.cold:
            evict(store)
        r = run_proc(a, mpi + ["restart", "--method", method, "--store", store], env)
        s["restart_map_s"] = float(r["seconds"])
        s["rss_map"] = int(r.get("peak_rss_kb", 0))
    if a.cold:
        evict(store)
    r = run_proc(a, mpi + ["restart", "--method", method, "--store", store, "--rebuild"]
                 + (["--check"] + wl_args(cfg) if a.check else []), env)
    s["restart_rebuild_s"] = float(r["seconds"])
    s["rss_rebuild"] = int(r.get("peak_rss_kb", 0))
    if not a.keep:
        shutil.rmtree(store, ignore_errors=True)
    return s


def configs(a):
    out = []
    for objs, tags, tagged in itertools.product(a.objects, a.tags_per_object, a.tagged):
        for r in a.ranks:
            out.append({"ranks": r, "objects": objs * r if a.per_rank else objs,
                        "tags_per_object": tags, "tagged": tagged})
    return out


def fmt_dur(s):
    s = int(s)
    return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60) if s >= 3600 else \
        "%d:%02d" % (s // 60, s % 60)


def cfg_label(c):
    return "np=%d objects=%d tags=%d tagged=%d" % (c["ranks"], c["objects"], c["tags_per_object"],
                                                   c["tagged"])


def run_all(a, workdir):
    cfgs = configs(a)
    samples = {}  # (method, cfg index) -> list of sample dicts
    total = a.repeat * len(cfgs) * len(a.methods)
    done = 0
    t_start = time.monotonic()
    store = os.path.join(workdir, "store")
    # Repeats outermost and methods innermost: noise spreads over all methods alike.
    for rep in range(a.repeat):
        for ci, cfg in enumerate(cfgs):
            for m in a.methods:
                t0 = time.monotonic()
                s = run_once(a, m, cfg, store)
                samples.setdefault((m, ci), []).append(s)
                done += 1
                if not a.quiet:
                    el = time.monotonic() - t_start
                    eta = el / done * (total - done)
                    print("[%*d/%d] %-8s %s rep %d/%d: workload %s close %s map %s rebuild %s "
                          "(%.1f s; elapsed %s, eta %s)"
                          % (len(str(total)), done, total, m, cfg_label(cfg), rep + 1, a.repeat,
                             fmt_time(s["workload_s"]), fmt_time(s["close_s"]),
                             fmt_time(s["restart_map_s"]), fmt_time(s["restart_rebuild_s"]),
                             time.monotonic() - t0, fmt_dur(el), fmt_dur(eta)),
                          file=sys.stderr, flush=True)
    return cfgs, samples


# ---------------------------------------------------------------------------
# summary


def stats(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"min": min(v), "median": statistics.median(v), "avg": statistics.mean(v),
            "max": max(v)}


def summarise(a, cfgs, samples):
    results = []
    for ci, cfg in enumerate(cfgs):
        for m in a.methods:
            ss = samples.get((m, ci), [])
            if not ss:
                continue
            r = {"method": m, "ranks": cfg["ranks"], "objects": cfg["objects"],
                 "tags_per_object": cfg["tags_per_object"], "tagged": cfg["tagged"],
                 "runs": len(ss), "mutations": ss[0]["mutations"]}
            for ph in PHASES:
                r[ph] = stats([s[ph] for s in ss])
            r["store_bytes"] = int(statistics.median([s["store_bytes"] for s in ss]))
            ph_rss = {"write": max(s["rss_write"] for s in ss),
                      "restart_map": max((s["rss_map"] for s in ss if s["rss_map"] is not None),
                                         default=None),
                      "restart_rebuild": max(s["rss_rebuild"] for s in ss)}
            r["peak_rss_kb"] = max(v for v in ph_rss.values() if v is not None)
            r["peak_rss_kb_by_phase"] = ph_rss
            r["samples"] = {ph: [s[ph] for s in ss] for ph in PHASES}
            r["samples"]["store_bytes"] = [s["store_bytes"] for s in ss]
            results.append(r)
    return results


def machine_info(workdir):
    info = {"cores": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["mem_gib"] = round(int(f.readline().split()[1]) / 1048576, 1)
        best = ""
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, fstype = line.split()[:3]
                if os.path.realpath(workdir).startswith(mnt) and len(mnt) > len(best):
                    best, info["store_fs"] = mnt, "%s (%s)" % (fstype, dev)
    except (OSError, ValueError, IndexError):
        pass
    return info


# ---------------------------------------------------------------------------
# Markdown


def fmt_time(x):
    if x is None:
        return "-"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if x >= f or unit == "µs":
            v = x / f
            return ("%.3g" % v) + " " + unit
    return str(x)


def fmt_triplet(st):
    """min / avg / max in one unit (the average's)."""
    if st is None:
        return "–"
    avg = st["avg"]
    unit, f = ("s", 1.0) if avg >= 1 else (("ms", 1e-3) if avg >= 1e-3 else ("µs", 1e-6))
    return "%s / %s / %s %s" % tuple([fmt_num(st[k] / f) for k in ("min", "avg", "max")] + [unit])


def fmt_bytes(n):
    if n is None:
        return "–"
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= f:
            return "%.3g %s" % (n / f, unit)
    return "%d B" % n


def med(r, ph):
    return r[ph]["median"] if r and r.get(ph) else None


def restart_any(r):
    """The method's fastest way back: map if it has one, else its full restart."""
    return med(r, "restart_map_s") if r["restart_map_s"] else med(r, "restart_rebuild_s")


def ratio(a_, b_):
    if a_ is None or b_ is None or b_ == 0:
        return None
    return a_ / b_


def fmt_num(x):
    """3 significant digits, no exponent."""
    if x >= 100:
        return "{:,.0f}".format(x)
    if x >= 0.001:
        return "%.3g" % x
    return "%.2e" % x


def fmt_ratio(x, suffix="×"):
    return "–" if x is None else fmt_num(x) + suffix


def cfg_key(r):
    return (r["ranks"], r["objects"], r["tags_per_object"], r["tagged"])


def cfg_title(r, cores):
    over = " (oversubscribed: %d cores)" % cores if cores and r["ranks"] > cores else ""
    return "%d rank%s%s, %s objects × %d kvtags, %d tagged (%s mutations)" % (
        r["ranks"], "" if r["ranks"] == 1 else "s", over, "{:,}".format(r["objects"]),
        r["tags_per_object"], r["tagged"], "{:,}".format(r["mutations"]))


def targets(results):
    """The issue's targets, from this invocation's medians. Returns rows
    (target, where, measured, goal, verdict)."""
    rows = []
    by = {}
    for r in results:
        by.setdefault(cfg_key(r), {})[r["method"]] = r

    def verdict(x, goal, ge):
        if x is None:
            return "–"
        ok = x >= goal if ge else x <= goal
        if ok:
            return "met"
        return "missed by %s×" % fmt_num((goal / x) if ge else (x / goal))

    for key in sorted(by):
        g = by[key]
        lm, fw = g.get("lmdb"), g.get("fwrite")
        where = "np=%d, %s obj × %d tags%s" % (key[0], "{:,}".format(key[1]), key[2],
                                             ", %d tagged" % key[3] if key[3] else "")
        if lm and fw:
            x = ratio(med(fw, "close_s"), med(lm, "close_s"))
            rows.append(("close ≥ 100× faster than fwrite (no fsync, as PDC)", where, fmt_ratio(x),
                         "≥ 100×", verdict(x, 100, True)))
            x = ratio(med(fw, "close_fsync_s"), med(lm, "close_s"))
            rows.append(("(close ≥ 100× faster than fwrite + fsync: both durable)", where,
                         fmt_ratio(x), "≥ 100×", verdict(x, 100, True)))
            x = ratio(med(fw, "restart_rebuild_s"), med(lm, "restart_map_s"))
            rows.append(("restart-map ≥ 1000× faster than fwrite restart", where, fmt_ratio(x),
                         "≥ 1000×", verdict(x, 1000, True)))
            x = ratio(med(fw, "restart_rebuild_s"), med(lm, "restart_rebuild_s"))
            rows.append(("restart-rebuild at least as fast as fwrite's restart (aim 2×)", where,
                         fmt_ratio(x), "≥ 1×", verdict(x, 1, True)))
            rows.append(("restart-rebuild ≥ 5× faster than fwrite", where, fmt_ratio(x), "≥ 5×",
                         verdict(x, 5, True)))
            x = ratio(lm["store_bytes"], fw["store_bytes"])
            rows.append(("store ≤ the fwrite file (aim 0.6×)", where, fmt_ratio(x), "≤ 1×",
                         verdict(x, 1, False)))
            rows.append(("store ≤ 0.3× the fwrite file", where, fmt_ratio(x), "≤ 0.3×",
                         verdict(x, 0.3, False)))
        if lm and med(lm, "fsync_commit_s"):
            x = ratio(med(lm, "close_s"), med(lm, "fsync_commit_s"))
            rows.append(("close ≤ 2× one small fsync'd commit (same disk, same run)", where,
                         fmt_ratio(x), "≤ 2×", verdict(x, 2, False)))
        for peer, goal in (("lmdb-raw", 1.2), ("sqlite", 0.5), ("rocksdb", 0.7)):
            if lm and g.get(peer):
                x = ratio(med(lm, "workload_s"), med(g[peer], "workload_s"))
                rows.append(("workload ≤ %g× %s" % (goal, peer), where, fmt_ratio(x),
                             "≤ %g×" % goal, verdict(x, goal, False)))
    # across state sizes: same ranks and tags per object, lmdb
    series = {}
    for r in results:
        if r["method"] == "lmdb":
            series.setdefault((r["ranks"], r["tags_per_object"], r["tagged"]), []).append(r)
    for (np_, tags, _tg), rs in sorted(series.items()):
        if len(rs) < 2:
            continue
        rs.sort(key=lambda r: r["objects"] * (1 + r["tags_per_object"]))
        lo, hi = rs[0], rs[-1]
        nlo = lo["objects"] * (1 + tags) + lo["tagged"]
        nhi = hi["objects"] * (1 + tags) + hi["tagged"]
        where = "np=%d, %s → %s records" % (np_, "{:,}".format(nlo), "{:,}".format(nhi))
        x = ratio(med(hi, "close_s"), med(lo, "close_s"))
        rows.append(("close at the largest state within 3× of the smallest", where, fmt_ratio(x),
                     "≤ 3×", verdict(x, 3, False)))
        x = ratio(med(hi, "restart_map_s"), med(lo, "restart_map_s"))
        rows.append(("restart-map flat in state size (largest / smallest)", where, fmt_ratio(x),
                     "≤ 2× (flat)", verdict(x, 2, False)))
    return rows


def markdown(a, results, info, cmdline, date=None):
    cores = info.get("cores")
    out = []
    out.append("### ckpt-bench%s: %s" % (" --preset " + a.preset if a.preset else "",
                                        a.about or "custom run"))
    out.append("")
    out.append("`%s`  " % cmdline)
    out.append("%s; %s cores%s; %s runs per method and configuration; every restart in a fresh "
               "process%s. Times are the maximum over ranks of each run; cells are min / avg / max "
               "over the runs; ratios use medians."
               % (date or datetime.date.today().isoformat(), cores,
                  (" (" + info["cpu"] + ")") if info.get("cpu") else "", a.repeat,
                  "; page cache evicted before every restart (--cold)" if a.cold else
                  "; warm page cache"))
    if cores and max(a.ranks) > cores:
        out.append("Ranks beyond %d are oversubscribed: they share %d cores." % (cores, cores))
    out.append("")
    groups = {}
    for r in results:
        groups.setdefault(cfg_key(r), []).append(r)
    for key in sorted(groups):
        rs = groups[key]
        fw = next((r for r in rs if r["method"] == "fwrite"), None)
        out.append("#### " + cfg_title(rs[0], cores))
        out.append("")
        out.append("| method | workload | close | close + fsync | one fsync'd commit² | restart (map) "
                   "| restart (rebuild) | store | peak RSS |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for r in rs:
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["method"], fmt_triplet(r["workload_s"]), fmt_triplet(r["close_s"]),
                fmt_triplet(r["close_fsync_s"]), fmt_triplet(r.get("fsync_commit_s")),
                fmt_triplet(r["restart_map_s"]),
                fmt_triplet(r["restart_rebuild_s"]), fmt_bytes(r["store_bytes"]),
                fmt_bytes(r["peak_rss_kb"] * 1024)))
        if fw:
            out.append("")
            out.append("| vs fwrite (medians) | workload ÷ fwrite's | close: × faster | close + "
                       "fsync: × faster | restart: × faster¹ | rebuild: × faster | store ÷ fwrite's |")
            out.append("|---|---|---|---|---|---|---|")
            fr = med(fw, "restart_rebuild_s")
            for r in rs:
                out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                    r["method"], fmt_ratio(ratio(med(r, "workload_s"), med(fw, "workload_s"))),
                    fmt_ratio(ratio(med(fw, "close_s"), med(r, "close_s"))),
                    fmt_ratio(ratio(med(fw, "close_fsync_s"), med(r, "close_fsync_s"))),
                    fmt_ratio(ratio(fr, restart_any(r))),
                    fmt_ratio(ratio(fr, med(r, "restart_rebuild_s"))),
                    fmt_ratio(ratio(r["store_bytes"], fw["store_bytes"]))))
            out.append("")
            out.append("¹ fwrite's only restart (read everything, rebuild) against the method's "
                       "map restart, or its full restart if it has no map.")
        out.append("")
        out.append("² one LMDB commit of one small put in sync mode (fdatasync), in a fresh "
                   "environment beside the store, right after the lmdb method's close: the floor "
                   "of a durable close on this disk at that moment.")
        lm = next((r for r in rs if r["method"] == "lmdb"), None)
        if med(lm, "unmap_s") is not None:
            out.append("")
            out.append("lmdb's close returns once its last commit is durable and its locks are "
                       "dropped; unmapping the environment then took %s (median) on a thread of "
                       "its own, not counted in close." % fmt_time(med(lm, "unmap_s")))
        out.append("")
    rows = targets(results)
    if rows:
        out.append("#### Targets (this invocation's medians)")
        out.append("")
        out.append("| target | where | measured | goal | |")
        out.append("|---|---|---|---|---|")
        for t in rows:
            out.append("| %s | %s | %s | %s | %s |" % t)
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# plot

COLORS = {"lmdb": "#d62728", "lmdb-raw": "#ff9896", "fwrite": "#1f77b4", "bulki": "#9467bd",
          "sqlite": "#2ca02c", "rocksdb": "#ff7f0e"}


def state_size(r):
    return r["objects"] * (1 + r["tags_per_object"]) + r["tagged"]


def plot(a, results, path, workdir, title):
    gp = shutil.which("gnuplot")
    if gp is None:
        die("--plot needs gnuplot (Debian: apt-get install gnuplot-nox)")
    dd = os.path.join(workdir, "plot")
    os.makedirs(dd, exist_ok=True)
    panels = []  # (title, xlabel, [(file, method, dashed)], xs)
    # a row of panels only for an axis that varies (both if neither does)
    axes = [ax for ax, n in (("ranks", len({r["ranks"] for r in results})),
                             ("size", len({state_size(r) for r in results}))) if n > 1] \
        or ["ranks", "size"]
    for axis in axes:
        for ph, name in (("close_s", "close"), ("restart_map_s", "restart (map; dashed: full "
                                                 "restart, no map)"),
                         ("restart_rebuild_s", "restart (rebuild the tables)")):
            series, xs = [], set()
            for m in a.methods:
                rs = [r for r in results if r["method"] == m]
                pick = {}
                for r in rs:
                    if axis == "ranks":
                        x = r["ranks"]
                        better = x not in pick or state_size(r) > state_size(pick[x])
                    else:
                        x = state_size(r)
                        better = x not in pick or r["ranks"] < pick[x]["ranks"]
                    if better:
                        pick[x] = r
                use, dashed = ph, False
                if ph == "restart_map_s" and not HAS_MAP[m]:
                    use, dashed = "restart_rebuild_s", True
                rows = [(x, pick[x][use]) for x in sorted(pick) if pick[x][use]]
                if not rows:
                    continue
                fn = os.path.join(dd, "%s-%s-%s.dat" % (axis, ph, m))
                with open(fn, "w") as f:
                    for x, st in rows:
                        f.write("%g %.9g %.9g %.9g\n" % (x, st["median"], st["min"], st["max"]))
                        xs.add(x)
                series.append((fn, m, dashed))
            xl = "MPI ranks" if axis == "ranks" else "state size (objects + kvtags)"
            panels.append(("%s\\nvs %s" % (name, xl), xl, series, xs))
    gpf = os.path.join(dd, "plot.gp")
    with open(gpf, "w") as f:
        f.write('set terminal pngcairo size 1260,%d font ",9"\n' % (420 * len(axes)))
        f.write('set output "%s"\n' % path.replace('"', '\\"'))
        f.write('set multiplot layout %d,3 title "%s"\n' % (len(axes), title.replace('"', "'")))
        f.write("set logscale xy\nset grid\nset key below horizontal maxrows 2 font \",8\"\n")
        f.write('set format y "%g"\n')
        f.write('set ylabel "seconds (median; bars: min-max)"\n')
        for t, xl, series, xs in panels:
            f.write('set title "%s"\nunset xlabel\n' % t)
            if xs:
                lo, hi = min(xs), max(xs)
                f.write("set xrange [%g:%g]\n" % (lo / 1.5, hi * 1.5))
                if xl == "MPI ranks":
                    f.write("set xtics (%s)\n" % ", ".join("%g" % x for x in sorted(xs)))
                else:
                    f.write("set xtics auto\n")
            if not series:
                f.write("unset key\nplot 1/0 notitle\nset key\n")
                continue
            parts = []
            for fn, m, dashed in series:
                parts.append('"%s" using 1:2:3:4 with yerrorlines lc rgb "%s" lw 2 pt 7 ps 0.6 '
                             'dt %d title "%s%s"' % (fn, COLORS.get(m, "black"), 2 if dashed else 1,
                                                     m, " (full restart)" if dashed else ""))
            f.write("plot " + ", \\\n     ".join(parts) + "\n")
        f.write("unset multiplot\n")
    cp = subprocess.run([gp, gpf], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        universal_newlines=True)
    if cp.returncode != 0 or not os.path.exists(path):
        die("gnuplot failed:\n" + cp.stderr)


# ---------------------------------------------------------------------------


def report(a):
    """--report: the tables and the plot of an earlier run, from its JSON."""
    try:
        with open(a.report) as f:
            doc = json.load(f)
    except OSError as e:
        die("--report %s: %s" % (a.report, e.strerror or e))
    except (ValueError, UnicodeDecodeError) as e:
        die("--report %s: not JSON (%s)" % (a.report, e))
    try:
        res = doc["results"]
        a.preset, a.about = doc.get("preset"), doc.get("about") or ""
        a.repeat, a.cold = doc.get("repeat", 0), doc.get("cold", False)
        a.ranks = sorted({r["ranks"] for r in res})
        a.methods = [m for m in METHODS if any(r["method"] == m for r in res)]
        md = markdown(a, res, doc.get("machine", {}), doc.get("command", ""),
                      doc.get("date", "")[:10])
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
        die("--report %s: not a report written by ckpt-bench --json (%s: %s)"
            % (a.report, type(e).__name__, e))
    if a.md:
        write_text(a.md, md + "\n", "--md")
    if a.plot:
        if shutil.which("gnuplot") is None:
            die("--plot needs gnuplot, which is not installed (Debian: apt-get install gnuplot-nox)")
        d = tempfile.mkdtemp(prefix="ckpt-bench.")
        try:
            plot(a, res, a.plot, d, "ckpt-bench" + (" --preset " + a.preset if a.preset else "")
                 + ": " + (a.about or "custom run"))
        finally:
            shutil.rmtree(d, ignore_errors=True)
    print(md)
    return 0


def main(argv):
    a = parse_args(argv)
    if a.report:
        return report(a)
    if not os.access(a.workload, os.X_OK):
        die("cannot run %s (give --workload PATH)" % a.workload)
    if a.plot and shutil.which("gnuplot") is None:
        die("--plot needs gnuplot, which is not installed (Debian: apt-get install gnuplot-nox)")
    base = a.dir or os.environ.get("PDC_TMPDIR") or tempfile.gettempdir()
    try:
        os.makedirs(base, exist_ok=True)
        workdir = tempfile.mkdtemp(prefix="ckpt-bench.", dir=base)
    except OSError as e:
        die("%s %s: %s" % ("--dir" if a.dir else "store directory", base, e.strerror or e))
    cmdline = "ckpt-bench " + " ".join(map(shlex.quote, argv))
    try:
        info = machine_info(workdir)
        cfgs = configs(a)
        if not a.quiet:
            print("ckpt-bench: %d methods x %d configurations x %d repeats = %d runs, stores in %s"
                  % (len(a.methods), len(cfgs), a.repeat, len(a.methods) * len(cfgs) * a.repeat,
                     workdir), file=sys.stderr, flush=True)
        try:
            cfgs, samples = run_all(a, workdir)
        except RunError as e:
            die("a run failed: %s" % e)
        results = summarise(a, cfgs, samples)
        doc = {"command": cmdline, "preset": a.preset, "about": a.about,
               "date": datetime.datetime.now().isoformat(timespec="seconds"),
               "repeat": a.repeat, "cold": a.cold, "checked": a.check, "machine": info,
               "env": {k: v for k, v in os.environ.items() if k.startswith("PDC_CKPT_")},
               "notes": {
                   "times": "seconds; each run's time is the maximum over ranks; min/median/avg/"
                            "max over the runs; null: the method has no such phase",
                   "close_fsync_s": "close plus an fsync of the files, for methods whose close "
                                    "does not sync (fwrite, bulki, as PDC does not); for the "
                                    "others their close already syncs and it equals close_s",
                   "store_bytes": "sum of the sizes of every file of the store, all ranks "
                                  "(median over runs)",
                   "peak_rss_kb": "getrusage ru_maxrss, maximum over ranks, phases and runs; "
                                  "per phase in peak_rss_kb_by_phase"},
               "results": results}
        md = markdown(a, results, info, cmdline)
        if a.json:
            write_text(a.json, json.dumps(doc, indent=1) + "\n", "--json")
        if a.md:
            write_text(a.md, md + "\n", "--md")
        if a.plot:
            plot(a, results, a.plot, workdir, "ckpt-bench" + (" --preset " + a.preset if a.preset
                                                              else "") + ": " + (a.about or "custom run"))
        print(md)
        return 0
    finally:
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif not a.quiet:
            print("ckpt-bench: stores kept in %s" % workdir, file=sys.stderr)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        die("interrupted", 130)
