/*
 * workload_cli.h - the commands of ckpt-workload (write, restart, verify,
 * demo; docs/TOOLS.md), a library shared by the installed ckpt-workload
 * (ckpt_workload.c: this project's store only) and the benchmark's
 * ckpt-bench-workload (tools/bench/: the same program plus the persistence
 * methods it compares, some of which need SQLite and RocksDB).
 *
 *   workload_main.c     options, usage, the collectives, demo, wl_main()
 *   workload_write.c    write (and the replacing of an existing store)
 *   workload_restart.c  restart (map, rebuild, re-homing)
 *   workload_verify.c   verify, record by record
 */
#ifndef PDC_CKPT_WORKLOAD_CLI_H
#define PDC_CKPT_WORKLOAD_CLI_H

#include "ckpt_hooks.h"
#include "model_server.h"
#include "workload.h"

struct wl_args {
    const char *cmd;
    char root[4096];
    int have_store;
    struct wl_params p;
    int rebuild, check, after_crash, force, create;
    int from_ranks;          /* rank count the workload was written with (0: the store's) */
    long new_ids;            /* restart: hand out this many new ids and check them */
    struct ckpt_hooks_opts hopts;
    const char *method;      /* --method; NULL: lmdb */
};

/* This process's MPI rank and the job's rank count (set by wl_main). */
extern int wl_rank, wl_size;
/* The program's name in messages, and its command line after the name
 * (for "run this instead"). */
extern const char *wl_prog;
extern char wl_cmdline[1024];

/* "PROG: rank R: ..." on stderr, one write per line; returns 1. */
int wl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Collectives over MPI_COMM_WORLD, the same result on every rank: 1 if any
 * rank passed nonzero; the maximum; the sum; the peak resident set
 * (getrusage ru_maxrss, KiB) maximum over the ranks. */
int wl_any_failed(int mine);
double wl_max_all(double t);
long wl_sum_all(long v);
long wl_peak_rss_kb(void);

/* 1 if dir holds a rank-<N> entry (in a shared directory: also the
 * rank-<N>.new/.old of an interrupted publish). */
int wl_holds_ranks(const char *dir);

/* Apply this rank's stream to model m (with hooks or not); *muts (if not
 * NULL) gets the number of mutations applied. */
int wl_run_stream(const struct wl_params *p, model_server *m, long *muts);
/* The tables this rank holds after a re-homing from p->nranks ranks to
 * `nranks`: every old rank's stream, filtered by new home. */
int wl_run_streams_homed(const struct wl_params *p, int nranks, int me, model_server *m);

/* The floor of a durable close: the median of n small LMDB commits in sync
 * mode (one 100-byte put each) in a fresh environment beside the store
 * (root.fsync-probe-<rank>, removed again), in seconds; < 0 on failure. */
double wl_fsync_commit_s(const char *root, int rank, int n);

/* The commands on this project's store; quiet: the demo's short lines.
 * Collective; 0 or 1 (the failing rank said why). */
int wl_cmd_write(struct wl_args *a, int quiet);
int wl_cmd_restart(struct wl_args *a, int quiet);
int wl_cmd_verify(struct wl_args *a, int quiet);

/* Other persistence methods behind `write|restart --method NAME` (the
 * benchmark's, tools/bench/methods.h). */
struct wl_method_cmd {
    const char *method;
    const char *root;           /* --store DIR */
    struct wl_params p;         /* workload (write; restart --check) */
    int rank, nranks;
    int force;                  /* write: replace an existing store */
    int rebuild, check;         /* restart */
};

struct wl_methods {
    const char *names;          /* comma-separated, lmdb first, for the usage */
    /* 1 if name is one of these methods (not lmdb) */
    int (*known)(const char *name);
    /* collective; 0 on success, 1 on failure (stderr says why) */
    int (*write)(const struct wl_method_cmd *c);
    int (*restart)(const struct wl_method_cmd *c);
};

/* The whole program: MPI_Init, options, the command, MPI_Finalize; the exit
 * status (0 ok, 1 failure, 2 bad usage). methods: NULL for this project's
 * store only. */
int wl_main(int argc, char **argv, const char *prog, const struct wl_methods *methods);

#endif
