/*
 * legacy_import.c - import PDC legacy checkpoint files into a new pdc-ckpt
 * store (legacy.h).
 *
 * Phases:
 *   1. check the target root (absent, or an empty directory);
 *   2. parse every file, then cross-check them all (ids and names unique,
 *      no id shared by an object and a container, tag names storable);
 *   3. plan: route objects and containers to their home ranks, attach
 *      data-server regions to their objects, rebuild container membership
 *      from the objects' cont_id, find the highest imported id of every
 *      rank's id range;
 *   4. write rank by rank through the hooks into <root>.import-XXXXXX,
 *      close (commit + sync) every rank, fsync the directories, rename the
 *      temporary root to <root> and fsync its parent.
 * A failure in any phase removes the temporary root: nothing is left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "legacy.h"

#define ID_BASE 1000000000ull
#define MAX_RANKS (1 << 20)
#define DEFAULT_COMMIT_EVERY 4096u

static const char *const skip_reasons[LEGACY_SKIP_COUNT] = {
    "duplicate kvtag name on an object: the last copy in the file wins",
    "duplicate region geometry on an object: the last one wins",
    "data-server region of an object that is in none of the files",
    "region with ndim 0 (no geometry)",
    "membership not rebuilt: the object's cont_id names no container in the files",
};

const char *legacy_skip_reason(int kind)
{
    return kind >= 0 && kind < LEGACY_SKIP_COUNT ? skip_reasons[kind] : "unknown";
}

/* ---- state ---- */

struct gobj {
    const struct legacy_obj *lo;
    const struct legacy_file *f;
    int home;
    size_t first_ds, n_ds;      /* range of ctx.dsrefs */
};

struct gcont {
    const struct legacy_cont *lc;
    const struct legacy_file *f;
    int home;
    size_t first_member, n_member; /* range of ctx.members */
};

struct idref {
    uint64_t id;
    size_t idx;
};

/* A region to write: its record, where it came from, its order. */
struct rref {
    const struct legacy_region *r;
    const struct legacy_file *f;
    size_t seq;
    int ds;
};

struct member {
    size_t cont;                /* index into ctx.conts */
    uint64_t obj_id;
};

struct tref {
    const struct legacy_kvtag *t;
    size_t i;
};

struct ctx {
    const struct legacy_import_opts *o;
    struct legacy_import_stats *st;
    char *err;
    size_t errlen;

    struct legacy_file **files;
    size_t nfiles;

    struct gobj *objs;
    size_t nobjs;
    struct idref *obj_ids;      /* sorted by id */
    struct gcont *conts;
    size_t nconts;
    struct idref *cont_ids;     /* sorted by id */
    struct rref *dsrefs;        /* data-server regions, grouped by object */
    size_t ndsrefs;
    struct member *members;     /* sorted by (cont, obj_id) */
    uint64_t *member_ids;       /* members[i].obj_id, contiguous per container */
    size_t nmembers;
    uint64_t *max_id;           /* per rank: highest imported id in its range, 0 if none */
    size_t *rank_objs, *rank_obj_start; /* objects by home rank, in id order */
    size_t *rank_conts, *rank_cont_start;

    /* scratch for one object's kvtags / regions */
    struct tref *tscratch;
    size_t tscratch_cap;
    struct rref *rscratch;
    size_t rscratch_cap;

    uint64_t staged;            /* records staged, for test_fail_after */
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int ierr(struct ctx *c, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "%s", msg);
    return ckpt_error(code, "%s", msg);
}

static int nomem(struct ctx *c, const char *what)
{
    return ierr(c, CKPT_E_NOMEM, "legacy import: out of memory for %s", what);
}

static void *xcalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void note_skip(struct ctx *c, int kind, uint64_t n, const char *fmt, ...)
{
    struct legacy_import_stats *s = c->st;
    if (n == 0)
        return;
    if (s->skip[kind] == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->skip_first[kind], sizeof s->skip_first[kind], fmt, ap);
        va_end(ap);
    }
    s->skip[kind] += n;
    s->skipped += n;
}

/* ---- sorting helpers ---- */

