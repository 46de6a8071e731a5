/*
 * elastic.c - restart on a different number of server ranks (re-homing).
 *
 * Protocol (docs/ELASTIC.md):
 *   0. Recovery (rank 0): ROOT/.rehome/COMPLETE present -> roll the
 *      interrupted switch forward; ROOT/.rehome without it -> remove it
 *      (roll back). Either way the store is whole again, on one layout.
 *   1. Copy: old environment i is read, through its map, by new rank
 *      i % P_new. Every record goes, by MPI all-to-all rounds, to its home
 *      under P_new (objects: (djb2(name) + time_step) % P_new, containers:
 *      djb2(name) % P_new, kvtags/regions/members with their owner), plus an
 *      id-directory entry for every id whose directory rank is not its home.
 *      Each rank writes what it receives, and the records it read whose new
 *      home is itself (without a round), into ROOT/.rehome/rank-<r> and
 *      closes it (committed and synced).
 *   2. Commit point: rank 0 writes ROOT/.rehome/COMPLETE (temp file, fsync,
 *      rename, fsync of the directory).
 *   3. Switch (rank 0): old rank-<i> -> ROOT/.rehome-old/, new rank-<r> ->
 *      ROOT/, remove COMPLETE, .rehome and .rehome-old. Every step is
 *      idempotent, so recovery can redo it after a crash.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_hooks_mpi.h"
#include "ckpt_fs.h"
#include "elastic_int.h"

#define RH_NEW ".rehome"
#define RH_OLD ".rehome-old"
#define RH_MARK "COMPLETE"
/* Bytes buffered for sending before an exchange round. */
#define RH_ROUND_BYTES ((size_t)32 << 20)
/* Mutations per commit of the new layout (committed without fsync; the
 * close syncs it). In PDC's server at 10K objects x 100 kvtags, 2,000 to
 * 30,000 re-home in the same time; 100,000 and more take longer. */
#define RH_COMMIT_EVERY 10000


/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void fault_point(const char *name, int rank)
{
    /* Failure injection for the crash tests: PDC_CKPT_FAULT=<point> makes
     * rank 0 die here as a SIGKILL would. */
    const char *f = getenv("PDC_CKPT_FAULT");
    if (rank == 0 && f && strcmp(f, name) == 0)
        raise(SIGKILL);
}

static int write_marker(const char *root, int p_old, int p_new)
{
    char tmp[4200], mark[4200], dir[4200], text[64];
    snprintf(dir, sizeof dir, "%s/" RH_NEW, root);
    snprintf(tmp, sizeof tmp, "%s/" RH_NEW "/" RH_MARK ".tmp", root);
    snprintf(mark, sizeof mark, "%s/" RH_NEW "/" RH_MARK, root);
    int n = snprintf(text, sizeof text, "pdc-ckpt rehome %d %d\n", p_old, p_new);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return ckpt_error(CKPT_E_IO, "%s: %s", tmp, strerror(errno));
    if (write(fd, text, (size_t)n) != n || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        return ckpt_error(e == ENOSPC ? CKPT_E_NOSPACE : CKPT_E_IO, "%s: %s", tmp, strerror(e));
    }
    close(fd);
    if (rename(tmp, mark) != 0 || ckpt_fs_fsync(dir) != 0)
        return ckpt_error(CKPT_E_IO, "%s: %s", mark, strerror(errno));
    return 0;
}

static int read_marker(const char *root, int *p_old, int *p_new)
{
    char mark[4200];
    snprintf(mark, sizeof mark, "%s/" RH_NEW "/" RH_MARK, root);
    FILE *f = fopen(mark, "r");
    if (f == NULL)
        return CKPT_E_NOTFOUND;
    int ok = fscanf(f, "pdc-ckpt rehome %d %d", p_old, p_new) == 2 && *p_old > 0 && *p_new > 0;
    fclose(f);
    return ok ? 0 : ckpt_error(CKPT_E_CORRUPT, "%s: not a re-homing marker", mark);
}

/* Rank count recorded in the meta of ROOT/<sub>/rank-<r> (read-only). */
static int env_meta(const char *root, int rank, struct ckpt_store_info *info)
{
    ckpt_store *st;
    int rc = ckpt_store_open_readonly(&st, root, rank);
    if (rc)
        return rc;
    rc = ckpt_store_info(info, st);
    ckpt_store_close(st);
    return rc;
}

