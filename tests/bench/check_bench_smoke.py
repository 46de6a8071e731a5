#!/usr/bin/env python3
"""bench_smoke: run ckpt-bench at tiny sizes and check what it writes.
usage: check_bench_smoke.py PATH/TO/ckpt-bench"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

METHODS = ["lmdb", "lmdb-raw", "fwrite", "bulki", "sqlite", "rocksdb"]
NO_MAP = {"fwrite", "bulki"}
TIMES = ["workload_s", "close_s", "close_fsync_s", "restart_map_s", "restart_rebuild_s",
         "fsync_commit_s"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    bench = sys.argv[1]
    if shutil.which("gnuplot") is None:
        fail("gnuplot is not installed (the project's run script installs gnuplot-nox); "
             "ckpt-bench --plot needs it")
    d = tempfile.mkdtemp(prefix="bench-smoke.")
    try:
        j, md, png = (os.path.join(d, n) for n in ("r.json", "r.md", "r.png"))
        cmd = [sys.executable, bench, "--methods", ",".join(METHODS), "--ranks", "1,2",
               "--objects", "200", "--tags-per-object", "3", "--tagged", "20", "--repeat", "1",
               "--check", "--cold", "--dir", d, "--json", j, "--md", md, "--plot", png]
        print("+ " + " ".join(cmd), flush=True)
        cp = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True, timeout=110)
        print(cp.stdout)
        if cp.returncode != 0:
            fail("ckpt-bench exited with %d" % cp.returncode)
        with open(j) as f:
            doc = json.load(f)
        res = doc.get("results")
        if not isinstance(res, list):
            fail("no results list in the JSON")
        seen = set()
        for r in res:
            m, np_ = r.get("method"), r.get("ranks")
            where = "%s on %s ranks" % (m, np_)
            seen.add((m, np_))
            for k in ("objects", "tags_per_object", "tagged", "runs", "store_bytes", "peak_rss_kb"):
                if not isinstance(r.get(k), int) or r[k] < 0:
                    fail("%s: %s is %r, not a count" % (where, k, r.get(k)))
            if r["runs"] != 1 or r["objects"] != 200 or r["tags_per_object"] != 3:
                fail("%s: wrong run parameters %r" % (where, r))
            if r["store_bytes"] <= 0 or r["peak_rss_kb"] <= 0:
                fail("%s: store_bytes/peak_rss_kb not positive" % where)
            for ph in TIMES:
                st = r.get(ph, "absent")
                if ph == "restart_map_s" and m in NO_MAP:
                    if st is not None:
                        fail("%s: %s should be null (no map restart), is %r" % (where, ph, st))
                    continue
                if ph == "fsync_commit_s" and m != "lmdb":
                    if st is not None:
                        fail("%s: %s should be null (measured beside lmdb only), is %r"
                             % (where, ph, st))
                    continue
                if not isinstance(st, dict):
                    fail("%s: %s is %r, not {min, median, avg, max}" % (where, ph, st))
                for k in ("min", "median", "avg", "max"):
                    v = st.get(k)
                    if not isinstance(v, (int, float)) or v <= 0:
                        fail("%s: %s.%s is %r" % (where, ph, k, v))
                if not st["min"] <= st["median"] <= st["max"]:
                    fail("%s: %s min/median/max out of order" % (where, ph))
        want = {(m, n) for m in METHODS for n in (1, 2)}
        if seen != want:
            fail("results for %s, expected %s" % (sorted(seen), sorted(want)))
        with open(md) as f:
            text = f.read()
        for m in METHODS:
            if "| %s |" % m not in text:
                fail("the Markdown table has no row for %s" % m)
        with open(png, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n" or os.path.getsize(png) < 5000:
                fail("the plot is not a PNG image")
        print("bench smoke: %d results, table and plot written: OK" % len(res))
    finally:
        shutil.rmtree(d, ignore_errors=True)


main()
