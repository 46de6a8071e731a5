/*
 * progress.c - the tools' progress line (progress.h): only on a terminal,
 * rate-limited, cleared when the operation ends.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define BAR 20

/* the operation whose line may be on the terminal (one at a time) */
static struct ckpt_progress *active;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ckpt_progress_begin(struct ckpt_progress *p, const char *what, const char *unit,
                         uint64_t total)
{
    p->what = what;
    p->unit = unit;
    p->total = total;
    p->on = isatty(STDERR_FILENO);
    p->drawn = 0;
    p->t0 = now_s();
    p->last = 0;
    active = p;
}

void ckpt_progress_update(struct ckpt_progress *p, uint64_t done)
{
    char bar[BAR + 1], eta[32] = "";
    double t, el;
    size_t fill;
    if (!p->on)
        return;
    t = now_s();
    if (p->drawn && t - p->last < 0.1 && done < p->total)
        return;
    p->last = t;
    if (done > p->total)
        done = p->total;
    fill = p->total ? (size_t)(done * BAR / p->total) : BAR;
    for (size_t i = 0; i < BAR; i++)
        bar[i] = i < fill ? '#' : ' ';
    bar[BAR] = 0;
    el = t - p->t0;
    if (done > 0 && done < p->total) {
        unsigned long s = (unsigned long)(el / (double)done * (double)(p->total - done) + 0.5);
        snprintf(eta, sizeof eta, " ETA %lu:%02lu", s / 60, s % 60);
    }
    fprintf(stderr, "\r%s: %llu/%llu %s [%s] %3u%%%s\033[K", p->what, (unsigned long long)done,
            (unsigned long long)p->total, p->unit, bar,
            p->total ? (unsigned)(done * 100 / p->total) : 100u, eta);
    fflush(stderr);
    p->drawn = 1;
}

void ckpt_progress_clear(void)
{
    if (active != NULL && active->on && active->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        active->drawn = 0;
    }
}

void ckpt_progress_end(struct ckpt_progress *p)
{
    if (p->on && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = 0;
    if (active == p)
        active = NULL;
}

void ckpt_progress_cb(void *arg, uint64_t done, uint64_t total)
{
    struct ckpt_progress *p = arg;
    p->total = total;
    ckpt_progress_update(p, done);
}
