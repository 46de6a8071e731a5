/*
 * method_fwrite.c - PDC's checkpoint as close_server writes it today
 * (PDC_Server_checkpoint / PDC_Server_restart in hpc-io/pdc): nothing during
 * the workload; at close every container, object and region struct is
 * fwrite()n whole, with PDC's fixed-size char arrays (so an object costs
 * about 5.4 KB on disk, mostly zeros), and every kvtag as key_len, name,
 * size, value; one file per rank, truncated first, no fsync. Restart reads
 * it all back field by field and rebuilds the tables.
 *
 * The structs below reproduce the size and shape of PDC's x86-64 structs
 * (pdc_metadata_t ~5.4 KB, region_list_t ~3.5 KB, the container entry
 * ~3.1 KB), not their exact member order. Two additions make a rebuild
 * complete, which PDC's file is not: container members and container kvtags
 * are written too, and a kvtag also records its type. Records go out in the
 * order model_foreach visits them (all containers, objects, kvtags, members,
 * regions) rather than each object followed by its tags: the same bytes and
 * the same number of fwrite calls, plus 8 bytes of owner id per kvtag and
 * region.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods.h"

#define PDC_ADDR_MAX 1024
#define PDC_TAG_LEN_MAX 2048
#define PDC_DIM_MAX 4
#define PDC_SERVER_MAX_PROC_PER_NODE 64

/* PDC's pdc_metadata_t (pointers are written as they are, and ignored on
 * read, as PDC does). */
struct pdc_metadata {
    int user_id;
    char app_name[PDC_ADDR_MAX];
    char obj_name[PDC_ADDR_MAX];
    int time_step;
    int data_type;
    uint64_t obj_id;
    uint64_t cont_id;
    int64_t create_time;
    int64_t last_modified_time;
    char tags[PDC_TAG_LEN_MAX];
    void *kvtag_list_head;
    char data_location[PDC_ADDR_MAX];
    size_t ndim;
    uint64_t dims[PDC_DIM_MAX];
    void *storage_region_list_head;
    int all_storage_region_distributed;
    void *region_lock_head;
    void *region_map_head;
    void *region_buf_map_head;
    int transform_state;
    struct {
        int storage_order, dtype;
        size_t ndim;
        uint64_t dims[PDC_DIM_MAX];
        int meta_index;
    } current_state;
    uint32_t data_server_id;
    int region_partition;
    int consistency;
    void *region_hist;
    void *prev, *next, *bloom;
    char reserved[160];
};

/* PDC's region_list_t. */
struct pdc_region {
    size_t ndim;
    uint64_t start[PDC_DIM_MAX], count[PDC_DIM_MAX], stride[PDC_DIM_MAX];
    uint32_t client_ids[PDC_SERVER_MAX_PROC_PER_NODE];
    uint64_t data_size;
    uint64_t unit_size;
    int is_data_ready;
    char shm_addr[PDC_ADDR_MAX];
    int shm_fd;
    void *buf;
    int data_loc_type;
    char storage_location[PDC_ADDR_MAX];
    uint64_t offset;
    char cache_location[PDC_ADDR_MAX];
    uint64_t cache_offset;
    void *overlap_storage_regions;
    uint32_t n_overlap_storage_region;
    int reg_dirty_from_buf, access_type, is_io_done, is_shm_closed, seq_id, sent_to_server;
    uint64_t obj_id, reg_id, from_obj_id;
    uint32_t client_id;
    void *meta, *bulk_handle, *lock_handle, *addr, *io_cache_region, *region_hist;
    void *prev, *next;
};

/* PDC's pdc_cont_hash_table_entry_t. */
struct pdc_cont {
    uint64_t cont_id;
    char cont_name[PDC_ADDR_MAX];
    char tags[PDC_TAG_LEN_MAX];
    void *kvtag_list_head;
    uint64_t *obj_ids;
    int n_obj, n_deleted_obj, n_allocated;
};

static void fw_path(char *out, size_t n, const char *root, int rank)
{
    snprintf(out, n, "%s/rank-%d.fwrite", root, rank);
}

static int fw_open(void **ctx, const char *root, int rank, int nranks, struct model_sink *sink)
{
    char *p = malloc(4200);
    (void)nranks;
    (void)sink; /* nothing during the workload */
    if (p == NULL)
        return CKPT_E_NOMEM;
    fw_path(p, 4200, root, rank);
    *ctx = p;
    return 0;
}

static void fw_discard(void *ctx)
{
    free(ctx);
}

static void copy_str(char *dst, size_t cap, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s ? s : "", n);
    dst[n] = 0;
}

/* ---- close: one section per kind, in model_foreach's order ---- */

struct fw_out {
    FILE *f;
    int err;
    int32_t n; /* records of the current section */
};

