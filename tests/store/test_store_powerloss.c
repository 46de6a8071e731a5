/*
 * test_store_powerloss.c - power loss, tested the way ALICE and CrashMonkey
 * test file systems and databases.
 *
 *   test_store_powerloss WORKLOAD SHIM INSPECT IMAGES [SEED]
 *
 * For each workload (every sync mode; commit sizes, seeds, a last session
 * that ends without close), powerloss_workload runs under crash_shim.so,
 * which records every write and sync it issues to the store's files
 * (shim_log.h). Then crash images are built from the record: a crash
 * point (a position in the record: everything before it was issued), the
 * writes that are durable there (a write is durable once an fsync or
 * fdatasync of its file began after it and returned before the crash
 * point, or it went through an O_DSYNC descriptor), and a random choice of
 * the others: none, all, each with probability 1/2, prefixes of them, small
 * writes (LMDB's meta) kept and large ones (pages) lost, or writes torn
 * into their 512-byte sectors. lock.mdb is left out (LMDB rebuilds it) and
 * the machine's boot id is changed (PDC_CKPT_TEST_BOOT_ID): the image is
 * opened as after a reboot. Each image must:
 *   - open read-only, or refuse with a CKPT_E_* code and a message;
 *   - open for writing (what a restart does): refusing is allowed only if
 *     no sync of the store had completed before the crash point;
 *   - hold exactly the content of a committed prefix of the mutation
 *     stream (the model, powerloss_model.c), M mutations, where M is one
 *     of the commit points and no older than the last completed sync:
 *     a completed close (marked "closed" after it returned), or a sync
 *     whose last barrier returned before the crash point, covering the
 *     commits marked before its snapshot: in sync mode LMDB's O_DSYNC
 *     meta write; in the fast modes the fdatasync of the sync record
 *     rank-0/synced.rec, whose snapshot is taken where the store preads
 *     LMDB's meta page (an END is paired with the oldest unpaired pread,
 *     the weaker claim); without a sync record (the store before it
 *     existed) the fdatasync of data.mdb and the commits before it began;
 *   - hand out, as a restart's first new id, one above every id the
 *     workload was handed before the crash point (ids are never reused);
 *   - close again, and pass `ckpt-inspect verify`;
 *   - never die by a signal (a child process opens each image).
 * IMAGES images in all (split over the workloads), and for each workload
 * one more at each id it was handed, right after it, with only the durable
 * writes (variant "durable only"). Prints a summary; exit
 * status 1 at the first failing workload's end, naming every failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_store.h"
#include "powerloss_model.h"
#include "shim_log.h"

struct rec {
    struct shim_rec h;
    const uint8_t *data;
};

struct logf {
    uint8_t *buf;
    size_t len;
    struct rec *r;
    size_t n;
    char *file[64];
    int nfile;
    int64_t *durable_at; /* per record: first crash point (record index) where it is durable, or INT64_MAX */
};

static const char *workload_exe, *shim_so, *inspect_exe;
static char tmp[512];
static unsigned long long total_images, total_fail, reader_refused, writer_refused, rolled_older;