/* Step 3, also the roll-forward of recovery: idempotent. */
static int switch_layout(const char *root, int p_old, int p_new, int rank)
{
    char a[4200], b[4200];
    snprintf(a, sizeof a, "%s/" RH_OLD, root);
    if (mkdir(a, 0700) != 0 && errno != EEXIST)
        return ckpt_error(CKPT_E_IO, "%s: %s", a, strerror(errno));
    for (int i = 0; i < p_old; i++) {
        struct ckpt_store_info m;
        snprintf(a, sizeof a, "%s/rank-%d", root, i);
        snprintf(b, sizeof b, "%s/" RH_OLD "/rank-%d", root, i);
        if (!exists(a))
            continue;
        /* ROOT/rank-i is old unless the new rank-i was already moved in */
        if (env_meta(root, i, &m) == 0 && m.nranks == p_new && p_new != p_old)
            continue;
        if (rename(a, b) != 0)
            return ckpt_error(CKPT_E_IO, "moving %s aside: %s", a, strerror(errno));
        fault_point("rehome-switch", rank);
    }
    for (int r = 0; r < p_new; r++) {
        snprintf(a, sizeof a, "%s/" RH_NEW "/rank-%d", root, r);
        snprintf(b, sizeof b, "%s/rank-%d", root, r);
        if (exists(a) && rename(a, b) != 0)
            return ckpt_error(CKPT_E_IO, "moving %s into place: %s", a, strerror(errno));
    }
    if (ckpt_fs_fsync(root) != 0)
        return ckpt_error(CKPT_E_IO, "%s: fsync: %s", root, strerror(errno));
    snprintf(a, sizeof a, "%s/" RH_NEW "/" RH_MARK, root);
    unlink(a);
    snprintf(a, sizeof a, "%s/" RH_NEW, root);
    ckpt_fs_rmtree(a);
    ckpt_fs_fsync(root);
    snprintf(a, sizeof a, "%s/" RH_OLD, root);
    if (ckpt_fs_rmtree(a) != 0)
        return ckpt_error(CKPT_E_IO, "removing the old layout %s: %s", a, strerror(errno));
    return 0;
}

/* 0 if ROOT holds no rank directory at all (a first start), else
 * CKPT_E_NOSTORE: rank-0 is missing while other ranks are there. */
static int no_ranks_at_all(const char *root)
{
    DIR *d = opendir(root);
    struct dirent *e;
    struct stat sb;
    int found = -1;
    char r0[4200];
    snprintf(r0, sizeof r0, "%s/rank-0", root);
    if (stat(r0, &sb) == 0) {
        if (d)
            closedir(d);
        return CKPT_E_NOSTORE; /* rank-0 is there, its store is not: keep that message */
    }
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "rank-", 5) == 0 && sscanf(e->d_name + 5, "%d", &found) == 1)
            break;
    closedir(d);
    if (e == NULL)
        return 0;
    return ckpt_error(CKPT_E_NOSTORE, "%s: rank-0 is missing while rank-%d is there: the store is "
                      "incomplete", root, found);
}

/* Whether root is a settled n-rank store, read from one pass over the
 * directory: exactly rank-0 .. rank-(n-1), each a directory, besides them
 * only store.lock, and no trace of a re-homing (.rehome, .rehome-old). Not
 * with a shared copy: node-local roots hold a store's ranks only in part.
 * A map restart on that many ranks then takes no lock here and opens each
 * environment once, for writing: nothing is to be recovered, re-homed or
 * refused as stray, and a re-homing that starts meanwhile keeps the ranks
 * out by its lock (store.lock; a layout it switched makes the open fail
 * with CKPT_E_MISMATCH, never a wrong store). A rank directory without its
 * data.mdb fails that rank's open (CKPT_E_NOSTORE), as the careful way
 * does too. Anything else goes the careful way, under the lock. */
static int settled(const char *root, int n)
{
    DIR *d = opendir(root);
    struct dirent *e;
    char p[4200];
    struct stat sb;
    int seen = 0, ok = d != NULL;
    while (ok && (e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "store.lock") == 0)
            continue;
        int r = ckpt_rank_of_name(name);
        if (r < 0 || r >= n)
            ok = 0;
        else if (e->d_type == DT_DIR)
            seen++;
        else
            ok = e->d_type == DT_UNKNOWN && snprintf(p, sizeof p, "%s/%s", root, name) < (int)sizeof p &&
                 lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode) && ++seen;
    }
    if (d)
        closedir(d);
    return ok && seen == n;
}

/* Step 0 (rank 0). *what: 1 rolled forward, -1 rolled back, 0 nothing. */
static int recover(const char *root, int rank, int *what)
{
    char p[4200];
    int p_old, p_new;
    *what = 0;
    int rc = read_marker(root, &p_old, &p_new);
    if (rc == 0) {
        *what = 1;
        return switch_layout(root, p_old, p_new, rank);
    }
    if (rc != CKPT_E_NOTFOUND)
        return rc;
    snprintf(p, sizeof p, "%s/" RH_NEW, root);
    if (exists(p)) {
        *what = -1;
        if (ckpt_fs_rmtree(p) != 0)
            return ckpt_error(CKPT_E_IO, "removing the unfinished re-homing %s: %s", p, strerror(errno));
    }
    /* a switch that finished but died before removing the old layout */
    snprintf(p, sizeof p, "%s/" RH_OLD, root);
    if (exists(p) && ckpt_fs_rmtree(p) != 0)
        return ckpt_error(CKPT_E_IO, "removing %s: %s", p, strerror(errno));
    return 0;
}

/* ------------------------------------------------------------------ */
/* Exchange                                                            */
/* ------------------------------------------------------------------ */

static int buf_put(struct buf *b, const void *d, size_t n)
{
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 65536;
        while (nc < b->len + n)
            nc *= 2;
        uint8_t *np = realloc(b->p, nc);
        if (np == NULL)
            return ckpt_error(CKPT_E_NOMEM, "re-homing: out of memory for a %zu-byte buffer", nc);
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    return 0;
}