static void put(struct fw_out *o, const void *p, size_t n)
{
    if (!o->err && n && fwrite(p, n, 1, o->f) != 1)
        o->err = errno ? errno : EIO;
}

static int fw_cont(const struct ckpt_cont *c, void *arg)
{
    struct fw_out *o = arg;
    static struct pdc_cont pc;
    memset(&pc, 0, sizeof pc);
    pc.cont_id = c->cont_id;
    copy_str(pc.cont_name, sizeof pc.cont_name, c->cont_name);
    copy_str(pc.tags, sizeof pc.tags, c->tags);
    uint32_t hash = ckpt_djb2(c->cont_name);
    put(o, &hash, sizeof hash);
    put(o, &pc, sizeof pc);
    o->n++;
    return o->err;
}

static int fw_obj(const struct ckpt_obj *x, void *arg)
{
    struct fw_out *o = arg;
    static struct pdc_metadata md;
    memset(&md, 0, sizeof md);
    md.user_id = x->user_id;
    copy_str(md.app_name, sizeof md.app_name, x->app_name);
    copy_str(md.obj_name, sizeof md.obj_name, x->obj_name);
    md.time_step = x->time_step;
    md.data_type = x->data_type;
    md.obj_id = x->obj_id;
    md.cont_id = x->cont_id;
    md.create_time = x->create_time;
    md.last_modified_time = x->last_modified_time;
    copy_str(md.tags, sizeof md.tags, x->tags);
    copy_str(md.data_location, sizeof md.data_location, x->data_location);
    md.ndim = x->ndim;
    memcpy(md.dims, x->dims, sizeof md.dims);
    md.transform_state = x->transform_state;
    md.data_server_id = x->data_server_id;
    md.region_partition = x->region_partition;
    md.consistency = x->consistency;
    uint32_t hash = ckpt_djb2(x->obj_name);
    put(o, &hash, sizeof hash);
    put(o, &md, sizeof md);
    o->n++;
    return o->err;
}

static int fw_kvtag(uint64_t owner, const struct ckpt_kvtag *t, void *arg)
{
    struct fw_out *o = arg;
    int32_t key_len = (int32_t)strlen(t->name) + 1;
    put(o, &owner, sizeof owner);
    put(o, &key_len, sizeof key_len);
    put(o, t->name, (size_t)key_len);
    put(o, &t->type, sizeof t->type);
    put(o, &t->size, sizeof t->size);
    put(o, t->value, t->size);
    o->n++;
    return o->err;
}

static int fw_member(uint64_t cont, uint64_t obj, void *arg)
{
    struct fw_out *o = arg;
    put(o, &cont, sizeof cont);
    put(o, &obj, sizeof obj);
    o->n++;
    return o->err;
}

static int fw_region(const struct ckpt_region *g, void *arg)
{
    struct fw_out *o = arg;
    static struct pdc_region r;
    memset(&r, 0, sizeof r);
    r.ndim = g->ndim;
    memcpy(r.start, g->start, sizeof r.start);
    memcpy(r.count, g->count, sizeof r.count);
    r.data_size = g->data_size;
    r.unit_size = g->unit_size;
    r.data_loc_type = g->data_loc_type;
    copy_str(r.storage_location, sizeof r.storage_location, g->storage_location);
    r.offset = g->offset;
    copy_str(r.cache_location, sizeof r.cache_location, g->cache_location);
    r.cache_offset = g->cache_offset;
    r.obj_id = g->obj_id;
    put(o, &g->obj_id, sizeof g->obj_id);
    put(o, &r, sizeof r);
    int32_t has_hist = g->has_hist;
    put(o, &has_hist, sizeof has_hist);
    if (has_hist) {
        put(o, &g->hist.dtype, sizeof g->hist.dtype);
        put(o, &g->hist.nbin, sizeof g->hist.nbin);
        put(o, g->hist.range, sizeof(double) * 2 * (size_t)g->hist.nbin);
        put(o, g->hist.bin, sizeof(uint64_t) * (size_t)g->hist.nbin);
        put(o, &g->hist.incr, sizeof g->hist.incr);
    }
    o->n++;
    return o->err;
}

/* Each section: its record count, then its records. The count is patched
 * in after the section (PDC knows its counts up front). */
