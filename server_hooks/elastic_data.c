/*
 * elastic_data.c - PDC's region data on another server count (pdc_server
 * `d`), in the re-homing of elastic.c.
 *
 * A PDC data server writes every region of an object into its own file of
 * it, DIR/server<r>/s<rrrr>.bin (PDC's fill_storage_path), and its table
 * (`d`) says where each stored region's bytes are in that file. A read of
 * region R asks data servers chosen from the count: with PDC_REGION_STATIC
 * (PDC's default) server j of M gets the part of R inside slab j of the
 * object (static_region_partition: the object cut along its last dimension
 * longer than M); with PDC_OBJ_STATIC the object's data server gets all of
 * it. So each stored region is cut by the slabs of M, and each piece is
 * appended, with its bytes, to the file of the server that will be asked
 * for it, under a new table entry; a region that stays whole on the
 * server that has it keeps its entry and its bytes. The appended bytes are
 * synced before the new layout is committed; an interrupted or refused
 * re-homing leaves them unreferenced at the end of the files (PDC appends
 * new regions at the end and records their offsets). Regions of objects
 * placed by the client's rank (PDC_REGION_DYNAMIC, _LOCAL) are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "elastic_int.h"

enum { PDC_OBJ_STATIC_ = 0, PDC_REGION_STATIC_ = 1 }; /* pdc_region_partition_t */

struct rh_data {
    ckpt_store **st;           /* old environments opened to find objects */
    ckpt_rtxn **tx;
    uint64_t obj_id;           /* the last object found */
    struct ckpt_obj obj;
    int obj_found;
    uint8_t *obj_rec;          /* its record (obj's strings point into it) */
    int fd;                    /* the data file being appended to */
    char path[4200];
};

int ckpt_rh_bad(struct rh *x, const char *db, const ckpt_val *k)
{
    return ckpt_error(CKPT_E_RECORD, "re-homing: rank-%d: a record in %s (key of %zu bytes, id %llu) "
                      "does not decode", x->env, db, k->len,
                      k->len >= 8 ? (unsigned long long)ckpt_key_get_u64(k->data) : 0ull);
}

static struct rh_data *rh_data_get(struct rh *x)
{
    if (x->data == NULL && (x->data = calloc(1, sizeof *x->data)) != NULL) {
        x->data->fd = -1;
        x->data->st = calloc((size_t)x->p_old, sizeof *x->data->st);
        x->data->tx = calloc((size_t)x->p_old, sizeof *x->data->tx);
        if (x->data->st == NULL || x->data->tx == NULL) {
            free(x->data->st);
            free(x->data->tx);
            free(x->data);
            x->data = NULL;
        }
    }
    return x->data;
}

/* The object record of id, from whichever old environment holds it (its
 * id's rank first): 0, CKPT_E_NOTFOUND (a deleted object), or an error. */
static int rh_data_obj(struct rh *x, uint64_t id, const struct ckpt_obj **out)
{
    struct rh_data *d = rh_data_get(x);
    int first = ckpt_id_dir_rank(id, x->p_old), rc;
    if (d == NULL)
        return ckpt_error(CKPT_E_NOMEM, "re-homing: out of memory");
    if (d->obj_found && d->obj_id == id) {
        *out = &d->obj;
        return 0;
    }
    d->obj_found = 0;
    for (int t = 0; t < x->p_old; t++) {
        int e = (first + t) % x->p_old;
        ckpt_rtxn *tx = e == x->env ? x->tx : d->tx[e];
        ckpt_val v;
        size_t off = 0;
        if (tx == NULL) {
            if ((rc = ckpt_store_open_readonly(&d->st[e], x->root, e)) != 0)
                return rc;
            if ((rc = ckpt_rtxn_begin(&d->tx[e], d->st[e])) != 0) {
                ckpt_store_close(d->st[e]);
                d->st[e] = NULL;
                return rc;
            }
            tx = d->tx[e];
        }
        if (ckpt_get_obj(&v, tx, id) != 0)
            continue;
        free(d->obj_rec);
        if ((d->obj_rec = malloc(v.len ? v.len : 1)) == NULL)
            return ckpt_error(CKPT_E_NOMEM, "re-homing: out of memory");
        memcpy(d->obj_rec, v.data, v.len);
        if (ckpt_rec_obj_decode(&d->obj, d->obj_rec, v.len, &off) != 0)
            return ckpt_error(CKPT_E_RECORD, "re-homing: rank-%d: object %llu does not decode", e,
                              (unsigned long long)id);
        d->obj_id = id;
        d->obj_found = 1;
        *out = &d->obj;
        return 0;
    }
    return CKPT_E_NOTFOUND;
}

/* Slab j of m of object o along dimension *split (PDC's
 * static_region_partition): [*lo, *lo + *len). */
