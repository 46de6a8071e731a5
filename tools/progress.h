/*
 * progress.h - progress of a long operation on a terminal, shared by the
 * tools (ckpt-inspect verify/copy/import-legacy, ckpt-workload restart's
 * re-homing): a count, a bar and an ETA, redrawn in place on stderr at
 * most ten times a second, and only when stderr is a terminal. Otherwise
 * (a pipe, a file, a batch job's log) it prints nothing at all.
 *
 *   verify pass 2/2 (records): 1024/4096 ranks [#####               ]  25% ETA 0:06
 */
#ifndef PDC_CKPT_PROGRESS_H
#define PDC_CKPT_PROGRESS_H

#include <stdint.h>

struct ckpt_progress {
    const char *what;  /* "verify pass 1/2 (meta, ids)" */
    const char *unit;  /* "ranks" */
    uint64_t total;
    int on;            /* stderr is a terminal */
    int drawn;         /* a line is on the terminal */
    double t0, last;   /* monotonic seconds: begin, last redraw */
};

/* Start: nothing is drawn yet. what and unit must outlive p. */
void ckpt_progress_begin(struct ckpt_progress *p, const char *what, const char *unit,
                         uint64_t total);
/* done of total are finished (redrawn if 0.1 s passed since the last). */
void ckpt_progress_update(struct ckpt_progress *p, uint64_t done);
/* Finished or abandoned: the line is cleared, so that what follows on the
 * terminal starts on a clean line. */
void ckpt_progress_end(struct ckpt_progress *p);
/* Clear the line of the operation in progress, if one is drawn: call it
 * before printing anything else (an error, a result line); the next
 * update draws it again. */
void ckpt_progress_clear(void);
/* As a library callback (ckpt_hooks_opts.progress, legacy_import_opts
 * .progress): arg is a begun struct ckpt_progress; total replaces its
 * total. */
void ckpt_progress_cb(void *arg, uint64_t done, uint64_t total);

#endif