static int cmp_idref(const void *a, const void *b)
{
    const struct idref *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const struct idref *find_id(const struct idref *arr, size_t n, uint64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (arr[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && arr[lo].id == id ? &arr[lo] : NULL;
}

static int cmp_gobj_name(const void *a, const void *b)
{
    const struct gobj *x = *(const struct gobj *const *)a, *y = *(const struct gobj *const *)b;
    int c = strcmp(x->lo->obj.obj_name, y->lo->obj.obj_name);
    if (c)
        return c;
    return x->lo->obj.time_step < y->lo->obj.time_step ? -1
                                                         : x->lo->obj.time_step > y->lo->obj.time_step;
}

static int cmp_gcont_name(const void *a, const void *b)
{
    const struct gcont *x = *(const struct gcont *const *)a, *y = *(const struct gcont *const *)b;
    return strcmp(x->lc->cont.cont_name, y->lc->cont.cont_name);
}

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->cont != y->cont)
        return x->cont < y->cont ? -1 : 1;
    return x->obj_id < y->obj_id ? -1 : x->obj_id > y->obj_id;
}

static int cmp_tref(const void *a, const void *b)
{
    const struct tref *x = a, *y = b;
    int c = strcmp(x->t->tag.name, y->t->tag.name);
    if (c)
        return c;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_geom(const struct ckpt_region *x, const struct ckpt_region *y)
{
    if (x->ndim != y->ndim)
        return x->ndim < y->ndim ? -1 : 1;
    for (uint32_t d = 0; d < x->ndim; d++)
        if (x->start[d] != y->start[d])
            return x->start[d] < y->start[d] ? -1 : 1;
    for (uint32_t d = 0; d < x->ndim; d++)
        if (x->count[d] != y->count[d])
            return x->count[d] < y->count[d] ? -1 : 1;
    return 0;
}

static int cmp_rref(const void *a, const void *b)
{
    const struct rref *x = a, *y = b;
    int c = cmp_geom(&x->r->reg, &y->r->reg);
    if (c)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- phase 1: the target root ---- */

/* Strip trailing slashes into a new string; parent directory too. */
static int split_root(struct ctx *c, const char *root, char **norm, char **parent)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 0 || (n == 1 && root[0] == '/'))
        return ierr(c, CKPT_E_INVAL, "legacy import: \"%s\" cannot be a store root", root);
    if (n > 4000)
        return ierr(c, CKPT_E_NAMETOOLONG, "legacy import: store root of %zu bytes is too long", n);
    if ((*norm = malloc(n + 1)) == NULL || (*parent = malloc(n + 2)) == NULL) {
        free(*norm);
        *norm = NULL;
        return nomem(c, "the root path");
    }
    memcpy(*norm, root, n);
    (*norm)[n] = 0;
    const char *slash = strrchr(*norm, '/');
    if (slash == NULL)
        strcpy(*parent, ".");
    else if (slash == *norm)
        strcpy(*parent, "/");
    else {
        memcpy(*parent, *norm, (size_t)(slash - *norm));
        (*parent)[slash - *norm] = 0;
    }
    return 0;
}

/* The root must not exist, or be an empty directory (not a symlink). */
static int check_root(struct ctx *c, const char *root)
{
    struct stat sb;
    if (lstat(root, &sb) != 0) {
        if (errno == ENOENT)
            return 0;
        return ierr(c, CKPT_E_SYS, "legacy import: %s: cannot stat the store root (%s)", root,
                    strerror(errno));
    }
    if (S_ISLNK(sb.st_mode))
        return ierr(c, CKPT_E_INVAL, "legacy import: %s is a symbolic link; give the real path of "
                    "the new store root", root);
    if (!S_ISDIR(sb.st_mode))
        return ierr(c, CKPT_E_EXISTS, "legacy import: %s exists and is not a directory", root);
    DIR *d = opendir(root);
    if (d == NULL)
        return ierr(c, CKPT_E_PERM, "legacy import: %s: cannot read the store root (%s)", root,
                    strerror(errno));
    struct dirent *de;
    int empty = 1;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    closedir(d);
    if (!empty)
        return ierr(c, CKPT_E_EXISTS, "legacy import: %s is not empty (it may hold a store); "
                    "import only into a new or empty directory", root);
    return 0;
}


static int fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int rc = fsync(fd) == 0 ? 0 : errno;
    close(fd);
    return rc == EINVAL ? 0 : rc; /* some file systems cannot sync directories */
}

/* ---- phase 2: parse and cross-check ---- */

static int parse_all(struct ctx *c, const char *const *paths)
{
    for (size_t i = 0; i < c->nfiles; i++) {
        int rc = legacy_file_read(&c->files[i], paths[i], c->err, c->errlen);
        if (rc)
            return rc;
        c->st->files++;
        c->st->bytes += c->files[i]->size;
    }
    return 0;
}