static void rh_slab(const struct ckpt_obj *o, int m, int j, int *split, uint64_t *lo, uint64_t *len)
{
    int sd = -1;
    for (int i = 0; i < (int)o->ndim; i++)
        if (o->dims[o->ndim - 1 - i] > (uint64_t)m) {
            sd = (int)o->ndim - 1 - i;
            break;
        }
    if (sd == -1)
        sd = (int)o->ndim - 1;
    uint64_t s = o->dims[sd] / (uint64_t)m, x = (uint64_t)m - o->dims[sd] % (uint64_t)m;
    *split = sd;
    if ((uint64_t)j < x) {
        *lo = (uint64_t)j * s;
        *len = s;
    } else {
        *lo = x * s + ((uint64_t)j - x) * (s + 1);
        *len = s + 1;
    }
}

/* The data file of the same object on server j: PATH ends in
 * /server<i>/s<iiii>.bin for the old server i. */
static int rh_data_path(char *out, size_t cap, const char *path, int i, int j)
{
    char tail[64];
    size_t n = strlen(path), t = (size_t)snprintf(tail, sizeof tail, "/server%d/s%04d.bin", i, i);
    if (n <= t || strcmp(path + n - t, tail) != 0)
        return -1;
    return snprintf(out, cap, "%.*s/server%d/s%04d.bin", (int)(n - t), path, j, j) < (int)cap &&
                   strlen(out) < 1024 /* PDC's ADDR_MAX */ ? 0 : -1;
}

/* Copy sub-box [p0, p0 + pc) of the box g (start gs, count gc, row-major,
 * unit bytes per element) from src to dst (packed). */
static void rh_subbox(uint8_t *dst, const uint8_t *src, uint32_t ndim, const uint64_t *gs, const uint64_t *gc,
                      const uint64_t *p0, const uint64_t *pc, uint64_t unit)
{
    uint64_t c[3] = {1, 1, 1}, r[3] = {0, 0, 0}, q[3] = {1, 1, 1};
    for (uint32_t i = 0; i < ndim; i++) { /* right-aligned into 3 dimensions */
        c[3 - ndim + i] = gc[i];
        r[3 - ndim + i] = p0[i] - gs[i];
        q[3 - ndim + i] = pc[i];
    }
    for (uint64_t a = 0; a < q[0]; a++)
        for (uint64_t b = 0; b < q[1]; b++)
            memcpy(dst + ((a * q[1] + b) * q[2]) * unit,
                   src + (((r[0] + a) * c[1] + (r[1] + b)) * c[2] + r[2]) * unit, q[2] * unit);
}

/* One data-server region of old server x->env: its pieces to the servers
 * PDC's client will ask for them on the new count. */