static int queue(struct rh *x, int dest, int kind, const void *k, size_t klen, const void *v,
                 size_t vlen)
{
    uint8_t hdr[9];
    uint32_t kl = (uint32_t)klen, vl = (uint32_t)vlen;
    hdr[0] = (uint8_t)kind;
    memcpy(hdr + 1, &kl, 4);
    memcpy(hdr + 5, &vl, 4);
    struct buf *b = &x->send[dest];
    int rc;
    if ((rc = buf_put(b, hdr, 9)) || (rc = buf_put(b, k, klen)) || (vlen && (rc = buf_put(b, v, vlen))))
        return rc;
    x->buffered += 9 + klen + vlen;
    return 0;
}

/* Apply one received record to this rank's new store. */
static int apply(struct rh *x, int kind, const uint8_t *k, size_t klen, const void *vp, size_t vlen)
{
    const uint8_t *v = vp;
    ckpt_store *st = ckpt_hooks_store(x->out);
    size_t off = 0;
    switch (kind) {
    case RH_CONT: {
        struct ckpt_cont c;
        if (klen != 8 || ckpt_rec_cont_decode(&c, v, vlen, &off))
            break;
        ckpt_store_reserve_id(st, ckpt_key_get_u64(k)); /* ignored outside this rank's range */
        return ckpt_store_put_cont(st, ckpt_key_get_u64(k), c.cont_name, strlen(c.cont_name), v, vlen);
    }
    case RH_OBJ: {
        struct ckpt_obj o;
        if (klen != 8 || ckpt_rec_obj_decode(&o, v, vlen, &off))
            break;
        ckpt_store_reserve_id(st, ckpt_key_get_u64(k));
        return ckpt_store_put_obj(st, ckpt_key_get_u64(k), o.obj_name, strlen(o.obj_name), o.time_step,
                                  o.cont_id, v, vlen);
    }
    case RH_KVTAG: {
        struct ckpt_kvtag t;
        if (klen <= 8 || ckpt_rec_kvtag_decode_entry(&t, k, klen, v, vlen, &off))
            break;
        return ckpt_store_put_kvtag(st, ckpt_key_get_u64(k), t.name, strlen(t.name), v, vlen);
    }
    case RH_MEMBER: {
        if (klen != 16)
            break;
        uint64_t obj = ckpt_key_get_u64(k + 8);
        return ckpt_store_cont_add(st, ckpt_key_get_u64(k), &obj, 1);
    }
    case RH_REGION:
        return ckpt_store_put_raw(st, CKPT_DB_REGION, k, klen, v, vlen);
    case RH_IDHOME:
        if (klen != 8)
            break;
        /* an id of this rank's range: the sequence continues above it */
        ckpt_store_reserve_id(st, ckpt_key_get_u64(k));
        return ckpt_store_put_raw(st, CKPT_DB_ID_HOME, k, klen, v, vlen);
    case RH_DATA:
        return ckpt_rh_data_apply(x, k, klen, v, vlen);
    case RH_PDC:
    case RH_ALIAS:
        if (klen == 0)
            break;
        return ckpt_store_put_raw(st, CKPT_DB_PDC_SERVER, k, klen, v, vlen);
    default:
        break;
    }
    return ckpt_error(CKPT_E_RECORD, "re-homing: rank %d received a damaged record (kind %d)", x->me,
                      kind);
}

/* MPI_Allreduce that waits without spinning: a rank that has nothing to
 * read, or that is done, waits here while another reads and writes the
 * store (seconds at 1M records). MPI's blocking collectives poll, which
 * takes a core from the ranks still working on a machine with fewer cores
 * than ranks; this one tests and sleeps 0.2 ms between tests. */
static void allreduce_idle(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                           MPI_Comm comm)
{
    MPI_Request rq;
    int done = 0;
    const struct timespec nap = {0, 200000};
    MPI_Iallreduce(in, out, count, type, op, comm, &rq);
    for (int i = 0; MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done; i++)
        if (i >= 16) /* a round of quick tests first: the others may be there */
            nanosleep(&nap, NULL);
}

/* One collective round: everyone sends what it has buffered and applies
 * what it receives. *still gets the number of ranks still reading (0: all
 * done). Every rank makes the same sequence of collective calls whatever
 * happens, so a failure on one rank ends the rounds on all of them. */