static int index_records(struct ctx *c)
{
    size_t no = 0, nc = 0;
    for (size_t i = 0; i < c->nfiles; i++) {
        no += c->files[i]->n_objs;
        nc += c->files[i]->n_conts;
    }
    c->nobjs = no;
    c->nconts = nc;
    if ((c->objs = xcalloc(no, sizeof *c->objs)) == NULL ||
        (c->obj_ids = xcalloc(no, sizeof *c->obj_ids)) == NULL ||
        (c->conts = xcalloc(nc, sizeof *c->conts)) == NULL ||
        (c->cont_ids = xcalloc(nc, sizeof *c->cont_ids)) == NULL)
        return nomem(c, "the record index");
    no = nc = 0;
    for (size_t i = 0; i < c->nfiles; i++) {
        const struct legacy_file *f = c->files[i];
        for (size_t j = 0; j < f->n_objs; j++, no++) {
            c->objs[no].lo = &f->objs[j];
            c->objs[no].f = f;
            c->obj_ids[no].id = f->objs[j].obj.obj_id;
            c->obj_ids[no].idx = no;
        }
        for (size_t j = 0; j < f->n_conts; j++, nc++) {
            c->conts[nc].lc = &f->conts[j];
            c->conts[nc].f = f;
            c->cont_ids[nc].id = f->conts[j].cont.cont_id;
            c->cont_ids[nc].idx = nc;
        }
    }
    qsort(c->obj_ids, c->nobjs, sizeof *c->obj_ids, cmp_idref);
    qsort(c->cont_ids, c->nconts, sizeof *c->cont_ids, cmp_idref);
    return 0;
}

static int cross_check(struct ctx *c)
{
    /* duplicate ids */
    for (size_t i = 1; i < c->nobjs; i++)
        if (c->obj_ids[i].id == c->obj_ids[i - 1].id) {
            const struct gobj *a = &c->objs[c->obj_ids[i - 1].idx], *b = &c->objs[c->obj_ids[i].idx];
            return ierr(c, CKPT_E_INVAL, "%s: byte %zu: obj_id %llu is also the id of the object at "
                        "%s: byte %zu", b->f->name, b->lo->offset + 2064,
                        (unsigned long long)c->obj_ids[i].id, a->f->name, a->lo->offset + 2064);
        }
    for (size_t i = 1; i < c->nconts; i++)
        if (c->cont_ids[i].id == c->cont_ids[i - 1].id) {
            const struct gcont *a = &c->conts[c->cont_ids[i - 1].idx];
            const struct gcont *b = &c->conts[c->cont_ids[i].idx];
            return ierr(c, CKPT_E_INVAL, "%s: byte %zu: cont_id %llu is also the id of the container "
                        "at %s: byte %zu", b->f->name, b->lc->offset + 4,
                        (unsigned long long)c->cont_ids[i].id, a->f->name, a->lc->offset + 4);
        }
    /* an id used by both an object and a container (they share one
     * sequence, and kvtags are keyed by owner id) */
    for (size_t i = 0, j = 0; i < c->nobjs && j < c->nconts;) {
        if (c->obj_ids[i].id < c->cont_ids[j].id) {
            i++;
        } else if (c->obj_ids[i].id > c->cont_ids[j].id) {
            j++;
        } else {
            const struct gobj *a = &c->objs[c->obj_ids[i].idx];
            const struct gcont *b = &c->conts[c->cont_ids[j].idx];
            return ierr(c, CKPT_E_INVAL, "%s: byte %zu: obj_id %llu is also the id of the container "
                        "at %s: byte %zu", a->f->name, a->lo->offset + 2064,
                        (unsigned long long)c->obj_ids[i].id, b->f->name, b->lc->offset + 4);
        }
    }
    /* duplicate names: (obj_name, time_step) and cont_name */
    int rc = 0;
    if (c->nobjs > 1) {
        const struct gobj **v = malloc(c->nobjs * sizeof *v);
        if (v == NULL)
            return nomem(c, "the name check");
        for (size_t i = 0; i < c->nobjs; i++)
            v[i] = &c->objs[i];
        qsort(v, c->nobjs, sizeof *v, cmp_gobj_name);
        for (size_t i = 1; i < c->nobjs && rc == 0; i++)
            if (cmp_gobj_name(&v[i - 1], &v[i]) == 0)
                rc = ierr(c, CKPT_E_INVAL, "%s: byte %zu: object \"%.200s\" at time_step %d (id %llu) "
                          "also exists as id %llu at %s: byte %zu", v[i]->f->name,
                          v[i]->lo->offset + 1028, v[i]->lo->obj.obj_name, (int)v[i]->lo->obj.time_step,
                          (unsigned long long)v[i]->lo->obj.obj_id,
                          (unsigned long long)v[i - 1]->lo->obj.obj_id, v[i - 1]->f->name,
                          v[i - 1]->lo->offset + 1028);
        free(v);
        if (rc)
            return rc;
    }
    if (c->nconts > 1) {
        const struct gcont **v = malloc(c->nconts * sizeof *v);
        if (v == NULL)
            return nomem(c, "the name check");
        for (size_t i = 0; i < c->nconts; i++)
            v[i] = &c->conts[i];
        qsort(v, c->nconts, sizeof *v, cmp_gcont_name);
        for (size_t i = 1; i < c->nconts && rc == 0; i++)
            if (cmp_gcont_name(&v[i - 1], &v[i]) == 0)
                rc = ierr(c, CKPT_E_INVAL, "%s: byte %zu: container \"%.200s\" (id %llu) also exists "
                          "as id %llu at %s: byte %zu", v[i]->f->name, v[i]->lc->offset + 12,
                          v[i]->lc->cont.cont_name, (unsigned long long)v[i]->lc->cont.cont_id,
                          (unsigned long long)v[i - 1]->lc->cont.cont_id, v[i - 1]->f->name,
                          v[i - 1]->lc->offset + 12);
        free(v);
        if (rc)
            return rc;
    }
    /* tag names the store can key */
    for (size_t i = 0; i < c->nfiles; i++) {
        const struct legacy_file *f = c->files[i];
        for (size_t j = 0; j < f->n_kvtags; j++) {
            size_t n = strlen(f->kvtags[j].tag.name);
            if (n > CKPT_NAME_MAX)
                return ierr(c, CKPT_E_NAMETOOLONG, "%s: byte %zu: kvtag name of %zu bytes is longer "
                            "than the store's limit of %u", f->name, f->kvtags[j].offset, n,
                            CKPT_NAME_MAX);
        }
    }
    return 0;
}