static uint64_t rnd_state;
static uint64_t rnd(void)
{
    uint64_t x = (rnd_state += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void rmtree(const char *p)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("rm", "rm", "-rf", p, (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
}

static int run(char *const argv[], char *const env_add[], int quiet)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        for (int i = 0; env_add && env_add[i]; i++)
            putenv(env_add[i]);
        if (quiet) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    if (WIFSIGNALED(st))
        return 1000 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

static int load_log(struct logf *L, const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return -1;
    fseek(fp, 0, SEEK_END);
    L->len = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    L->buf = malloc(L->len + 1);
    if (L->buf == NULL || fread(L->buf, 1, L->len, fp) != L->len) {
        fclose(fp);
        return -1;
    }
    fclose(fp);
    size_t cap = 1024;
    L->r = malloc(cap * sizeof *L->r);
    for (size_t off = 0; off + sizeof(struct shim_rec) <= L->len;) {
        struct rec r;
        memcpy(&r.h, L->buf + off, sizeof r.h);
        if (r.h.magic != SHIM_MAGIC || off + sizeof r.h + r.h.len > L->len)
            return -1;
        r.data = L->buf + off + sizeof r.h;
        off += sizeof r.h + r.h.len;
        if (r.h.type == SHIM_FILE) {
            if (r.h.file >= 64)
                return -1;
            L->file[r.h.file] = strdup((const char *)r.data);
            if ((int)r.h.file >= L->nfile)
                L->nfile = (int)r.h.file + 1;
        }
        if (L->n == cap)
            L->r = realloc(L->r, (cap *= 2) * sizeof *L->r);
        L->r[L->n++] = r;
    }
    /* durability: a sync of file f that began at b and returned at e (an
     * END is paired with the BEGIN of the same thread: syncs of two
     * threads overlap) makes every write to f before b durable at crash
     * points > e */
    L->durable_at = malloc(L->n * sizeof *L->durable_at);
    int64_t *pair_end = malloc(L->n * sizeof *pair_end);
    size_t *open_b = malloc(L->n * sizeof *open_b);
    for (size_t i = 0; i < L->n; i++)
        pair_end[i] = INT64_MAX;
    for (int f = 0; f < L->nfile; f++) {
        size_t nb = 0;
        for (size_t i = 0; i < L->n; i++) {
            if (L->r[i].h.file != (uint32_t)f)
                continue;
            if (L->r[i].h.type == SHIM_SYNC_BEGIN)
                open_b[nb++] = i;
            else if (L->r[i].h.type == SHIM_SYNC_END && L->r[i].h.off != 0)
                for (size_t j = nb; j-- > 0;)
                    if (open_b[j] != SIZE_MAX && L->r[open_b[j]].h.off == L->r[i].h.off) {
                        pair_end[open_b[j]] = (int64_t)i;
                        open_b[j] = SIZE_MAX;
                        break;
                    }
        }
        /* backwards: the earliest end of a sync beginning after i */
        int64_t best = INT64_MAX;
        for (size_t i = L->n; i-- > 0;) {
            const struct rec *r = &L->r[i];
            if (r->h.file != (uint32_t)f || r->h.type == SHIM_MARK)
                continue;
            if (r->h.type == SHIM_SYNC_BEGIN && pair_end[i] < best)
                best = pair_end[i];
            if (r->h.type == SHIM_WRITE || r->h.type == SHIM_TRUNC)
                L->durable_at[i] = best == INT64_MAX ? INT64_MAX : best + 1;
            if (r->h.type == SHIM_WRITE_DURABLE)
                L->durable_at[i] = (int64_t)i + 1;
        }
    }
    free(pair_end);
    free(open_b);
    return 0;
}

static void free_log(struct logf *L)
{
    for (int i = 0; i < L->nfile; i++)
        free(L->file[i]);
    free(L->buf);
    free(L->r);
    free(L->durable_at);
    memset(L, 0, sizeof *L);
}

static int is_mark(const struct rec *r, const char *what)
{
    return r->h.type == SHIM_MARK && r->h.len && strcmp((const char *)r->data, what) == 0;
}

static int file_named(const struct logf *L, const char *name)
{
    for (int i = 0; i < L->nfile; i++)
        if (L->file[i] && strcmp(L->file[i], name) == 0)
            return i;
    return -1;
}

/* What a crash at point c (records [0, c) issued) may come back to: the
 * oldest allowed committed prefix lo (-1 if no sync had completed: nothing
 * is promised) and the newest hi. */
static void bounds(const struct logf *L, int mode, size_t c, int64_t *lo, int64_t *hi)
{
    int sf = mode == CKPT_SYNC_EVERY ? -1 : file_named(L, "rank-0/synced.rec");
    int df = file_named(L, "rank-0/data.mdb");
    int cf = sf >= 0 ? sf : df;
    int64_t last_commit = -1, pending[4096], snap[4096];
    uint64_t ptid[4096];
    size_t np = 0, ns = 0, shead = 0;
    *lo = -1;
    *hi = 0;
    for (size_t i = 0; i < c; i++) {
        const struct rec *r = &L->r[i];
        if (is_mark(r, "commit"))
            last_commit = (int64_t)r->h.off;
        else if (is_mark(r, "pre") && (int64_t)r->h.off > *hi)
            *hi = (int64_t)r->h.off;
        else if (is_mark(r, "closed") && (int64_t)r->h.off > *lo)
            *lo = (int64_t)r->h.off;
        else if (cf == sf && r->h.file == (uint32_t)df && r->h.type == SHIM_READ && ns < 4096)
            snap[ns++] = last_commit;
        else if (r->h.file == (uint32_t)cf && r->h.type == SHIM_SYNC_BEGIN && np < 4096) {
            ptid[np] = r->h.off;
            pending[np++] = cf != sf ? last_commit : shead < ns ? snap[shead++] : -1;
        } else if (r->h.file == (uint32_t)cf && r->h.type == SHIM_SYNC_END && r->h.off != 0) {
            for (size_t j = np; j-- > 0;)
                if (ptid[j] == r->h.off) {
                    if (pending[j] > *lo)
                        *lo = pending[j];
                    ptid[j] = 0;
                    break;
                }
        } else if (r->h.file == (uint32_t)cf && r->h.type == SHIM_WRITE_DURABLE &&
                   last_commit > *lo) {
            *lo = last_commit;
        }
    }
}

/* The largest id handed out before crash point c (0 if none). */
static uint64_t max_id_before(const struct logf *L, size_t c)
{
    uint64_t id = 0;
    for (size_t i = 0; i < c; i++)
        if (is_mark(&L->r[i], "id") && L->r[i].h.off > id)
            id = L->r[i].h.off;
    return id;
}

/* The commit points of the log (values of "commit" marks). */
static int is_commit_point(const struct logf *L, int64_t m)
{
    for (size_t i = 0; i < L->n; i++)
        if (is_mark(&L->r[i], "commit") && (int64_t)L->r[i].h.off == m)
            return 1;
    return 0;
}

struct filebuf {
    uint8_t *p;
    size_t len, cap;
};

static void fb_size(struct filebuf *b, size_t n)
{
    if (n > b->cap) {
        size_t nc = b->cap ? b->cap : 65536;
        while (nc < n)
            nc *= 2;
        b->p = realloc(b->p, nc);
        b->cap = nc;
    }
    if (n > b->len)
        memset(b->p + b->len, 0, n - b->len);
    b->len = n;
}

static void fb_write(struct filebuf *b, uint64_t off, const uint8_t *d, size_t n)
{
    if (off + n > b->len)
        fb_size(b, off + n);
    memcpy(b->p + off, d, n);
}

static const char *const variant_name[] = {"durable only", "all", "half", "torn sectors",
                                           "a prefix", "small first"};

/* Build the image of crash point c, variant v, in dir/ (the workload's
 * own root: each file is rewritten in place, so it keeps its inode, as a
 * file does across a power loss): the files of the log except LMDB's lock
 * file (removed: LMDB makes a new one) and the lock files. */
static int build_image(const struct logf *L, size_t c, int v, const char *dir)
{
    struct filebuf fb[64];
    memset(fb, 0, sizeof fb);
    size_t cut = c ? (size_t)(rnd() % c) : 0; /* variant 4: non-durable writes before it */
    for (size_t i = 0; i < c; i++) {
        const struct rec *r = &L->r[i];
        int w = r->h.type == SHIM_WRITE || r->h.type == SHIM_WRITE_DURABLE;
        if (!w && r->h.type != SHIM_TRUNC)
            continue;
        int durable = L->durable_at[i] <= (int64_t)c;
        int apply = durable, torn = 0;
        if (!durable) {
            switch (v) {
            case 0: apply = 0; break;
            case 1: apply = 1; break;
            case 2: apply = rnd() & 1; break;
            case 3: {
                unsigned x = (unsigned)(rnd() % 10);
                apply = x < 7;
                torn = x >= 4;
                break;
            }
            case 4: apply = i < cut; break;
            case 5: apply = (rnd() % 10) < (r->h.len <= 512 ? 8u : 2u); break;
            }
        }
        if (!apply)
            continue;
        struct filebuf *b = &fb[r->h.file];
        if (r->h.type == SHIM_TRUNC) {
            if (r->h.off < b->len)
                b->len = r->h.off;
            else
                fb_size(b, r->h.off);
            continue;
        }
        if (!torn) {
            fb_write(b, r->h.off, r->data, r->h.len);
            continue;
        }
        /* torn: each 512-byte sector of the write (by file offset) or not */
        uint64_t o = r->h.off, end = r->h.off + r->h.len;
        while (o < end) {
            uint64_t se = (o / 512 + 1) * 512;
            if (se > end)
                se = end;
            if (rnd() & 1)
                fb_write(b, o, r->data + (o - r->h.off), se - o);
            o = se;
        }
    }
    char p[1024];
    snprintf(p, sizeof p, "%s/rank-0", dir);
    mkdir(dir, 0700);
    mkdir(p, 0700);
    int rc = 0;
    for (int f = 0; f < L->nfile; f++) {
        const char *name = L->file[f];
        size_t nl = strlen(name);
        if (nl >= 8 && strcmp(name + nl - 8, "lock.mdb") == 0) {
            snprintf(p, sizeof p, "%s/%s", dir, name);
            unlink(p);
            continue;
        }
        if (nl >= 5 && strcmp(name + nl - 5, ".lock") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, name);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || (fb[f].len && write(fd, fb[f].p, fb[f].len) != (ssize_t)fb[f].len))
            rc = -1;
        if (fd >= 0)
            close(fd);
    }
    for (int f = 0; f < 64; f++)
        free(fb[f].p);
    return rc;
}

/* The child's verdict, written to a pipe. */
struct verdict {
    int reader_rc, writer_rc, close_rc;
    int64_t reader_m, writer_m;
    int bad; /* 0 ok */
    char why[600];
};

/* What an open of the crash image must see: `who` names it in messages
 * (`info_who` for a failed ckpt_store_info, verdict bad_info; `who` for a
 * wrong state, bad_state); its mutations a commit point in [min, hi] (the
 * message says the range lo..hi) with the workload's records up to it. */
struct seen {
    const char *info_who, *who;
    int bad_info, bad_state;
    int64_t min, lo, hi;
};

/* 0, or -1 with v->bad and v->why set; *m: the mutations st holds */
static int check_seen(ckpt_store *st, const struct seen *s, uint64_t seed, const struct logf *L,
                      int64_t *m, struct verdict *v)
{
    static struct plm pm;
    struct ckpt_store_info info;
    if (ckpt_store_info(&info, st) != 0) {
        v->bad = s->bad_info;
        snprintf(v->why, sizeof v->why, "%s: ckpt_store_info: %s", s->info_who,
                 ckpt_errmsg());
        return -1;
    }
    *m = (int64_t)info.mutations;
    plm_replay(&pm, seed, info.mutations);
    if (!is_commit_point(L, *m) || *m > s->hi || *m < s->min ||
        plm_check(st, &pm, v->why, sizeof v->why) != 0) {
        v->bad = s->bad_state;
        size_t n = strlen(v->why);
        snprintf(v->why + n, sizeof v->why - n, " (%s: %lld mutations; allowed %lld..%lld)", s->who,
                 (long long)*m, (long long)s->lo, (long long)s->hi);
        return -1;
    }
    return 0;
}

static void child_check(const char *dir, int mode, uint64_t seed, int64_t lo, int64_t hi,
                        uint64_t max_id, const struct logf *L, struct verdict *v)
{
    ckpt_store *st = NULL;
    memset(v, 0, sizeof *v);
    v->reader_m = v->writer_m = -1;
    ckpt_fault_guard_install();
    /* a reader first: it changes nothing */
    v->reader_rc = ckpt_store_open_readonly(&st, dir, 0);
    if (v->reader_rc == 0) {
        struct seen r = {"reader", "reader", 1, 2, INT64_MIN, lo, hi};
        int bad = check_seen(st, &r, seed, L, &v->reader_m, v);
        ckpt_store_close(st);
        if (bad)
            return;
    } else if (v->reader_rc > 0 || v->reader_rc < -22 || ckpt_errmsg()[0] == 0) {
        v->bad = 3;
        snprintf(v->why, sizeof v->why, "reader refused with rc %d and message \"%s\"", v->reader_rc,
                 ckpt_errmsg());
        return;
    }
    /* then as a restart opens it */
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    o.root = dir;
    o.sync_mode = mode;
    o.create = 0;
    o.commit_ms = 0;
    v->writer_rc = ckpt_store_open(&st, &o);
    if (v->writer_rc != 0) {
        snprintf(v->why, sizeof v->why, "writer refused (%s): %s", ckpt_errname(v->writer_rc),
                 ckpt_errmsg());
        if (lo >= 0 || v->writer_rc > 0 || v->writer_rc < -22)
            v->bad = 4;
        return;
    }
    struct seen w = {"writer", "restart", 5, 6, lo, lo, hi};
    if (check_seen(st, &w, seed, L, &v->writer_m, v) != 0) {
        ckpt_store_discard(st);
        return;
    }
    uint64_t id = 0;
    int rc = ckpt_store_next_id(&id, st);
    if (rc != 0 || id <= max_id) {
        v->bad = 8;
        if (rc != 0)
            snprintf(v->why, sizeof v->why, "restart: next id: %s", ckpt_errmsg());
        else
            snprintf(v->why, sizeof v->why, "restart: new id %llu, but the workload was handed "
                     "id %llu before the crash: handed out twice", (unsigned long long)id,
                     (unsigned long long)max_id);
        ckpt_store_discard(st);
        return;
    }
    v->close_rc = ckpt_store_close(st);
    if (v->close_rc != 0) {
        v->bad = 7;
        snprintf(v->why, sizeof v->why, "close after the restart: %s", ckpt_errmsg());
    }
    ckpt_store_wait_closed();
}

/* Check one image; 0 if it passed. */
static int check_image(const struct logf *L, const char *dir, int mode, uint64_t seed, size_t c,
                       int variant, const char *wname)
{
    int64_t lo, hi;
    int pfd[2];
    struct verdict v;
    bounds(L, mode, c, &lo, &hi);
    if (pipe(pfd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        setenv("PDC_CKPT_TEST_BOOT_ID", "powerloss-test-after-the-crash", 1);
        child_check(dir, mode, seed, lo, hi, max_id_before(L, c), L, &v);
        ssize_t w = write(pfd[1], &v, sizeof v);
        _exit(w == (ssize_t)sizeof v ? 0 : 3);
    }
    close(pfd[1]);
    memset(&v, 0, sizeof v);
    ssize_t got = read(pfd[0], &v, sizeof v);
    close(pfd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    total_images++;
    const char *fail = NULL;
    char why[800];
    if (WIFSIGNALED(st)) {
        snprintf(why, sizeof why, "died by signal %d", WTERMSIG(st));
        fail = why;
    } else if (got != (ssize_t)sizeof v || WEXITSTATUS(st) != 0) {
        snprintf(why, sizeof why, "the checking child failed (exit %d)", WEXITSTATUS(st));
        fail = why;
    } else if (v.bad) {
        snprintf(why, sizeof why, "%s", v.why);
        fail = why;
    }
    if (!fail) {
        reader_refused += v.reader_rc != 0;
        writer_refused += v.writer_rc != 0;
        rolled_older += v.writer_rc == 0 && hi > v.writer_m;
        if (v.writer_rc == 0) {
            char *argv[] = {(char *)inspect_exe, "verify", (char *)dir, NULL};
            char *env[] = {"PDC_CKPT_TEST_BOOT_ID=powerloss-test-after-the-crash", NULL};
            int rc = run(argv, env, 1);
            if (rc != 0) {
                snprintf(why, sizeof why, "ckpt-inspect verify: exit %d after the restart came back "
                         "to %lld mutations", rc, (long long)v.writer_m);
                fail = why;
            }
        }
    }
    if (fail) {
        total_fail++;
        fprintf(stderr, "FAIL %s, crash point %zu of %zu (%s): %s\n", wname, c, L->n,
                variant_name[variant], fail);
        return 1;
    }
    return 0;
}

struct workload {
    const char *mode;
    uint64_t seed;
    unsigned n, k;
    int sessions;
};

static int run_workload(const struct workload *w, unsigned images)
{
    char root[600], logp[600], img[600], wname[128];
    char e1[700], e2[700], e3[700], e4[200];
    int mode = ckpt_sync_mode_parse(w->mode);
    snprintf(wname, sizeof wname, "%s seed %llu n %u k %u sessions %d", w->mode,
             (unsigned long long)w->seed, w->n, w->k, w->sessions);
    snprintf(root, sizeof root, "%s/w", tmp);
    snprintf(logp, sizeof logp, "%s/log", tmp);
    snprintf(img, sizeof img, "%s/w", tmp); /* images in place (inodes kept) */
    rmtree(root);
    unlink(logp);
    mkdir(root, 0700);
    char sn[32], sk[32], ss[32], sd[32];
    snprintf(sn, sizeof sn, "%u", w->n);
    snprintf(sk, sizeof sk, "%u", w->k);
    snprintf(ss, sizeof ss, "%d", w->sessions);
    snprintf(sd, sizeof sd, "%llu", (unsigned long long)w->seed);
    snprintf(e1, sizeof e1, "LD_PRELOAD=%s", shim_so);
    snprintf(e2, sizeof e2, "CKPT_SHIM_DIR=%s", root);
    snprintf(e3, sizeof e3, "CKPT_SHIM_LOG=%s", logp);
    const char *ao = getenv("ASAN_OPTIONS");
    snprintf(e4, sizeof e4, "ASAN_OPTIONS=%s%sverify_asan_link_order=0", ao ? ao : "",
             ao ? ":" : "");
    char *argv[] = {(char *)workload_exe, root, (char *)w->mode, sd, sn, sk, ss, NULL};
    char *env[] = {e1, e2, e3, e4, NULL};
    int rc = run(argv, env, 0);
    if (rc != 0) {
        fprintf(stderr, "FAIL %s: the workload exited with %d\n", wname, rc);
        total_fail++;
        return 1;
    }
    struct logf L;
    memset(&L, 0, sizeof L);
    if (load_log(&L, logp) != 0 || L.n == 0 || file_named(&L, "rank-0/data.mdb") < 0) {
        fprintf(stderr, "FAIL %s: no usable record of its writes in %s (is the shim preloaded?)\n",
                wname, logp);
        total_fail++;
        return 1;
    }
    size_t nsync = 0, nwrite = 0;
    for (size_t i = 0; i < L.n; i++) {
        nsync += L.r[i].h.type == SHIM_SYNC_END;
        nwrite += L.r[i].h.type == SHIM_WRITE || L.r[i].h.type == SHIM_WRITE_DURABLE;
    }
    /* crash points: just after each completed sync (half of them, when
     * there are many), and anywhere */
    size_t *ends = malloc((nsync + 1) * sizeof *ends), ne = 0;
    for (size_t i = 0; i < L.n; i++)
        if (L.r[i].h.type == SHIM_SYNC_END)
            ends[ne++] = i + 1;
    unsigned fails = 0;
    const int stop = getenv("CKPT_POWERLOSS_STOP") != NULL; /* keep the first failing image */
    for (unsigned i = 0; i < images && !(stop && fails); i++) {
        size_t c;
        if ((i & 1) && ne)
            c = ends[rnd() % ne] + (size_t)(rnd() % 3);
        else
            c = 1 + (size_t)(rnd() % L.n);
        if (c > L.n)
            c = L.n;
        int variant = (int)(rnd() % 6);
        if (build_image(&L, c, variant, img) != 0) {
            fprintf(stderr, "FAIL %s: cannot write the image\n", wname);
            total_fail++;
            fails++;
            continue;
        }
        fails += check_image(&L, img, mode, w->seed, c, variant, wname) != 0;
    }
    /* and, every time: a crash right after each id was handed out, with
     * every write not yet durable lost (the first: a restart that
     * committed nothing since its open) */
    unsigned at_ids = 0;
    for (size_t i = 0; i < L.n && !(stop && fails); i++) {
        if (!is_mark(&L.r[i], "id"))
            continue;
        at_ids++;
        if (build_image(&L, i + 1, 0, img) != 0) {
            fprintf(stderr, "FAIL %s: cannot write the image\n", wname);
            total_fail++;
            fails++;
            continue;
        }
        fails += check_image(&L, img, mode, w->seed, i + 1, 0, wname) != 0;
    }
    printf("%s: %zu records, %zu writes, %zu syncs; %u images and %u right after an id, %u "
           "failed\n", wname, L.n, nwrite, nsync, images, at_ids, fails);
    fflush(stdout);
    free(ends);
    free_log(&L);
    return fails != 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s WORKLOAD SHIM INSPECT IMAGES [SEED]\n", argv[0]);
        return 2;
    }
    workload_exe = argv[1];
    shim_so = argv[2];
    inspect_exe = argv[3];
    unsigned images = (unsigned)strtoul(argv[4], NULL, 10);
    uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 10) : 20261202;
    if (getenv("CKPT_POWERLOSS_SEED"))
        seed = strtoull(getenv("CKPT_POWERLOSS_SEED"), NULL, 10);
    rnd_state = seed;
    const char *t = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/ckpt-powerloss-XXXXXX", t && *t ? t : "/tmp");
    if (mkdtemp(tmp) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    /* the short run: one workload per mode; the long one (IMAGES >= 1000)
     * adds commit sizes, seeds and a last session that ends without close */
    static const struct workload shortw[] = {
        {"close", 1, 1200, 20, 2},
        {"interval", 2, 1200, 20, 2},
        {"sync", 3, 600, 20, 2},
    };
    static const struct workload longw[] = {
        {"close", 11, 2000, 20, 2},    {"close", 12, 1500, 7, -2},   {"close", 13, 3000, 60, 3},
        {"interval", 21, 2000, 20, 2}, {"interval", 22, 1500, 7, -2}, {"interval", 23, 3000, 60, 3},
        {"sync", 31, 800, 20, 2},      {"sync", 32, 600, 7, -2},      {"sync", 33, 1500, 60, 3},
    };
    const struct workload *ws = images >= 1000 ? longw : shortw;
    size_t nw = images >= 1000 ? sizeof longw / sizeof longw[0] : sizeof shortw / sizeof shortw[0];
    printf("seed %llu (CKPT_POWERLOSS_SEED)\n", (unsigned long long)seed);
    /* CKPT_POWERLOSS_ONLY=i: only workload i of the list (all the images) */
    const char *only = getenv("CKPT_POWERLOSS_ONLY");
    for (size_t i = 0; i < nw; i++) {
        unsigned share = images / (unsigned)nw + (i < images % nw);
        if (only) {
            if ((size_t)atoi(only) != i)
                continue;
            share = images;
        }
        run_workload(&ws[i], share);
    }
    printf("%llu crash images: %llu failed; the reader refused %llu (needs a restart first), the "
           "restart refused %llu (before any completed sync), came back older than the newest "
           "possible commit %llu\n",
           total_images, total_fail, reader_refused, writer_refused, rolled_older);
    if (total_fail == 0)
        rmtree(tmp);
    else
        fprintf(stderr, "images and records left in %s\n", tmp);
    return total_fail != 0;
}