static int round_trip(struct rh *x, int done, int *still, int *err)
{
    int n = x->p_new, rc = 0;
    int flags[2] = {done ? 0 : 1, *err ? 1 : 0}, tot[2];
    if (x->aborted) { /* every rank saw the same failed round: no more */
        *still = 0;
        return *err;
    }
    allreduce_idle(flags, tot, 2, MPI_INT, MPI_SUM, x->comm);
    *still = tot[0];
    if (tot[1] > 0) {
        x->aborted = 1;
        if (!*err)
            *err = ckpt_error(CKPT_E_FAILED, "re-homing stopped: another rank failed");
        return *err;
    }
    int *sc = calloc((size_t)n, sizeof *sc), *rcnt = calloc((size_t)n, sizeof *rcnt);
    int *sd = calloc((size_t)n, sizeof *sd), *rd = calloc((size_t)n, sizeof *rd);
    int ok = sc && rcnt && sd && rd, all_ok;
    size_t total = 0, rtotal = 0;
    for (int i = 0; ok && i < n; i++) {
        if (x->send[i].len > (size_t)INT32_MAX - total)
            ok = 0;
        else {
            sc[i] = (int)x->send[i].len;
            sd[i] = (int)total;
            total += x->send[i].len;
        }
    }
    /* counts go out even from a rank that failed to allocate (as zeros) */
    int *scount = ok ? sc : calloc((size_t)n, sizeof *scount);
    int *rcount = rcnt ? rcnt : calloc((size_t)n, sizeof *rcount);
    if (scount == NULL || rcount == NULL) {
        /* cannot even take part: nothing sane is left to do in MPI */
        MPI_Abort(x->comm, 1);
    }
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, x->comm);
    for (int i = 0; ok && i < n; i++) {
        if ((size_t)rcount[i] > (size_t)INT32_MAX - rtotal)
            ok = 0;
        else {
            rd[i] = (int)rtotal;
            rtotal += (size_t)rcount[i];
        }
    }
    if (ok && x->sendbuf.cap < total) {
        uint8_t *np = realloc(x->sendbuf.p, total);
        if (np) {
            x->sendbuf.p = np;
            x->sendbuf.cap = total;
        }
    }
    uint8_t *sendbuf = ok && x->sendbuf.cap >= total ? x->sendbuf.p : NULL;
    if (ok && x->recv.cap < rtotal) {
        uint8_t *np = realloc(x->recv.p, rtotal);
        if (np) {
            x->recv.p = np;
            x->recv.cap = rtotal;
        }
    }
    ok = ok && (sendbuf || total == 0) && x->recv.cap >= rtotal;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, x->comm);
    if (all_ok) {
        for (int i = 0; i < n; i++)
            if (x->send[i].len)
                memcpy(sendbuf + sd[i], x->send[i].p, x->send[i].len);
        MPI_Alltoallv(sendbuf, sc, sd, MPI_BYTE, x->recv.p, rcnt, rd, MPI_BYTE, x->comm);
        size_t pos = 0;
        while (rc == 0 && pos + 9 <= rtotal) {
            const uint8_t *h = x->recv.p + pos;
            uint32_t kl, vl;
            memcpy(&kl, h + 1, 4);
            memcpy(&vl, h + 5, 4);
            if (kl > rtotal - pos - 9 || vl > rtotal - pos - 9 - kl) {
                rc = ckpt_error(CKPT_E_RECORD, "re-homing: rank %d received a cut record", x->me);
                break;
            }
            rc = apply(x, h[0], h + 9, kl, h + 9 + kl, vl);
            pos += 9 + (size_t)kl + vl;
        }
    } else {
        rc = ckpt_error(CKPT_E_NOMEM, "re-homing: a rank could not allocate an exchange round");
        x->aborted = 1; /* every rank saw all_ok == 0 */
    }
    for (int i = 0; i < n; i++)
        x->send[i].len = 0;
    x->buffered = 0;
    if (scount != sc)
        free(scount);
    if (rcount != rcnt)
        free(rcount);
    free(sc), free(rcnt), free(sd), free(rd);
    if (rc && !*err)
        *err = rc;
    return rc;
}

/* Queue a record; run a round when the buffers are full. A record whose
 * new home is this rank is applied at once: no copy into a send buffer,
 * through MPI to itself and out of the receive buffer (when one rank
 * reads a whole store, that was every record). */
static int send_rec(struct rh *x, int dest, int kind, const void *k, size_t klen, const void *v,
                    size_t vlen, int *err)
{
    int still;
    int derived = kind == RH_IDHOME || kind == RH_ALIAS;
    x->records += derived ? 0 : 1;
    if (!derived && dest != x->env)
        x->moved++;
    if (dest == x->me)
        return apply(x, kind, k, klen, v, vlen);
    int rc = queue(x, dest, kind, k, klen, v, vlen);
    if (rc == 0 && x->buffered >= RH_ROUND_BYTES)
        rc = round_trip(x, 0, &still, err);
    return rc;
}


static int send_named(struct rh *x, int kind, const ckpt_val *k, const ckpt_val *v, int home,
                      int *err)
{
    int rc = send_rec(x, home, kind, k->data, k->len, v->data, v->len, err);
    if (rc == 0) {
        uint64_t id = ckpt_key_get_u64(k->data);
        int d = ckpt_id_dir_rank(id, x->p_new);
        if (d != home) {
            uint8_t hv[4];
            hv[0] = (uint8_t)(home >> 24);
            hv[1] = (uint8_t)(home >> 16);
            hv[2] = (uint8_t)(home >> 8);
            hv[3] = (uint8_t)home;
            rc = send_rec(x, d, RH_IDHOME, k->data, 8, hv, 4, err);
        }
    }
    return rc;
}

/* rehome_by_id: the record to its id home, an alias (key ak) to its name
 * home when that is another rank */
static int send_by_id(struct rh *x, int kind, const ckpt_val *k, const ckpt_val *v, int name_home,
                      const uint8_t *ak, size_t alen, int *err)
{
    int home = ckpt_id_dir_rank(ckpt_key_get_u64(k->data), x->p_new);
    int rc = send_rec(x, home, kind, k->data, k->len, v->data, v->len, err);
    if (rc == 0 && name_home != home) {
        if (alen == 0)
            return ckpt_error(CKPT_E_NAMETOOLONG, "re-homing: rank-%d: the name of %s %llu cannot be "
                              "keyed", x->env, kind == RH_OBJ ? "object" : "container",
                              (unsigned long long)ckpt_key_get_u64(k->data));
        rc = send_rec(x, name_home, RH_ALIAS, ak, alen, v->data, v->len, err);
    }
    return rc;
}