static int fw_close(void *ctx, model_server *m, struct bench_close_times *t)
{
    static const struct ckpt_rebuild_cbs sect[5] = {
        {fw_cont, NULL, NULL, NULL, NULL}, {NULL, fw_obj, NULL, NULL, NULL},
        {NULL, NULL, fw_kvtag, NULL, NULL}, {NULL, NULL, NULL, fw_member, NULL},
        {NULL, NULL, NULL, NULL, fw_region}};
    char *path = ctx;
    struct fw_out o;
    int rc = 0;
    double t0 = bench_now();
    memset(&o, 0, sizeof o);
    if ((o.f = fopen(path, "w+")) == NULL) {
        rc = ckpt_error(CKPT_E_IO, "%s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    for (int s = 0; s < 5 && rc == 0 && !o.err; s++) {
        long at = ftell(o.f);
        o.n = 0;
        put(&o, &o.n, sizeof o.n);
        rc = model_foreach(m, &sect[s], &o);
        if (rc == 0 && !o.err && (fseek(o.f, at, SEEK_SET) != 0 ||
                                  fwrite(&o.n, sizeof o.n, 1, o.f) != 1 ||
                                  fseek(o.f, 0, SEEK_END) != 0))
            o.err = errno ? errno : EIO;
    }
    if (fclose(o.f) != 0 && !o.err)
        o.err = errno ? errno : EIO;
    if (rc == 0 && o.err)
        rc = ckpt_error(CKPT_E_IO, "%s: %s", path, strerror(o.err));
    double t1 = bench_now();
    /* PDC does not sync: the fsync is measured apart (close_fsync_s) */
    if (rc == 0)
        rc = bench_fsync_path(path);
    t->close_s = t1 - t0;
    t->fsync_s = bench_now() - t1;
    free(path);
    return rc;
}

/* ---- restart: read everything, rebuild ---- */

static int rd(FILE *f, void *p, size_t n, const char *path)
{
    if (n && fread(p, n, 1, f) != 1)
        return ckpt_error(CKPT_E_RECORD, "%s: truncated checkpoint file", path);
    return 0;
}

static int read_count(FILE *f, int32_t *n, const char *path)
{
    int rc = rd(f, n, sizeof *n, path);
    if (rc == 0 && *n < 0)
        rc = ckpt_error(CKPT_E_RECORD, "%s: negative count", path);
    return rc;
}

static int fw_rebuild(model_server *m, const char *root, int rank, int nranks,
                      struct ckpt_rebuild_stats *st)
{
    const struct ckpt_rebuild_cbs *cb = &model_rebuild_cbs;
    char path[4200];
    struct pdc_metadata *md = malloc(sizeof *md);
    struct pdc_region *reg = malloc(sizeof *reg);
    struct pdc_cont *pc = malloc(sizeof *pc);
    char *name = NULL, *value = NULL;
    size_t name_cap = 0, value_cap = 0;
    int32_t n;
    uint32_t hash;
    int rc = 0;
    (void)nranks;
    fw_path(path, sizeof path, root, rank);
    FILE *f = fopen(path, "r");
    if (f == NULL || md == NULL || reg == NULL || pc == NULL) {
        rc = f ? CKPT_E_NOMEM : ckpt_error(CKPT_E_NOSTORE, "%s: %s", path, strerror(errno));
        goto done;
    }
    /* containers */
    if ((rc = read_count(f, &n, path)) != 0)
        goto done;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        if ((rc = rd(f, &hash, sizeof hash, path)) || (rc = rd(f, pc, sizeof *pc, path)))
            break;
        pc->cont_name[PDC_ADDR_MAX - 1] = pc->tags[PDC_TAG_LEN_MAX - 1] = 0;
        struct ckpt_cont c = {pc->cont_id, pc->cont_name, pc->tags};
        if ((rc = cb->cont(&c, m)) == 0)
            st->conts++;
    }
    /* objects */
    if (rc || (rc = read_count(f, &n, path)) != 0)
        goto done;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        if ((rc = rd(f, &hash, sizeof hash, path)) || (rc = rd(f, md, sizeof *md, path)))
            break;
        md->app_name[PDC_ADDR_MAX - 1] = md->obj_name[PDC_ADDR_MAX - 1] = 0;
        md->data_location[PDC_ADDR_MAX - 1] = md->tags[PDC_TAG_LEN_MAX - 1] = 0;
        if (md->ndim > PDC_DIM_MAX) {
            rc = ckpt_error(CKPT_E_RECORD, "%s: object with ndim %zu", path, md->ndim);
            break;
        }
        struct ckpt_obj o;
        memset(&o, 0, sizeof o);
        o.obj_id = md->obj_id;
        o.cont_id = md->cont_id;
        o.obj_name = md->obj_name;
        o.app_name = md->app_name;
        o.data_location = md->data_location;
        o.tags = md->tags;
        o.time_step = md->time_step;
        o.user_id = md->user_id;
        o.data_type = md->data_type;
        o.transform_state = md->transform_state;
        o.create_time = md->create_time;
        o.last_modified_time = md->last_modified_time;
        o.data_server_id = md->data_server_id;
        o.region_partition = (uint8_t)md->region_partition;
        o.consistency = (uint8_t)md->consistency;
        o.ndim = (uint32_t)md->ndim;
        memcpy(o.dims, md->dims, sizeof o.dims);
        if ((rc = cb->obj(&o, m)) == 0)
            st->objs++;
    }
    /* kvtags: PDC mallocs the name and the value of each */
    if (rc || (rc = read_count(f, &n, path)) != 0)
        goto done;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        uint64_t owner;
        int32_t key_len;
        struct ckpt_kvtag t;
        if ((rc = rd(f, &owner, sizeof owner, path)) || (rc = rd(f, &key_len, sizeof key_len, path)))
            break;
        if (key_len < 1 || key_len > 65536) {
            rc = ckpt_error(CKPT_E_RECORD, "%s: kvtag name of %d bytes", path, key_len);
            break;
        }
        if ((size_t)key_len > name_cap) {
            free(name);
            name_cap = (size_t)key_len * 2;
            if ((name = malloc(name_cap)) == NULL) {
                rc = CKPT_E_NOMEM;
                break;
            }
        }
        if ((rc = rd(f, name, (size_t)key_len, path)) || (rc = rd(f, &t.type, sizeof t.type, path)) ||
            (rc = rd(f, &t.size, sizeof t.size, path)))
            break;
        name[key_len - 1] = 0;
        if (t.size > value_cap) {
            free(value);
            value_cap = (size_t)t.size * 2;
            if ((value = malloc(value_cap)) == NULL) {
                rc = CKPT_E_NOMEM;
                break;
            }
        }
        if ((rc = rd(f, value, t.size, path)) != 0)
            break;
        t.name = name;
        t.value = value;
        if ((rc = cb->kvtag(owner, &t, m)) == 0)
            st->kvtags++;
    }
    /* members */
    if (rc || (rc = read_count(f, &n, path)) != 0)
        goto done;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        uint64_t co[2];
        if ((rc = rd(f, co, sizeof co, path)) == 0 && (rc = cb->member(co[0], co[1], m)) == 0)
            st->members++;
    }
    /* regions */
    if (rc || (rc = read_count(f, &n, path)) != 0)
        goto done;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        uint64_t obj;
        int32_t has_hist;
        double range[2 * 64];
        uint64_t bins[64];
        struct ckpt_region g;
        if ((rc = rd(f, &obj, sizeof obj, path)) || (rc = rd(f, reg, sizeof *reg, path)) ||
            (rc = rd(f, &has_hist, sizeof has_hist, path)))
            break;
        reg->storage_location[PDC_ADDR_MAX - 1] = reg->cache_location[PDC_ADDR_MAX - 1] = 0;
        if (reg->ndim < 1 || reg->ndim > PDC_DIM_MAX) {
            rc = ckpt_error(CKPT_E_RECORD, "%s: region with ndim %zu", path, reg->ndim);
            break;
        }
        memset(&g, 0, sizeof g);
        g.obj_id = obj;
        g.ndim = (uint32_t)reg->ndim;
        memcpy(g.start, reg->start, sizeof g.start);
        memcpy(g.count, reg->count, sizeof g.count);
        g.data_size = reg->data_size;
        g.unit_size = reg->unit_size;
        g.data_loc_type = reg->data_loc_type;
        g.storage_location = reg->storage_location;
        g.offset = reg->offset;
        g.cache_location = reg->cache_location;
        g.cache_offset = reg->cache_offset;
        g.has_hist = has_hist;
        if (has_hist) {
            if ((rc = rd(f, &g.hist.dtype, sizeof g.hist.dtype, path)) ||
                (rc = rd(f, &g.hist.nbin, sizeof g.hist.nbin, path)))
                break;
            if (g.hist.nbin < 0 || g.hist.nbin > 64) {
                rc = ckpt_error(CKPT_E_RECORD, "%s: histogram of %d bins", path, g.hist.nbin);
                break;
            }
            if ((rc = rd(f, range, sizeof(double) * 2 * (size_t)g.hist.nbin, path)) ||
                (rc = rd(f, bins, sizeof(uint64_t) * (size_t)g.hist.nbin, path)) ||
                (rc = rd(f, &g.hist.incr, sizeof g.hist.incr, path)))
                break;
            g.hist.range = range;
            g.hist.bin = bins;
        }
        if ((rc = cb->region(&g, m)) == 0)
            st->regions++;
    }
done:
    if (f)
        fclose(f);
    free(md);
    free(reg);
    free(pc);
    free(name);
    free(value);
    return rc;
}

const struct bench_method bench_method_fwrite = {
    "fwrite", 0, fw_path, fw_open, fw_close, fw_discard, NULL, NULL, fw_rebuild,
};