/* ---- phase 3: plan ---- */

static int plan_regions(struct ctx *c)
{
    size_t total = 0;
    /* count data-server regions per object */
    for (size_t i = 0; i < c->nfiles; i++) {
        const struct legacy_file *f = c->files[i];
        for (size_t j = 0; j < f->n_ds; j++) {
            const struct legacy_ds *d = &f->ds[j];
            const struct idref *r = find_id(c->obj_ids, c->nobjs, d->obj_id);
            if (r == NULL) {
                note_skip(c, LEGACY_SKIP_ORPHAN_REGION, d->n_region,
                          "%s: byte %zu: %zu data-server region(s) of object %llu", f->name,
                          d->offset, d->n_region, (unsigned long long)d->obj_id);
                continue;
            }
            c->objs[r->idx].n_ds += d->n_region;
            total += d->n_region;
        }
    }
    if ((c->dsrefs = xcalloc(total, sizeof *c->dsrefs)) == NULL)
        return nomem(c, "the region plan");
    size_t pos = 0;
    for (size_t i = 0; i < c->nobjs; i++) {
        c->objs[i].first_ds = pos;
        pos += c->objs[i].n_ds;
        c->objs[i].n_ds = 0;
    }
    size_t seq = 0;
    for (size_t i = 0; i < c->nfiles; i++) {
        const struct legacy_file *f = c->files[i];
        for (size_t j = 0; j < f->n_ds; j++) {
            const struct legacy_ds *d = &f->ds[j];
            const struct idref *r = find_id(c->obj_ids, c->nobjs, d->obj_id);
            if (r == NULL)
                continue;
            struct gobj *g = &c->objs[r->idx];
            for (size_t k = 0; k < d->n_region; k++) {
                struct rref *x = &c->dsrefs[g->first_ds + g->n_ds++];
                x->r = &f->ds_regions[d->first_region + k];
                x->f = f;
                x->seq = seq++;
                x->ds = 1;
            }
        }
    }
    c->ndsrefs = total;
    return 0;
}

static int plan_members(struct ctx *c)
{
    size_t n = 0;
    if ((c->members = xcalloc(c->nobjs, sizeof *c->members)) == NULL)
        return nomem(c, "the membership plan");
    for (size_t i = 0; i < c->nobjs; i++) {
        const struct gobj *g = &c->objs[i];
        uint64_t cid = g->lo->obj.cont_id;
        if (cid == 0)
            continue; /* in no container */
        const struct idref *r = find_id(c->cont_ids, c->nconts, cid);
        if (r == NULL) {
            note_skip(c, LEGACY_SKIP_NO_CONT, 1, "%s: byte %zu: object %llu names container %llu",
                      g->f->name, g->lo->offset + 2072, (unsigned long long)g->lo->obj.obj_id,
                      (unsigned long long)cid);
            continue;
        }
        c->members[n].cont = r->idx;
        c->members[n].obj_id = g->lo->obj.obj_id;
        n++;
    }
    qsort(c->members, n, sizeof *c->members, cmp_member);
    c->nmembers = n;
    if ((c->member_ids = xcalloc(n, sizeof *c->member_ids)) == NULL)
        return nomem(c, "the membership plan");
    for (size_t i = 0; i < n; i++) {
        c->member_ids[i] = c->members[i].obj_id;
        struct gcont *g = &c->conts[c->members[i].cont];
        if (g->n_member == 0)
            g->first_member = i;
        g->n_member++;
    }
    return 0;
}