struct walk_ctx {
    struct rh *x;
    int *err;
};

static int w_cont(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk_ctx *w = p;
    struct ckpt_cont c;
    size_t off;
    if (k->len != 8 || ckpt_rec_cont_decode(&c, v->data, v->len, &off))
        return ckpt_rh_bad(w->x, "cont", k);
    int name_home = ckpt_home_cont(c.cont_name, w->x->p_new);
    if (!w->x->by_id)
        return send_named(w->x, RH_CONT, k, v, name_home, w->err);
    uint8_t ak[9 + CKPT_NAMEKEY_MAX];
    size_t alen = ckpt_key_pdc_alias_cont(ak, c.cont_name, ckpt_key_get_u64(k->data));
    return send_by_id(w->x, RH_CONT, k, v, name_home, ak, alen, w->err);
}

static int w_obj(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk_ctx *w = p;
    struct ckpt_obj o;
    size_t off;
    if (k->len != 8 || ckpt_rec_obj_decode(&o, v->data, v->len, &off))
        return ckpt_rh_bad(w->x, "obj", k);
    int name_home = ckpt_home_obj(o.obj_name, o.time_step, w->x->p_new);
    if (!w->x->by_id)
        return send_named(w->x, RH_OBJ, k, v, name_home, w->err);
    uint8_t *rec = NULL;
    ckpt_val nv = *v;
    if (o.data_server_id >= (uint32_t)w->x->p_new) {
        /* PDC's client sends the object's region transfers to its data
         * server: one of the new count (the store holds no region data:
         * w_pdc refuses those tables) */
        size_t len = 0, cap = v->len + 64;
        o.data_server_id %= (uint32_t)w->x->p_new;
        if ((rec = malloc(cap)) == NULL)
            return ckpt_error(CKPT_E_NOMEM, "re-homing: out of memory");
        if (ckpt_rec_obj_encode(&len, rec, cap, &o) != 0) {
            free(rec);
            return ckpt_error(CKPT_E_RECORD, "re-homing: rank-%d: object %llu does not encode again",
                              w->x->env, (unsigned long long)o.obj_id);
        }
        nv.data = rec;
        nv.len = len;
    }
    uint8_t ak[13 + CKPT_NAMEKEY_MAX];
    size_t alen = ckpt_key_pdc_alias_obj(ak, o.obj_name, o.time_step, ckpt_key_get_u64(k->data));
    int rc = send_by_id(w->x, RH_OBJ, k, &nv, name_home, ak, alen, w->err);
    free(rec);
    return rc;
}

/* New home of an owner id (object or container) stored in the env read. */
static int owner_home(struct rh *x, uint64_t owner, int *home)
{
    ckpt_val v;
    size_t off;
    if (owner == x->cached_owner && x->cached_home >= 0) {
        *home = x->cached_home;
        return 0;
    }
    if (x->by_id) {
        *home = ckpt_id_dir_rank(owner, x->p_new);
        return 0;
    }
    if (ckpt_get_obj(&v, x->tx, owner) == 0) {
        struct ckpt_obj o;
        if (ckpt_rec_obj_decode(&o, v.data, v.len, &off))
            return ckpt_error(CKPT_E_RECORD, "re-homing: rank-%d: object %llu does not decode", x->env,
                              (unsigned long long)owner);
        *home = ckpt_home_obj(o.obj_name, o.time_step, x->p_new);
    } else if (ckpt_get_cont(&v, x->tx, owner) == 0) {
        struct ckpt_cont c;
        if (ckpt_rec_cont_decode(&c, v.data, v.len, &off))
            return ckpt_error(CKPT_E_RECORD, "re-homing: rank-%d: container %llu does not decode",
                              x->env, (unsigned long long)owner);
        *home = ckpt_home_cont(c.cont_name, x->p_new);
    } else {
        return ckpt_error(CKPT_E_CORRUPT, "re-homing: rank-%d: record of owner %llu, which is not in "
                          "that environment", x->env, (unsigned long long)owner);
    }
    x->cached_owner = owner;
    x->cached_home = *home;
    return 0;
}

static int w_owned(struct walk_ctx *w, int kind, size_t minlen, const ckpt_val *k, const ckpt_val *v)
{
    int home = 0, rc;
    if (k->len < minlen)
        return ckpt_rh_bad(w->x, kind == RH_KVTAG ? "kvtag" : kind == RH_REGION ? "region" : "cont_obj", k);
    if ((rc = owner_home(w->x, ckpt_key_get_u64(k->data), &home)) != 0)
        return rc;
    return send_rec(w->x, home, kind, k->data, k->len, v->data, v->len, w->err);
}

static int w_kvtag(const ckpt_val *k, const ckpt_val *v, void *p)
{
    return w_owned(p, RH_KVTAG, 9, k, v);
}

static int w_member(const ckpt_val *k, const ckpt_val *v, void *p)
{
    return w_owned(p, RH_MEMBER, 16, k, v);
}