int ckpt_rh_data_region(struct rh *x, const ckpt_val *k, const ckpt_val *v, ckpt_rh_send_fn send,
                        int *err)
{
    struct ckpt_region g;
    const struct ckpt_obj *o = NULL;
    size_t off = 0;
    int rc, n = 0, to[64];
    uint64_t lo[64], len[64], elems = 1;
    if (k->len <= 9 || ckpt_rec_region_decode(&g, v->data, v->len, &off) != 0)
        return ckpt_rh_bad(x, "pdc_server (data region)", k);
    if ((rc = rh_data_obj(x, g.obj_id, &o)) == CKPT_E_NOTFOUND)
        return 0; /* the data of a deleted object: nothing reads it */
    if (rc != 0)
        return rc;
    for (uint32_t i = 0; i < g.ndim; i++)
        elems *= g.count[i];
    if (g.ndim < 1 || g.ndim > 3 || g.ndim != o->ndim || g.unit_size == 0 ||
        g.data_size != elems * g.unit_size)
        return ckpt_error(CKPT_E_MISMATCH, "re-homing: rank-%d: a data region of object %llu (%u "
                          "dimensions, %llu bytes of %llu-byte elements) that PDC's region reads do not "
                          "serve on another count (the object has %u dimensions)", x->env,
                          (unsigned long long)g.obj_id, g.ndim, (unsigned long long)g.data_size,
                          (unsigned long long)g.unit_size, o->ndim);
    int split = 0;
    if (o->region_partition == PDC_OBJ_STATIC_) {
        to[n] = (int)(o->data_server_id % (uint32_t)x->p_new);
        lo[n] = g.start[0];
        len[n++] = g.count[0];
    } else if (o->region_partition == PDC_REGION_STATIC_ && x->p_new <= 64) {
        for (int j = 0; j < x->p_new && j < 64; j++) {
            uint64_t sl, sn;
            rh_slab(o, x->p_new, j, &split, &sl, &sn);
            uint64_t a = sl > g.start[split] ? sl : g.start[split];
            uint64_t b = sl + sn < g.start[split] + g.count[split] ? sl + sn : g.start[split] + g.count[split];
            if (a < b) {
                to[n] = j;
                lo[n] = a;
                len[n++] = b - a;
            }
        }
    } else {
        return ckpt_error(CKPT_E_MISMATCH, "re-homing: rank-%d: object %llu places its region transfers "
                          "by the client's rank (region partition %u) or is cut over more than 64 "
                          "servers: its data is not re-homed: restart on the count the store was "
                          "written with (%d)", x->env,
                          (unsigned long long)g.obj_id, o->region_partition, x->p_old);
    }
    uint64_t covered = 0;
    for (int p = 0; p < n; p++)
        covered += len[p];
    if (covered != g.count[split]) /* outside the object's dimensions now */
        return ckpt_error(CKPT_E_MISMATCH, "re-homing: rank-%d: a data region of object %llu lies "
                          "partly outside the object's dimensions, where PDC's region reads on %d "
                          "servers would not find it: its data is not re-homed: restart on the count "
                          "the store was written with (%d)", x->env, (unsigned long long)g.obj_id,
                          x->p_new, x->p_old);
    uint8_t *whole = NULL;
    for (int p = 0; p < n; p++) {
        if (to[p] == x->env && lo[p] == g.start[split] && len[p] == g.count[split]) {
            /* whole, and on the server whose file holds it */
            if ((rc = send(x, to[p], RH_PDC, k->data, k->len, v->data, v->len, err)) != 0)
                break;
            continue;
        }
        struct ckpt_region q = g;
        char path[4200];
        uint64_t ps[CKPT_MAX_DIM], pc[CKPT_MAX_DIM], bytes = g.unit_size;
        memcpy(ps, g.start, sizeof ps);
        memcpy(pc, g.count, sizeof pc);
        ps[split] = lo[p];
        pc[split] = len[p];
        for (uint32_t i = 0; i < g.ndim; i++)
            bytes *= pc[i];
        if (rh_data_path(path, sizeof path, g.storage_location, x->env, to[p]) != 0) {
            rc = ckpt_error(CKPT_E_MISMATCH, "re-homing: rank-%d: data region of object %llu in \"%s\", "
                            "not a file of PDC server %d (DIR/server%d/s%04d.bin)", x->env,
                            (unsigned long long)g.obj_id, g.storage_location, x->env, x->env, x->env);
            break;
        }
        if (whole == NULL) { /* the stored region, once */
            int fd = open(g.storage_location, O_RDONLY | O_CLOEXEC);
            if ((whole = malloc(g.data_size ? g.data_size : 1)) == NULL) {
                if (fd >= 0)
                    close(fd);
                rc = ckpt_error(CKPT_E_NOMEM, "re-homing: out of memory for a %llu-byte region",
                                (unsigned long long)g.data_size);
                break;
            }
            ssize_t got = fd < 0 ? -1 : pread(fd, whole, g.data_size, (off_t)g.offset);
            int e = errno;
            if (fd >= 0)
                close(fd);
            if (got != (ssize_t)g.data_size) {
                rc = ckpt_error(CKPT_E_IO, "re-homing: rank-%d: reading %llu bytes of object %llu's "
                                "data at %llu in %s: %s", x->env, (unsigned long long)g.data_size,
                                (unsigned long long)g.obj_id, (unsigned long long)g.offset,
                                g.storage_location, got < 0 ? strerror(e) : "the file is shorter");
                break;
            }
        }
        /* value: record length (4 bytes), the record (offset set by the
         * receiver), the piece's bytes */
        memcpy(q.start, ps, sizeof ps);
        memcpy(q.count, pc, sizeof pc);
        q.storage_location = path;
        q.data_size = bytes;
        q.offset = 0;
        q.has_hist = 0; /* a histogram of the whole region is not the piece's */
        size_t rl = 0, cap = v->len + strlen(path) + 64;
        uint8_t key[9 + CKPT_REGIONKEY_MAX], *val = malloc(4 + cap + bytes);
        size_t klen = ckpt_key_pdc_region(key, CKPT_PDC_DATA_REGION, g.obj_id, g.ndim, ps, pc);
        if (val == NULL || klen == 0 || ckpt_rec_region_encode(&rl, val + 4, cap, &q) != 0) {
            free(val);
            rc = ckpt_error(CKPT_E_NOMEM, "re-homing: rank-%d: a piece of object %llu's data region "
                            "does not encode", x->env, (unsigned long long)g.obj_id);
            break;
        }
        uint32_t rl32 = (uint32_t)rl;
        memcpy(val, &rl32, 4);
        rh_subbox(val + 4 + rl, whole, g.ndim, g.start, g.count, ps, pc, g.unit_size);
        rc = send(x, to[p], RH_DATA, key, klen, val, 4 + rl + bytes, err);
        free(val);
        if (rc != 0)
            break;
    }
    free(whole);
    return rc;
}