static void note_id(struct ctx *c, uint64_t id)
{
    uint64_t r = id / ID_BASE;
    if (r >= 1 && r - 1 < (uint64_t)c->o->nranks && id > c->max_id[r - 1])
        c->max_id[r - 1] = id;
}

/* Home ranks, per-rank lists (in id order), highest id per rank range. */
static int plan_ranks(struct ctx *c)
{
    int nr = c->o->nranks;
    size_t *cnt;
    if ((c->max_id = xcalloc((size_t)nr, sizeof *c->max_id)) == NULL ||
        (c->rank_obj_start = xcalloc((size_t)nr + 1, sizeof(size_t))) == NULL ||
        (c->rank_cont_start = xcalloc((size_t)nr + 1, sizeof(size_t))) == NULL ||
        (c->rank_objs = xcalloc(c->nobjs, sizeof(size_t))) == NULL ||
        (c->rank_conts = xcalloc(c->nconts, sizeof(size_t))) == NULL)
        return nomem(c, "the rank plan");
    if ((cnt = xcalloc((size_t)nr + 1, sizeof *cnt)) == NULL)
        return nomem(c, "the rank plan");
    for (size_t i = 0; i < c->nobjs; i++) {
        struct gobj *g = &c->objs[i];
        g->home = ckpt_home_obj(g->lo->obj.obj_name, g->lo->obj.time_step, nr);
        c->rank_obj_start[g->home + 1]++;
        note_id(c, g->lo->obj.obj_id);
    }
    for (size_t i = 0; i < c->nconts; i++) {
        struct gcont *g = &c->conts[i];
        g->home = ckpt_home_cont(g->lc->cont.cont_name, nr);
        c->rank_cont_start[g->home + 1]++;
        note_id(c, g->lc->cont.cont_id);
    }
    for (int r = 0; r < nr; r++) {
        c->rank_obj_start[r + 1] += c->rank_obj_start[r];
        c->rank_cont_start[r + 1] += c->rank_cont_start[r];
    }
    /* walk in id order, so each rank's list is in id order too */
    for (size_t i = 0; i < c->nobjs; i++) {
        size_t idx = c->obj_ids[i].idx;
        int h = c->objs[idx].home;
        c->rank_objs[c->rank_obj_start[h] + cnt[h]++] = idx;
    }
    memset(cnt, 0, ((size_t)nr + 1) * sizeof *cnt);
    for (size_t i = 0; i < c->nconts; i++) {
        size_t idx = c->cont_ids[i].idx;
        int h = c->conts[idx].home;
        c->rank_conts[c->rank_cont_start[h] + cnt[h]++] = idx;
    }
    free(cnt);
    return 0;
}

/* ---- phase 4: write ---- */

/* Count n records about to be staged (test_fail_after). */
static int staged_n(struct ctx *c, int rank, uint64_t n)
{
    c->staged += n;
    if (c->o->test_fail_after && c->staged > c->o->test_fail_after)
        return ierr(c, CKPT_E_IO, "legacy import: rank %d: simulated failure after %llu records "
                    "(test_fail_after)", rank, (unsigned long long)c->o->test_fail_after);
    return 0;
}

static int staged(struct ctx *c, int rank)
{
    return staged_n(c, rank, 1);
}

static int hook_fail(struct ctx *c, int rc, int rank, const char *what, const char *file,
                     size_t off)
{
    char store_msg[600];
    snprintf(store_msg, sizeof store_msg, "%s", ckpt_errmsg());
    return ierr(c, rc, "legacy import: rank %d: writing %s from %s: byte %zu failed: %s (%s)", rank,
                what, file, off, ckpt_strerror(rc), store_msg);
}

static int grow_scratch(struct ctx *c, void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    void *n = realloc(*p, need * elem);
    if (n == NULL)
        return nomem(c, "an object's records");
    *p = n;
    *cap = need;
    return 0;
}