static int w_region(const ckpt_val *k, const ckpt_val *v, void *p)
{
    return w_owned(p, RH_REGION, 9, k, v);
}

/* A DART entry (pdc_server `i`) to every server PDC's DART gives it on
 * the new count (ckpt_pdc_dart_homes): where a client of p_new servers
 * inserts, searches and deletes it. */
static int w_dart(struct walk_ctx *w, const ckpt_val *k, const ckpt_val *v)
{
    struct ckpt_dart_entry e;
    int homes[3], n;
    size_t off = 0;
    if (k->len < 2 + 5 + 8 || ckpt_rec_dart_decode(&e, v->data, v->len, &off) != 0)
        return ckpt_rh_bad(w->x, "pdc_server (DART entry)", k);
    if ((n = ckpt_pdc_dart_homes(&e, w->x->p_new, homes)) < 0) {
        char why[400];
        snprintf(why, sizeof why, "%s", ckpt_errmsg());
        return ckpt_error(n, "re-homing: rank-%d: %s", w->x->env, why);
    }
    for (int j = 0; j < n; j++) {
        int rc = send_rec(w->x, homes[j], RH_PDC, k->data, k->len, v->data, v->len, w->err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A pdc_server entry. Same-name entries go with their object; name
 * aliases are dropped (the objects and containers they copy make those of
 * the new count); DART entries go where PDC's DART puts them on the new
 * count (w_dart); data-server regions with their bytes where PDC's client
 * reads them on the new count (rh_data_region). A transfer-request table
 * refuses the re-homing (docs/ELASTIC.md, "In PDC's server"). */
static int w_pdc(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk_ctx *w = p;
    const uint8_t *kd = k->data;
    int home = 0, rc;
    if (k->len == 0)
        return ckpt_rh_bad(w->x, "pdc_server", k);
    switch (kd[0]) {
    case CKPT_PDC_SAME_NAME:
        if (k->len < 13)
            return ckpt_rh_bad(w->x, "pdc_server", k);
        rc = owner_home(w->x, ckpt_key_get_u64(kd + k->len - 8), &home);
        if (rc == CKPT_E_CORRUPT)
            return 0; /* the entry of a deleted object: it names nothing */
        if (rc != 0)
            return rc;
        return send_rec(w->x, home, RH_PDC, k->data, k->len, v->data, v->len, w->err);
    case CKPT_PDC_ALIAS_OBJ:
    case CKPT_PDC_ALIAS_CONT:
        return 0;
    case CKPT_PDC_DART:
        return w_dart(w, k, v);
    case CKPT_PDC_DATA_REGION:
        return ckpt_rh_data_region(w->x, k, v, send_rec, w->err);
    case CKPT_PDC_XFER_REGION:
        /* PDC's transfer-request table: the data servers of regions that
         * clients placed from their rank (PDC_REGION_DYNAMIC, _LOCAL),
         * which reads ask. Refused: the store restarts on its old count. */
        return ckpt_error(CKPT_E_MISMATCH, "re-homing: rank-%d holds PDC transfer-request region "
                          "entries (pdc_server `%c`), which are not re-homed: restart on the count the "
                          "store was written with (%d)", w->x->env, kd[0], w->x->p_old);
    default:
        return ckpt_error(CKPT_E_RECORD, "re-homing: rank-%d: a pdc_server entry of unknown kind "
                          "0x%02x", w->x->env, kd[0]);
    }
}

/* Read old environment i and queue all of its records. */
static int read_env(struct rh *x, const char *root, int i, int *err)
{
    ckpt_store *st;
    struct walk_ctx w = {x, err};
    int rc;
    if ((rc = ckpt_store_open_readonly(&st, root, i)) != 0)
        return rc;
    x->env = i;
    x->cached_home = -1;
    if ((rc = ckpt_rtxn_begin(&x->tx, st)) == 0) {
        if ((rc = ckpt_iter(x->tx, CKPT_DB_CONT, NULL, 0, w_cont, &w)) == 0 &&
            (rc = ckpt_iter(x->tx, CKPT_DB_OBJ, NULL, 0, w_obj, &w)) == 0 &&
            (rc = ckpt_iter(x->tx, CKPT_DB_KVTAG, NULL, 0, w_kvtag, &w)) == 0 &&
            (rc = ckpt_iter(x->tx, CKPT_DB_CONT_OBJ, NULL, 0, w_member, &w)) == 0 &&
            (rc = ckpt_iter(x->tx, CKPT_DB_REGION, NULL, 0, w_region, &w)) == 0)
            rc = ckpt_iter(x->tx, CKPT_DB_PDC_SERVER, NULL, 0, w_pdc, &w);
        ckpt_rh_data_end_env(x);
        ckpt_rtxn_end(x->tx);
        x->tx = NULL;
    }
    ckpt_store_close(st);
    return rc;
}

/* Step 1 on this rank: returns 0 or an error (all ranks agree on failure
 * through the rounds). */
static int copy_phase(struct rh *x, const struct ckpt_hooks_opts *o, const char *newroot)
{
    struct ckpt_hooks_opts no = *o;
    int rc = 0, err = 0, still = 1;
    no.store_root = newroot;
    /* node-local mode: the layout being built is neither restored from
     * nor published to the shared copies (those are the old layout's);
     * it is published once it is the store */
    no.shared_root = NULL;
    no.commit_every = RH_COMMIT_EVERY;
    no.commit_ms = 0;
    no.tagidx_merge = UINT_MAX; /* merged once, at the end (below) */
    no.sync_mode = CKPT_SYNC_CLOSE;
    if ((rc = ckpt_hooks_open(&x->out, &no)) != 0)
        err = rc;
    else if (x->origin > 0)
        ckpt_store_set_origin(ckpt_hooks_store(x->out), x->origin);
    /* ids: this rank's range continues above every id the old rank of the
     * same number handed out (a crashed one: above its crash gap too) */
    if (rc == 0 && x->me < x->p_old) {
        struct ckpt_store_info m;
        if ((rc = env_meta(o->store_root, x->me, &m)) == 0) {
            uint64_t seq = m.id_seq + (m.clean ? 0 : CKPT_ID_CRASH_GAP);
            if (seq > 0)
                ckpt_store_reserve_id(ckpt_hooks_store(x->out),
                                      ((uint64_t)x->me + 1) * 1000000000ull + seq - 1);
        } else {
            err = rc;
        }
    }
    uint64_t mine = x->me < x->p_old ? (uint64_t)(x->p_old - 1 - x->me) / (uint64_t)x->p_new + 1 : 0,
             done = 0;
    for (int i = x->me; err == 0 && i < x->p_old; i += x->p_new) {
        if ((rc = read_env(x, o->store_root, i, &err)) != 0 && !err)
            err = rc;
        if (o->progress)
            o->progress(o->progress_arg, ++done, mine);
    }
    fault_point("rehome-copy", x->me);
    /* keep taking part in rounds until every rank has sent everything */
    while (still) /* an error of ours is announced by the next round */
        round_trip(x, 1, &still, &err);
    /* the region bytes appended are on disk before the new store is */
    if ((rc = ckpt_rh_data_flush(x)) != 0 && !err)
        err = rc;
    if (x->out && err == 0) {
        ckpt_store *st = ckpt_hooks_store(x->out);
        if ((rc = ckpt_store_checkpoint(st)) != 0 || (rc = ckpt_store_merge_tags(st)) != 0)
            err = rc;
    }
    if (x->out) {
        if (err == 0 && (rc = ckpt_hooks_close(x->out)) != 0)
            err = rc;
        if (err)
            ckpt_hooks_discard(x->out);
        x->out = NULL;
    }
    return err;
}

/* Agree on an error: 0 everywhere, or one failing rank's code and message
 * everywhere (the lowest such rank, preferring an error of its own).
 * idle: wait in allreduce_idle, for the re-homing's steps, where ranks
 * wait seconds for each other; otherwise MPI's blocking MPI_Allreduce, for
 * the steps of every restart, where they wait for one open or one check
 * of the root: a process's first nonblocking collective costs MPICH about
 * 50 us to set up, a tenth of a map restart. Every rank passes the same
 * idle at the same step (a blocking and a nonblocking collective do not
 * match). */
static int agree_wait(MPI_Comm comm, int rc, int me, char *msg, size_t n, int idle)
{
    /* a rank with an error of its own wins over ranks that only stopped
     * because another failed (CKPT_E_FAILED): its message says why */
    int in[2] = {rc ? (rc == CKPT_E_FAILED ? 1 : 2) : 0, me}, out[2];
    if (idle)
        allreduce_idle(in, out, 1, MPI_2INT, MPI_MAXLOC, comm);
    else
        MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, comm);
    if (out[0] == 0)
        return 0;
    int code = rc;
    MPI_Bcast(&code, 1, MPI_INT, out[1], comm);
    if (me == out[1])
        snprintf(msg, n, "%s", ckpt_errmsg());
    MPI_Bcast(msg, (int)n, MPI_CHAR, out[1], comm);
    if (me != out[1])
        ckpt_error(code, "rank %d: %s", out[1], msg);
    return code ? code : CKPT_E_FAILED;
}

static int agree(MPI_Comm comm, int rc, int me, char *msg, size_t n)
{
    return agree_wait(comm, rc, me, msg, n, 1);
}

int ckpt_hooks_restart_elastic(ckpt_hooks **out, const struct ckpt_hooks_opts *opts, MPI_Comm comm,
                               struct ckpt_rehome_stats *stats)
{
    struct ckpt_rehome_stats s;
    struct ckpt_hooks_opts oc;
    const struct ckpt_hooks_opts *o = &oc;
    char msg[512] = "", newroot[4200];
    int me, size, rc = 0, what = 0;
    memset(&s, 0, sizeof s);
    if (out == NULL)
        return CKPT_E_INVAL;
    *out = NULL;
    if ((rc = ckpt_hooks_opts_get(&oc, opts)) != 0)
        return rc;
    if (o->store_root == NULL)
        return ckpt_error(CKPT_E_INVAL, "elastic restart: no store root");
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    if (o->rank != me || o->nranks != size)
        return ckpt_error(CKPT_E_INVAL, "elastic restart: opts say rank %d of %d, the communicator "
                          "rank %d of %d", o->rank, o->nranks, me, size);
    /* node-local mode: a replaced node starts from the shared copy */
    if (o->shared_root)
        rc = ckpt_shared_restore(o->store_root, o->shared_root, me);
    if ((rc = agree_wait(comm, rc, me, msg, sizeof msg, 0)) != 0)
        return rc;
    /* 0: recovery, and the old rank count. Rank 0 holds the store's lock
     * (ckpt_root_lock) from here until a re-homing has switched layouts:
     * no writer can have a rank open meanwhile, and none is running now.
     * Before anything changes, entries of the root that belong to no rank
     * of the store are refused: a re-homing would trip over them midway. */
    int info[3] = {0, 0, 0}, lockfd = -1;
    if (me == 0 && !o->shared_root && settled(o->store_root, size)) {
        info[0] = size; /* the map restart itself */
    } else if (me == 0) {
        struct ckpt_store_info m;
        rc = ckpt_root_lock(&lockfd, o->store_root);
        if (rc == 0)
            rc = recover(o->store_root, me, &what);
        if (rc == 0 && (rc = env_meta(o->store_root, 0, &m)) == 0) {
            info[0] = m.nranks;
            info[2] = m.origin_nranks;
            rc = ckpt_root_check(o->store_root, m.nranks);
        } else if (rc == CKPT_E_NOSTORE && (rc = no_ranks_at_all(o->store_root)) == 0) {
            info[0] = 0; /* nothing there yet: a first start */
        }
        info[1] = what;
        if (rc != 0 || info[0] == 0 || info[0] == size) {
            ckpt_root_unlock(lockfd); /* nothing to re-home: writers may open */
            lockfd = -1;
        }
    }
    if ((rc = agree_wait(comm, rc, me, msg, sizeof msg, 0)) != 0)
        return rc;
    MPI_Bcast(info, 3, MPI_INT, 0, comm);
    s.old_nranks = info[0];
    s.new_nranks = size;
    s.recovered = info[1];
    if (o->shared_root && s.old_nranks > size) {
        /* old ranks beyond this count have no process of their own */
        for (int i = me + size; rc == 0 && i < s.old_nranks; i += size)
            rc = ckpt_shared_restore(o->store_root, o->shared_root, i);
        if ((rc = agree(comm, rc, me, msg, sizeof msg)) != 0) {
            ckpt_root_unlock(lockfd);
            return rc;
        }
    }
    if (s.old_nranks == size) {
        rc = ckpt_hooks_restart_map(out, o);
        if ((rc = agree_wait(comm, rc, me, msg, sizeof msg, 0)) != 0) {
            ckpt_hooks_discard(*out);
            *out = NULL;
            return rc;
        }
        if (stats)
            *stats = s;
        return 0;
    }

    /* 1: copy into ROOT/.rehome */
    double t0 = MPI_Wtime();
    struct rh x;
    memset(&x, 0, sizeof x);
    x.comm = comm;
    x.me = me;
    x.p_new = size;
    x.p_old = s.old_nranks;
    x.origin = info[2];
    x.cached_home = -1;
    x.by_id = o->rehome_by_id != 0;
    x.root = o->store_root;
    snprintf(newroot, sizeof newroot, "%s/" RH_NEW, o->store_root);
    x.send = calloc((size_t)size, sizeof *x.send);
    if (x.send == NULL)
        rc = ckpt_error(CKPT_E_NOMEM, "out of memory");
    /* every old environment must be there before anything is written */
    for (int i = me; rc == 0 && i < x.p_old; i += size) {
        struct ckpt_store_info m;
        if ((rc = env_meta(o->store_root, i, &m)) == 0 && m.nranks != x.p_old)
            rc = ckpt_error(CKPT_E_MISMATCH, "%s/rank-%d says %d ranks, rank-0 says %d",
                            o->store_root, i, m.nranks, x.p_old);
    }
    if ((rc = agree(comm, rc, me, msg, sizeof msg)) == 0) {
        rc = copy_phase(&x, o, newroot);
        rc = agree(comm, rc, me, msg, sizeof msg);
    }
    for (int i = 0; x.send && i < size; i++)
        free(x.send[i].p);
    free(x.send);
    free(x.recv.p);
    ckpt_rh_data_free(&x);
    free(x.sendbuf.p);
    if (rc) {
        if (me == 0)
            ckpt_fs_rmtree(newroot); /* roll back: the old layout was only read */
        ckpt_root_unlock(lockfd);
        MPI_Barrier(comm);
        return rc;
    }
    /* 2: commit point; 3: switch */
    if (me == 0) {
        rc = write_marker(o->store_root, x.p_old, size);
        if (rc == 0)
            rc = switch_layout(o->store_root, x.p_old, size, me);
        ckpt_root_unlock(lockfd); /* the new layout is the store: writers may open */
    }
    if ((rc = agree(comm, rc, me, msg, sizeof msg)) != 0)
        return rc;
    double dt = MPI_Wtime() - t0;
    uint64_t mine[2] = {x.records, x.moved}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(&dt, &s.seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
    s.records = all[0];
    s.moved = all[1];
    rc = ckpt_hooks_restart_map(out, o);
    if ((rc = agree(comm, rc, me, msg, sizeof msg)) != 0) {
        ckpt_hooks_discard(*out);
        *out = NULL;
        return rc;
    }
    if (stats)
        *stats = s;
    return 0;
}