/* Append a piece's bytes to this server's file of the object and store
 * its table entry at that offset. */
int ckpt_rh_data_apply(struct rh *x, const uint8_t *k, size_t klen, const uint8_t *v, size_t vlen)
{
    struct rh_data *d = rh_data_get(x);
    struct ckpt_region g;
    uint32_t rl;
    size_t off = 0;
    struct stat sb;
    if (d == NULL)
        return ckpt_error(CKPT_E_NOMEM, "re-homing: out of memory");
    if (vlen < 4 || (memcpy(&rl, v, 4), rl > vlen - 4) || ckpt_rec_region_decode(&g, v + 4, rl, &off) != 0 ||
        g.data_size != vlen - 4 - rl)
        return ckpt_error(CKPT_E_RECORD, "re-homing: rank %d received a damaged data region", x->me);
    if (d->fd < 0 || strcmp(d->path, g.storage_location) != 0) {
        int rc = ckpt_rh_data_flush(x);
        if (rc != 0)
            return rc;
        snprintf(d->path, sizeof d->path, "%s", g.storage_location);
        d->fd = open(d->path, O_WRONLY | O_CLOEXEC);
        if (d->fd < 0 && errno == ENOENT) { /* a new file, in new directories */
            char dir[4200], *slash;
            snprintf(dir, sizeof dir, "%s", d->path);
            if ((slash = strrchr(dir, '/')) != NULL)
                *slash = '\0';
            if (ckpt_fs_mkdirs(dir) == 0 &&
                (d->fd = open(d->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) >= 0) {
                /* the file's and its directories' names are durable too */
                for (int up = 0; up < 3 && (slash = strrchr(dir, '/')) != NULL; up++) {
                    ckpt_fs_fsync(dir);
                    *slash = '\0';
                }
            }
        }
        if (d->fd < 0)
            return ckpt_error(CKPT_E_IO, "re-homing: rank %d: %s: %s", x->me, d->path, strerror(errno));
    }
    if (fstat(d->fd, &sb) != 0)
        return ckpt_error(CKPT_E_IO, "re-homing: rank %d: %s: %s", x->me, d->path, strerror(errno));
    const uint8_t *bytes = v + 4 + rl;
    for (uint64_t done = 0; done < g.data_size;) {
        ssize_t w = pwrite(d->fd, bytes + done, g.data_size - done, (off_t)(sb.st_size + (off_t)done));
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            return ckpt_error(e == ENOSPC ? CKPT_E_NOSPACE : CKPT_E_IO, "re-homing: rank %d: appending "
                              "%llu bytes to %s: %s", x->me, (unsigned long long)g.data_size, d->path,
                              strerror(e));
        }
        done += (uint64_t)w;
    }
    g.offset = (uint64_t)sb.st_size;
    size_t len = 0, cap = rl + 16;
    uint8_t *rec = malloc(cap);
    int rc = rec == NULL || ckpt_rec_region_encode(&len, rec, cap, &g) != 0
                 ? ckpt_error(CKPT_E_NOMEM, "re-homing: a data region does not encode again")
                 : ckpt_store_put_raw(ckpt_hooks_store(x->out), CKPT_DB_PDC_SERVER, k, klen, rec, len);
    free(rec);
    return rc;
}

/* The data file appended to last: synced and closed. */
int ckpt_rh_data_flush(struct rh *x)
{
    struct rh_data *d = x->data;
    int rc = 0;
    if (d == NULL || d->fd < 0)
        return 0;
    if (fsync(d->fd) != 0)
        rc = ckpt_error(CKPT_E_IO, "re-homing: rank %d: fsync %s: %s", x->me, d->path, strerror(errno));
    close(d->fd);
    d->fd = -1;
    return rc;
}

/* The old environments opened to find objects: closed after each
 * environment read (they are read by other ranks too). */
void ckpt_rh_data_end_env(struct rh *x)
{
    struct rh_data *d = x->data;
    for (int e = 0; d && e < x->p_old; e++) {
        if (d->tx[e])
            ckpt_rtxn_end(d->tx[e]);
        if (d->st[e])
            ckpt_store_close(d->st[e]);
        d->tx[e] = NULL;
        d->st[e] = NULL;
    }
    if (d)
        d->obj_found = 0;
}

void ckpt_rh_data_free(struct rh *x)
{
    struct rh_data *d = x->data;
    if (d == NULL)
        return;
    ckpt_rh_data_end_env(x);
    if (d->fd >= 0)
        close(d->fd);
    free(d->obj_rec);
    free(d->st);
    free(d->tx);
    free(d);
    x->data = NULL;
}