static int write_kvtags(struct ctx *c, ckpt_hooks *h, int rank, const struct gobj *g)
{
    const struct legacy_obj *lo = g->lo;
    size_t n = lo->n_kvtag;
    int rc;
    if (n == 0)
        return 0;
    if ((rc = grow_scratch(c, (void **)&c->tscratch, &c->tscratch_cap, n, sizeof *c->tscratch)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        c->tscratch[i].t = &g->f->kvtags[lo->first_kvtag + i];
        c->tscratch[i].i = i;
    }
    qsort(c->tscratch, n, sizeof *c->tscratch, cmp_tref);
    for (size_t i = 0; i < n; i++) {
        const struct legacy_kvtag *t = c->tscratch[i].t;
        if (i + 1 < n && strcmp(t->tag.name, c->tscratch[i + 1].t->tag.name) == 0) {
            note_skip(c, LEGACY_SKIP_DUP_KVTAG, 1, "%s: byte %zu: object %llu, kvtag \"%.100s\"",
                      g->f->name, t->offset, (unsigned long long)lo->obj.obj_id, t->tag.name);
            continue;
        }
        if ((rc = staged(c, rank)) != 0)
            return rc;
        if ((rc = ckpt_hook_kvtag_put(h, lo->obj.obj_id, &t->tag)) != 0)
            return hook_fail(c, rc, rank, "a kvtag", g->f->name, t->offset);
        c->st->kvtags++;
    }
    return 0;
}

static int write_regions(struct ctx *c, ckpt_hooks *h, int rank, const struct gobj *g)
{
    const struct legacy_obj *lo = g->lo;
    size_t n = 0, need = lo->n_region + g->n_ds;
    int rc;
    if (need == 0)
        return 0;
    if ((rc = grow_scratch(c, (void **)&c->rscratch, &c->rscratch_cap, need, sizeof *c->rscratch)))
        return rc;
    for (size_t i = 0; i < lo->n_region; i++) {
        const struct legacy_region *r = &g->f->regions[lo->first_region + i];
        struct rref x = {r, g->f, i, 0};
        c->rscratch[n++] = x;
    }
    for (size_t i = 0; i < g->n_ds; i++) {
        struct rref x = c->dsrefs[g->first_ds + i];
        x.seq += lo->n_region;
        c->rscratch[n++] = x;
    }
    /* drop ndim-0 regions, then the earlier of equal geometries */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (c->rscratch[i].r->reg.ndim == 0) {
            note_skip(c, LEGACY_SKIP_EMPTY_REGION, 1, "%s: byte %zu: region of object %llu",
                      c->rscratch[i].f->name, c->rscratch[i].r->offset,
                      (unsigned long long)lo->obj.obj_id);
            continue;
        }
        c->rscratch[m++] = c->rscratch[i];
    }
    qsort(c->rscratch, m, sizeof *c->rscratch, cmp_rref);
    for (size_t i = 0; i < m; i++) {
        const struct rref *x = &c->rscratch[i];
        if (i + 1 < m && cmp_geom(&x->r->reg, &c->rscratch[i + 1].r->reg) == 0) {
            note_skip(c, LEGACY_SKIP_DUP_REGION, 1, "%s: byte %zu: region of object %llu",
                      x->f->name, x->r->offset, (unsigned long long)lo->obj.obj_id);
            continue;
        }
        struct ckpt_region reg = x->r->reg;
        reg.obj_id = lo->obj.obj_id;
        if ((rc = staged(c, rank)) != 0)
            return rc;
        if ((rc = ckpt_hook_region_put(h, &reg)) != 0)
            return hook_fail(c, rc, rank, "a region", x->f->name, x->r->offset);
        c->st->regions++;
        if (x->ds)
            c->st->ds_regions++;
        else
            c->st->obj_regions++;
    }
    return 0;
}

static int write_rank(struct ctx *c, const char *tmp_root, int rank)
{
    struct ckpt_hooks_opts ho = CKPT_HOOKS_OPTS_INIT;
    ckpt_hooks *h = NULL;
    int rc;
    ho.store_root = tmp_root;
    ho.rank = rank;
    ho.nranks = c->o->nranks;
    ho.commit_every = c->o->commit_every ? c->o->commit_every : DEFAULT_COMMIT_EVERY;
    ho.commit_ms = 0;
    ho.sync_mode = CKPT_SYNC_CLOSE;
    if ((rc = ckpt_hooks_open(&h, &ho)) != 0) {
        char m[600];
        snprintf(m, sizeof m, "%s", ckpt_errmsg());
        return ierr(c, rc, "legacy import: cannot open rank %d of the new store: %s", rank, m);
    }
    /* containers of this rank */
    for (size_t i = c->rank_cont_start[rank]; i < c->rank_cont_start[rank + 1]; i++) {
        const struct gcont *g = &c->conts[c->rank_conts[i]];
        if ((rc = staged(c, rank)) != 0)
            goto fail;
        if ((rc = ckpt_hook_cont_create(h, &g->lc->cont)) != 0) {
            rc = hook_fail(c, rc, rank, "a container", g->f->name, g->lc->offset);
            goto fail;
        }
        c->st->containers++;
    }
    /* objects with their kvtags and regions */
    for (size_t i = c->rank_obj_start[rank]; i < c->rank_obj_start[rank + 1]; i++) {
        const struct gobj *g = &c->objs[c->rank_objs[i]];
        if ((rc = staged(c, rank)) != 0)
            goto fail;
        if ((rc = ckpt_hook_obj_create(h, &g->lo->obj)) != 0) {
            rc = hook_fail(c, rc, rank, "an object", g->f->name, g->lo->offset);
            goto fail;
        }
        c->st->objects++;
        if ((rc = write_kvtags(c, h, rank, g)) != 0 || (rc = write_regions(c, h, rank, g)) != 0)
            goto fail;
    }
    /* membership of this rank's containers, one call per container (obj
     * ids ascending) */
    for (size_t i = c->rank_cont_start[rank]; i < c->rank_cont_start[rank + 1]; i++) {
        const struct gcont *g = &c->conts[c->rank_conts[i]];
        if (g->n_member == 0)
            continue;
        if ((rc = staged_n(c, rank, g->n_member)) != 0)
            goto fail;
        if ((rc = ckpt_hook_cont_add_objs(h, g->lc->cont.cont_id, &c->member_ids[g->first_member],
                                          g->n_member)) != 0) {
            rc = hook_fail(c, rc, rank, "the members of a container", g->f->name, g->lc->offset);
            goto fail;
        }
        c->st->members += g->n_member;
    }
    /* new ids of this rank start above every imported id of its range */
    if (c->max_id[rank] != 0 &&
        (rc = ckpt_store_reserve_id(ckpt_hooks_store(h), c->max_id[rank])) != 0) {
        rc = hook_fail(c, rc, rank, "the id sequence", "(all files)", 0);
        goto fail;
    }
    if ((rc = ckpt_hooks_close(h)) != 0) {
        char m[600];
        snprintf(m, sizeof m, "%s", ckpt_errmsg());
        rc = ierr(c, rc, "legacy import: closing rank %d of the new store failed: %s", rank, m);
        goto fail;
    }
    return 0;
fail:
    ckpt_hooks_discard(h);
    return rc;
}

static int write_all(struct ctx *c, const char *tmp_root)
{
    int rc;
    for (int r = 0; r < c->o->nranks; r++) {
        if ((rc = write_rank(c, tmp_root, r)) != 0)
            return rc;
        if (c->o->progress)
            c->o->progress(c->o->progress_arg, (uint64_t)r + 1, (uint64_t)c->o->nranks);
    }
    /* data.mdb is synced by close; make the directory entries durable */
    size_t n = strlen(tmp_root) + 32;
    char *p = malloc(n);
    if (p == NULL)
        return nomem(c, "a path");
    for (int r = 0; r < c->o->nranks; r++) {
        snprintf(p, n, "%s/rank-%d", tmp_root, r);
        if ((rc = fsync_dir(p)) != 0) {
            rc = ierr(c, CKPT_E_IO, "legacy import: fsync of %s failed (%s)", p, strerror(rc));
            free(p);
            return rc;
        }
    }
    free(p);
    if ((rc = fsync_dir(tmp_root)) != 0)
        return ierr(c, CKPT_E_IO, "legacy import: fsync of %s failed (%s)", tmp_root, strerror(rc));
    return 0;
}

/* ---- entry points ---- */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ctx_free(struct ctx *c)
{
    if (c->files)
        for (size_t i = 0; i < c->nfiles; i++)
            legacy_file_free(c->files[i]);
    free(c->files);
    free(c->objs);
    free(c->obj_ids);
    free(c->conts);
    free(c->cont_ids);
    free(c->dsrefs);
    free(c->members);
    free(c->member_ids);
    free(c->max_id);
    free(c->rank_objs);
    free(c->rank_obj_start);
    free(c->rank_conts);
    free(c->rank_cont_start);
    free(c->tscratch);
    free(c->rscratch);
}

int legacy_import_ex(const struct legacy_import_opts *o, const char *const *files, size_t nfiles,
                     struct legacy_import_stats *stats, char *err, size_t errlen)
{
    struct legacy_import_stats local;
    struct ctx c;
    char *root = NULL, *parent = NULL, *tmp = NULL;
    int rc;
    double t0 = mono_s();

    memset(&c, 0, sizeof c);
    memset(&local, 0, sizeof local);
    c.o = o;
    c.st = &local;
    c.err = err;
    c.errlen = errlen;
    if (err && errlen)
        err[0] = 0;
    if (o == NULL || o->store_root == NULL || files == NULL || nfiles == 0)
        return ierr(&c, CKPT_E_INVAL, "legacy import: need a store root and at least one file");
    if (o->nranks < 1 || o->nranks > MAX_RANKS)
        return ierr(&c, CKPT_E_INVAL, "legacy import: nranks %d is not in 1..%d", o->nranks,
                    MAX_RANKS);
    for (size_t i = 0; i < nfiles; i++)
        if (files[i] == NULL)
            return ierr(&c, CKPT_E_INVAL, "legacy import: file %zu is NULL", i);
    local.nranks = o->nranks;

    /* 1. the target */
    if ((rc = split_root(&c, o->store_root, &root, &parent)) != 0)
        return rc;
    if ((rc = check_root(&c, root)) != 0)
        goto out;
    /* 2. parse and check everything before writing anything */
    c.nfiles = nfiles;
    if ((c.files = xcalloc(nfiles, sizeof *c.files)) == NULL) {
        rc = nomem(&c, "the file list");
        goto out;
    }
    if ((rc = parse_all(&c, files)) != 0 || (rc = index_records(&c)) != 0 ||
        (rc = cross_check(&c)) != 0)
        goto out;
    /* 3. plan */
    if ((rc = plan_regions(&c)) != 0 || (rc = plan_members(&c)) != 0 ||
        (rc = plan_ranks(&c)) != 0)
        goto out;
    /* 4. write into a temporary sibling, then rename it into place */
    size_t tn = strlen(root) + 32;
    if ((tmp = malloc(tn)) == NULL) {
        rc = nomem(&c, "a path");
        goto out;
    }
    snprintf(tmp, tn, "%s.import-XXXXXX", root);
    if (mkdtemp(tmp) == NULL) {
        rc = ierr(&c, errno == ENOENT ? CKPT_E_NOSTORE : CKPT_E_SYS, "legacy import: cannot create "
                  "the temporary store %s next to the root (%s); the parent directory %s must "
                  "exist and be writable", tmp, strerror(errno), parent);
        free(tmp);
        tmp = NULL;
        goto out;
    }
    if ((rc = write_all(&c, tmp)) != 0)
        goto out;
    {
        /* the stores are closed and nobody else knows this directory: its
         * store.lock (every writer's, ckpt_root_lock) need not move along */
        char lk[4200];
        snprintf(lk, sizeof lk, "%s/store.lock", tmp);
        unlink(lk);
    }
    if (rename(tmp, root) != 0) {
        int e = errno;
        rc = ierr(&c, e == ENOTEMPTY || e == EEXIST || e == ENOTDIR ? CKPT_E_EXISTS : CKPT_E_SYS,
                  "legacy import: cannot rename %s to %s (%s)%s", tmp, root, strerror(e),
                  e == ENOTEMPTY || e == EEXIST ? ": the root was filled while importing" : "");
        goto out;
    }
    free(tmp);
    tmp = NULL; /* in place: nothing to remove any more */
    if ((rc = fsync_dir(parent)) != 0) {
        /* the store is complete and in place; only the rename's durability
         * could not be confirmed */
        rc = ierr(&c, CKPT_E_IO, "legacy import: the store is at %s, but fsync of %s failed (%s)",
                  root, parent, strerror(rc));
        goto out;
    }
    local.seconds = mono_s() - t0;
    if (stats)
        *stats = local;
    rc = 0;
out:
    if (tmp != NULL) {
        ckpt_fs_rmtree(tmp); /* our own mkdtemp root */
        free(tmp);
    }
    ctx_free(&c);
    free(root);
    free(parent);
    return rc;
}

int legacy_import(const char *store_root, int nranks, const char *const *files, size_t nfiles,
                  struct legacy_import_stats *stats, char *err, size_t errlen)
{
    struct legacy_import_opts o = {store_root, nranks, 0, 0, NULL, NULL};
    return legacy_import_ex(&o, files, nfiles, stats, err, errlen);
}

int legacy_import_summary(char *buf, size_t len, const struct legacy_import_stats *s)
{
    int n, total = 0;
    if (s == NULL)
        return 0;
#define ADD(...)                                                                                 \
    do {                                                                                         \
        n = snprintf(buf ? buf + ((size_t)total < len ? (size_t)total : len) : NULL,            \
                     (size_t)total < len ? len - (size_t)total : 0, __VA_ARGS__);               \
        if (n > 0)                                                                               \
            total += n;                                                                          \
    } while (0)
    ADD("imported %llu file(s), %llu bytes, into %d rank(s) in %.3f s\n",
        (unsigned long long)s->files, (unsigned long long)s->bytes, s->nranks, s->seconds);
    ADD("  containers %llu, objects %llu, kvtags %llu, regions %llu (%llu per-object, %llu "
        "data-server), memberships %llu\n",
        (unsigned long long)s->containers, (unsigned long long)s->objects,
        (unsigned long long)s->kvtags, (unsigned long long)s->regions,
        (unsigned long long)s->obj_regions, (unsigned long long)s->ds_regions,
        (unsigned long long)s->members);
    ADD("  skipped %llu\n", (unsigned long long)s->skipped);
    for (int k = 0; k < LEGACY_SKIP_COUNT; k++)
        if (s->skip[k])
            ADD("    %llu: %s (first: %s)\n", (unsigned long long)s->skip[k], legacy_skip_reason(k),
                s->skip_first[k]);
#undef ADD
    return total;
}
