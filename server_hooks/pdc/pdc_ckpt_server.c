/*
 * pdc_ckpt_server.c - pdc-ckpt inside PDC's own metadata server (hpc-io/pdc
 * 2e5de75a). Compiled into PDC's pdc_server_lib by the CMake lines of
 * pdc-2e5de75a.patch; the patch calls the functions of pdc_ckpt_server.h at
 * every mutation, at checkpoint and close, at restart and on lookups.
 *
 * What it does:
 *   - converts PDC's structs (pdc_metadata_t, pdc_kvtag_t,
 *     pdc_cont_hash_table_entry_t, region_list_t) to the hook structs and
 *     logs each mutation into the rank's store;
 *   - hands out object and container ids from the store's persisted
 *     sequence, so ids never repeat across restarts and crashes;
 *   - restarts from the store, in one of two forms:
 *       map (default): the store is opened and the server is ready; a
 *         lookup that misses PDC's tables faults the record in (with its
 *         kvtags, regions and, for a container, its members). The ids
 *         already faulted, created or deleted since the restart are kept
 *         in `seen_g`, so nothing is faulted twice or resurrected. Scans of
 *         the whole table (kvtag queries, metadata queries) fault
 *         everything in first.
 *       rebuild: every record is copied into PDC's tables before the
 *         server is ready.
 *   - logs every entry PDC's DART RPCs insert into or delete from its
 *     IDIOMS index (pdc_server entries `i`) and replays them into the index
 *     at restart (both forms), before "Server ready": PDC's own dump (a
 *     file per virtual node) and its recovery are not used;
 *   - logs every change of PDC's transfer-request region table and of
 *     its data-server region table (where region transfers put each
 *     region's bytes) into the store's pdc_server database as it happens,
 *     and restores both tables at restart (both forms), before "Server
 *     ready"; a read of a region the table does not hold (never written,
 *     or its record lost with a crash before a commit) is refused to the
 *     client instead of answered with whatever bytes are there.
 *
 * Runs on PDC's single RPC thread (PDC's default build, ENABLE_MULTITHREAD
 * off). A fault holds a store read while it fills PDC's tables and never
 * calls a hook inside it (map growth waits for readers).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_hooks.h"

#include "pdc_ckpt_server.h"
#include "pdc_server_metadata.h"
#include "pdc_server_data.h"
#include "pdc_server_metadata_index.h"
#include "idioms_local_index.h"
#include "pdc_server_region_transfer_metadata_query.h"
#include "pdc_utlist.h"
#include "string_utils.h"
#ifdef ENABLE_MPI
#include <mpi.h>
#endif

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

extern int pdc_server_size_g;
extern IDIOMS_t *idioms_g; /* pdc_server_metadata_index.c */

static ckpt_hooks *ckpt_g;       /* NULL: store off (PDC_CKPT=off, or open failed) */
static char ckpt_root_g[PATH_MAX];
static int map_mode_g;           /* restarted in map form: fault on lookups */
static int all_faulted_g;        /* map form: every record is in the tables */

/* A commit failed (full disk, I/O error, damaged page): the mutations
 * are staged, not committed. Until a commit succeeds again, writes are
 * refused to the client (PDC_ckpt_writable); reads go on. */
static int commit_failing_g;
static int dart_restore(void);
static int close_failed_g; /* close could not persist the state: exit 1 */

static int commit_failure(int rc)
{
    return rc == CKPT_E_NOSPACE || rc == CKPT_E_IO || rc == CKPT_E_BACKLOG || rc == CKPT_E_FAILED ||
           rc == CKPT_E_CORRUPT || rc == CKPT_E_LMDB || rc == CKPT_E_SYS;
}

static void ckpt_log(const char *what, int rc)
{
    /* the message is this thread's last error, also when no handle is
     * open (a failed open): read it right away, before anything else can
     * fail on this thread */
    const char *msg = ckpt_errmsg();
    fprintf(stderr, "==PDC_SERVER[%d]: pdc-ckpt %s: %s: %s\n", pdc_server_rank_g, what,
            ckpt_errname(rc), msg && *msg ? msg : ckpt_strerror(rc));
    if (ckpt_g != NULL && commit_failure(rc) && !commit_failing_g) {
        commit_failing_g = 1;
        fprintf(stderr,
                "==PDC_SERVER[%d]: pdc-ckpt: the store cannot commit: writes are refused to clients "
                "until a commit succeeds (reads go on; %zu mutations staged, kept)\n",
                pdc_server_rank_g, ckpt_store_pending(ckpt_hooks_store(ckpt_g)));
    }
}

/* A lookup (map-form fault) that could not read a record: the record is
 * not handed to PDC, so the lookup fails to the client. Logged with the
 * store's reason (rank, database and key of a damaged record); writes are
 * not refused for it (nothing failed to commit). */
static void ckpt_log_lookup(const char *what, int rc)
{
    const char *msg = ckpt_errmsg();
    fprintf(stderr, "==PDC_SERVER[%d]: pdc-ckpt %s: %s: %s (not handed to PDC: the lookup fails)\n",
            pdc_server_rank_g, what, ckpt_errname(rc), msg && *msg ? msg : ckpt_strerror(rc));
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- id table: seen ids (map form), id -> table entry (rebuild) ---- */

enum { ID_OBJ = 1, ID_CONT = 2 };

struct id_slot {
    uint64_t id; /* 0: empty (PDC ids start at 10^9) */
    void *ptr;
    int kind;
};

struct id_table {
    struct id_slot *slot;
    size_t cap, n; /* cap: power of two */
};

static struct id_table seen_g;

static size_t id_hash(uint64_t id, size_t cap)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return (size_t)id & (cap - 1);
}

static struct id_slot *id_find(const struct id_table *t, uint64_t id)
{
    if (t->cap == 0)
        return NULL;
    for (size_t i = id_hash(id, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->slot[i].id == id)
            return &t->slot[i];
        if (t->slot[i].id == 0)
            return NULL;
    }
}

/* Insert or overwrite; -1 when out of memory. */
static int id_put(struct id_table *t, uint64_t id, void *ptr, int kind)
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        struct id_slot *s = calloc(cap, sizeof *s);
        if (s == NULL)
            return -1;
        for (size_t i = 0; i < t->cap; i++) {
            if (t->slot[i].id == 0)
                continue;
            size_t j = id_hash(t->slot[i].id, cap);
            while (s[j].id != 0)
                j = (j + 1) & (cap - 1);
            s[j] = t->slot[i];
        }
        free(t->slot);
        t->slot = s;
        t->cap = cap;
    }
    size_t i = id_hash(id, t->cap);
    while (t->slot[i].id != 0 && t->slot[i].id != id)
        i = (i + 1) & (t->cap - 1);
    if (t->slot[i].id == 0)
        t->n++;
    t->slot[i] = (struct id_slot){id, ptr, kind};
    return 0;
}

static void id_free(struct id_table *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* Map form: from now on this id is PDC's business (created, faulted or
 * deleted since the restart). */
static void mark_seen(uint64_t id)
{
    if (map_mode_g && !all_faulted_g && id != 0 && id_put(&seen_g, id, NULL, 0) != 0)
        fprintf(stderr, "==PDC_SERVER[%d]: pdc-ckpt: out of memory marking id %" PRIu64 "\n",
                pdc_server_rank_g, id);
}

/* ---- PDC structs <-> hook structs ---- */

static void meta_to_ckpt(struct ckpt_obj *o, const pdc_metadata_t *m)
{
    memset(o, 0, sizeof *o);
    o->obj_id = m->obj_id;
    o->cont_id = m->cont_id;
    o->obj_name = m->obj_name;
    o->app_name = m->app_name;
    o->data_location = m->data_location;
    o->tags = m->tags;
    o->time_step = m->time_step;
    o->user_id = m->user_id;
    o->data_type = (int32_t)m->data_type;
    o->transform_state = m->transform_state;
    o->create_time = (int64_t)m->create_time;
    o->last_modified_time = (int64_t)m->last_modified_time;
    o->data_server_id = m->data_server_id;
    o->region_partition = m->region_partition;
    o->consistency = m->consistency;
    o->ndim = m->ndim < CKPT_MAX_DIM ? (uint32_t)m->ndim : CKPT_MAX_DIM;
    for (uint32_t i = 0; i < o->ndim; i++)
        o->dims[i] = m->dims[i];
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static void region_to_ckpt(struct ckpt_region *c, uint64_t obj_id, const region_list_t *r)
{
    memset(c, 0, sizeof *c);
    c->obj_id = obj_id;
    c->ndim = r->ndim < CKPT_MAX_DIM ? (uint32_t)r->ndim : CKPT_MAX_DIM;
    for (uint32_t i = 0; i < c->ndim; i++) {
        c->start[i] = r->start[i];
        c->count[i] = r->count[i];
    }
    c->data_size = r->data_size;
    c->unit_size = r->unit_size;
    c->data_loc_type = (int32_t)r->data_loc_type;
    c->storage_location = r->storage_location;
    c->offset = r->offset;
    c->cache_location = r->cache_location;
    c->cache_offset = r->cache_offset;
    if (r->region_hist != NULL && r->region_hist->nbin > 0) {
        c->has_hist = 1;
        c->hist.dtype = (int32_t)r->region_hist->dtype;
        c->hist.nbin = r->region_hist->nbin;
        c->hist.range = r->region_hist->range;
        c->hist.bin = r->region_hist->bin;
        c->hist.incr = r->region_hist->incr;
    }
}

/* ---- filling PDC's tables (rebuild and faults; never calls a hook) ---- */

/* A new pdc_metadata_t holding o, not in PDC's table yet; NULL when out
 * of memory. */
static pdc_metadata_t *meta_from_ckpt(const struct ckpt_obj *o)
{
    pdc_metadata_t *m = malloc(sizeof *m);
    if (m == NULL)
        return NULL;
    PDC_metadata_init(m);
    m->obj_id = o->obj_id;
    m->cont_id = o->cont_id;
    copy_str(m->obj_name, sizeof m->obj_name, o->obj_name);
    copy_str(m->app_name, sizeof m->app_name, o->app_name);
    copy_str(m->data_location, sizeof m->data_location, o->data_location);
    copy_str(m->tags, sizeof m->tags, o->tags);
    m->time_step = o->time_step;
    m->user_id = o->user_id;
    m->data_type = (pdc_var_type_t)o->data_type;
    m->transform_state = o->transform_state;
    m->create_time = (time_t)o->create_time;
    m->last_modified_time = (time_t)o->last_modified_time;
    m->data_server_id = o->data_server_id;
    m->region_partition = o->region_partition;
    m->consistency = o->consistency;
    m->ndim = o->ndim;
    for (uint32_t i = 0; i < o->ndim && i < DIM_MAX; i++)
        m->dims[i] = o->dims[i];
    return m;
}

/* m into PDC's object table (its name's bucket); -1 when out of memory. */
static int table_insert_obj(pdc_metadata_t *m)
{
    uint32_t *key = malloc(sizeof *key);
    if (key == NULL)
        return -1;
    *key = PDC_get_hash_by_name(m->obj_name);
    pdc_hash_table_entry_head *head = hash_table_lookup(metadata_hash_table_g, key);
    if (head == NULL) {
        if ((head = calloc(1, sizeof *head)) == NULL) {
            free(key);
            return -1;
        }
        if (PDC_Server_hash_table_list_init(head, key) != SUCCEED) {
            free(head);
            free(key);
            return -1;
        }
        key = NULL; /* owned by the table now */
    }
    PDC_Server_hash_table_list_insert(head, m);
    free(key);
    n_metadata_g++;
    return 0;
}

static pdc_metadata_t *table_add_obj(const struct ckpt_obj *o)
{
    pdc_metadata_t *m = meta_from_ckpt(o);
    if (m != NULL && table_insert_obj(m) != 0) {
        free(m);
        m = NULL;
    }
    return m;
}

static void kvtags_free(pdc_kvtag_list_t **head)
{
    pdc_kvtag_list_t *t, *tmp;
    DL_FOREACH_SAFE(*head, t, tmp)
    {
        DL_DELETE(*head, t);
        PDC_free_kvtag(&t->kvtag);
        free(t);
    }
}

/* An object or container that failed to fault in completely (a damaged
 * kvtag, region or member record): freed, never handed to PDC. */
static void meta_free(pdc_metadata_t *m)
{
    region_list_t *r, *tmp;
    kvtags_free(&m->kvtag_list_head);
    DL_FOREACH_SAFE(m->storage_region_list_head, r, tmp)
    {
        DL_DELETE(m->storage_region_list_head, r);
        if (r->region_hist != NULL) {
            free(r->region_hist->range);
            free(r->region_hist->bin);
            free(r->region_hist);
        }
        free(r);
    }
    free(m);
}

static pdc_cont_hash_table_entry_t *cont_from_ckpt(const struct ckpt_cont *c)
{
    pdc_cont_hash_table_entry_t *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    e->cont_id = c->cont_id;
    copy_str(e->cont_name, sizeof e->cont_name, c->cont_name);
    copy_str(e->tags, sizeof e->tags, c->tags);
    return e;
}

static int table_insert_cont(pdc_cont_hash_table_entry_t *e)
{
    uint32_t *key = malloc(sizeof *key);
    if (key == NULL)
        return -1;
    *key = PDC_get_hash_by_name(e->cont_name);
    if (hash_table_insert(container_hash_table_g, key, e) != 1) {
        free(key);
        return -1;
    }
    return 0;
}

static pdc_cont_hash_table_entry_t *table_add_cont(const struct ckpt_cont *c)
{
    pdc_cont_hash_table_entry_t *e = cont_from_ckpt(c);
    if (e != NULL && table_insert_cont(e) != 0) {
        free(e);
        e = NULL;
    }
    return e;
}

static void cont_free(pdc_cont_hash_table_entry_t *e)
{
    kvtags_free(&e->kvtag_list_head);
    free(e->obj_ids);
    free(e);
}

static int list_add_kvtag(pdc_kvtag_list_t **head, const struct ckpt_kvtag *t)
{
    pdc_kvtag_t tag = {(char *)t->name, t->size, t->type, (void *)t->value};
    pdc_kvtag_list_t *item = calloc(1, sizeof *item);
    if (item == NULL || PDC_kvtag_dup(&tag, &item->kvtag) != SUCCEED || item->kvtag == NULL) {
        free(item);
        return -1;
    }
    DL_APPEND(*head, item);
    return 0;
}

static int cont_add_member(pdc_cont_hash_table_entry_t *e, uint64_t obj_id)
{
    if (e->n_obj >= e->n_allocated) {
        int cap = e->n_allocated ? e->n_allocated * 2 : PDC_ALLOC_BASE_NUM;
        uint64_t *ids = realloc(e->obj_ids, (size_t)cap * sizeof *ids);
        if (ids == NULL)
            return -1;
        e->obj_ids = ids;
        e->n_allocated = cap;
    }
    e->obj_ids[e->n_obj++] = obj_id;
    return 0;
}

/* A new region_list_t with the persistent fields of c; NULL when out of
 * memory. */
static region_list_t *region_from_ckpt(const struct ckpt_region *c)
{
    region_list_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    PDC_init_region_list(r);
    r->ndim = c->ndim;
    for (uint32_t i = 0; i < c->ndim && i < DIM_MAX; i++) {
        r->start[i] = c->start[i];
        r->count[i] = c->count[i];
    }
    r->data_size = c->data_size;
    r->unit_size = c->unit_size;
    r->data_loc_type = (_pdc_data_loc_t)c->data_loc_type;
    copy_str(r->storage_location, sizeof r->storage_location, c->storage_location);
    r->offset = c->offset;
    copy_str(r->cache_location, sizeof r->cache_location, c->cache_location);
    r->cache_offset = c->cache_offset;
    if (c->has_hist && c->hist.nbin > 0) {
        pdc_histogram_t *h = calloc(1, sizeof *h);
        size_t nbin = (size_t)c->hist.nbin;
        if (h == NULL || (h->range = malloc(2 * nbin * sizeof(double))) == NULL ||
            (h->bin = malloc(nbin * sizeof(uint64_t))) == NULL) {
            if (h)
                free(h->range);
            free(h);
            free(r);
            return NULL;
        }
        h->dtype = (pdc_var_type_t)c->hist.dtype;
        h->nbin = c->hist.nbin;
        h->incr = c->hist.incr;
        for (size_t i = 0; i < 2 * nbin; i++)
            h->range[i] = ckpt_hist_range(&c->hist, i);
        for (size_t i = 0; i < nbin; i++)
            h->bin[i] = ckpt_hist_bin(&c->hist, i);
        r->region_hist = h;
    }
    r->obj_id = c->obj_id;
    return r;
}

static int meta_add_region(pdc_metadata_t *m, const struct ckpt_region *c)
{
    region_list_t *r = region_from_ckpt(c);
    if (r == NULL)
        return -1;
    r->meta = m;
    r->obj_id = m->obj_id;
    DL_APPEND(m->storage_region_list_head, r);
    return 0;
}

/* ---- rebuild restart: every record into the tables ---- */

struct rebuild {
    struct id_table owners; /* id -> pdc_metadata_t* / pdc_cont_hash_table_entry_t* */
};

static int rb_cont(const struct ckpt_cont *c, void *p)
{
    struct rebuild *rb = p;
    pdc_cont_hash_table_entry_t *e = table_add_cont(c);
    if (e == NULL || id_put(&rb->owners, c->cont_id, e, ID_CONT) != 0)
        return ckpt_error(CKPT_E_NOMEM, "container %" PRIu64 ": out of memory", c->cont_id);
    return 0;
}

static int rb_obj(const struct ckpt_obj *o, void *p)
{
    struct rebuild *rb = p;
    pdc_metadata_t *m = table_add_obj(o);
    if (m == NULL || id_put(&rb->owners, o->obj_id, m, ID_OBJ) != 0)
        return ckpt_error(CKPT_E_NOMEM, "object %" PRIu64 ": out of memory", o->obj_id);
    return 0;
}

static int rb_kvtag(uint64_t owner, const struct ckpt_kvtag *t, void *p)
{
    struct rebuild *rb = p;
    struct id_slot *s = id_find(&rb->owners, owner);
    if (s == NULL)
        return 0; /* a tag without its owner: verify reports it; nothing to attach to */
    pdc_kvtag_list_t **head = s->kind == ID_OBJ ? &((pdc_metadata_t *)s->ptr)->kvtag_list_head
                                                : &((pdc_cont_hash_table_entry_t *)s->ptr)->kvtag_list_head;
    return list_add_kvtag(head, t) ? ckpt_error(CKPT_E_NOMEM, "kvtag of %" PRIu64, owner) : 0;
}

static int rb_member(uint64_t cont_id, uint64_t obj_id, void *p)
{
    struct rebuild *rb = p;
    struct id_slot *s = id_find(&rb->owners, cont_id);
    if (s == NULL || s->kind != ID_CONT)
        return 0;
    return cont_add_member(s->ptr, obj_id) ? ckpt_error(CKPT_E_NOMEM, "member of %" PRIu64, cont_id)
                                           : 0;
}

static int rb_region(const struct ckpt_region *c, void *p)
{
    struct rebuild *rb = p;
    struct id_slot *s = id_find(&rb->owners, c->obj_id);
    if (s == NULL || s->kind != ID_OBJ)
        return 0;
    return meta_add_region(s->ptr, c) ? ckpt_error(CKPT_E_NOMEM, "region of %" PRIu64, c->obj_id)
                                      : 0;
}

/* ---- map form: faults ---- */

static int fault_tag_cb(uint64_t owner, const struct ckpt_kvtag *t, void *p)
{
    (void)owner;
    return list_add_kvtag(p, t) ? CKPT_E_NOMEM : 0;
}

static int fault_member_cb(uint64_t cont_id, uint64_t obj_id, void *p)
{
    (void)cont_id;
    return cont_add_member(p, obj_id) ? CKPT_E_NOMEM : 0;
}

static int fault_region_cb(const struct ckpt_region *c, void *p)
{
    return meta_add_region(p, c) ? CKPT_E_NOMEM : 0;
}

/* Fault `id` in within read `r`, unless PDC already has it. The record
 * goes into PDC's table only whole, with all its kvtags and regions (or
 * members): one that cannot be read completely (a damaged record,
 * CKPT_E_CORRUPT) is never handed to PDC, so the lookup fails to the
 * client instead of answering a part. */
static int fault_in(ckpt_hooks_read *r, uint64_t id)
{
    struct ckpt_obj o;
    struct ckpt_cont c;
    int rc;
    if (id == 0 || id_find(&seen_g, id) != NULL)
        return 0;
    mark_seen(id);
    if ((rc = ckpt_hooks_get_obj(&o, r, id)) == 0) {
        pdc_metadata_t *m = meta_from_ckpt(&o);
        if (m == NULL)
            return CKPT_E_NOMEM;
        if ((rc = ckpt_hooks_foreach_kvtag(r, id, fault_tag_cb, &m->kvtag_list_head)) == 0)
            rc = ckpt_hooks_foreach_region(r, id, fault_region_cb, m);
        if (rc == 0 && table_insert_obj(m) != 0)
            rc = CKPT_E_NOMEM;
        if (rc != 0)
            meta_free(m);
        return rc;
    }
    if (rc != CKPT_E_NOTFOUND)
        return rc;
    if ((rc = ckpt_hooks_get_cont(&c, r, id)) == 0) {
        pdc_cont_hash_table_entry_t *e = cont_from_ckpt(&c);
        if (e == NULL)
            return CKPT_E_NOMEM;
        if ((rc = ckpt_hooks_foreach_kvtag(r, id, fault_tag_cb, &e->kvtag_list_head)) == 0)
            rc = ckpt_hooks_foreach_member(r, id, fault_member_cb, e);
        if (rc == 0 && table_insert_cont(e) != 0)
            rc = CKPT_E_NOMEM;
        if (rc != 0)
            cont_free(e);
        return rc;
    }
    return rc == CKPT_E_NOTFOUND ? 0 : rc;
}

static int fault_begin(ckpt_hooks_read **r)
{
    int rc;
    if (ckpt_g == NULL || !map_mode_g || all_faulted_g)
        return 0;
    if ((rc = ckpt_hooks_read_begin(r, ckpt_g)) != 0) {
        ckpt_log_lookup("fault: read_begin", rc);
        return 0;
    }
    return 1;
}

void PDC_ckpt_fault_id(uint64_t id)
{
    ckpt_hooks_read *r;
    int rc;
    if (id_find(&seen_g, id) != NULL || !fault_begin(&r))
        return;
    if ((rc = fault_in(r, id)) != 0)
        ckpt_log_lookup("fault in by id", rc);
    ckpt_hooks_read_end(r);
}

/* The ids of one name and time step: the name index's and those of the
 * same-name entries. */
struct name_ids {
    uint64_t *id;
    size_t n, cap;
};

static int name_ids_add(uint64_t id, void *p)
{
    struct name_ids *v = p;
    for (size_t i = 0; i < v->n; i++)
        if (v->id[i] == id)
            return 0;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 8;
        uint64_t *a = realloc(v->id, cap * sizeof *a);
        if (a == NULL)
            return ckpt_error(CKPT_E_NOMEM, "out of memory");
        v->id = a;
        v->cap = cap;
    }
    v->id[v->n++] = id;
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Every object of this name and time step, in creation order (ascending
 * ids, as PDC's bucket list holds them): PDC answers a lookup by name with
 * the first that matches (PDC_metadata_cmp), so all of them must be there,
 * in that order, for the answer to be PDC's. */
void PDC_ckpt_fault_obj_name(const char *name, int32_t time_step)
{
    ckpt_hooks_read *r;
    struct ckpt_obj o;
    struct name_ids v = {NULL, 0, 0};
    int rc;
    if (name == NULL || !fault_begin(&r))
        return;
    rc = ckpt_hooks_get_obj_by_name(&o, r, name, time_step);
    if (rc == 0)
        rc = name_ids_add(o.obj_id, &v);
    if (rc == 0 || rc == CKPT_E_NOTFOUND)
        rc = ckpt_hooks_foreach_same_name(r, name, time_step, name_ids_add, &v);
    if (rc == 0) {
        qsort(v.id, v.n, sizeof *v.id, cmp_id);
        for (size_t i = 0; rc == 0 && i < v.n; i++)
            rc = fault_in(r, v.id[i]);
    }
    if (rc != 0 && rc != CKPT_E_NOTFOUND)
        ckpt_log_lookup("fault in by object name", rc);
    ckpt_hooks_read_end(r);
    free(v.id);
}

void PDC_ckpt_fault_cont_name(const char *name)
{
    ckpt_hooks_read *r;
    struct ckpt_cont c;
    int rc;
    if (name == NULL || !fault_begin(&r))
        return;
    if ((rc = ckpt_hooks_get_cont_by_name(&c, r, name)) == 0)
        rc = fault_in(r, c.cont_id);
    if (rc != 0 && rc != CKPT_E_NOTFOUND)
        ckpt_log_lookup("fault in by container name", rc);
    ckpt_hooks_read_end(r);
}

static int fault_all_cb(uint64_t id, void *p)
{
    return fault_in(p, id);
}

void PDC_ckpt_fault_all(void)
{
    ckpt_hooks_read *r;
    int rc;
    if (!fault_begin(&r))
        return;
    if ((rc = ckpt_hooks_foreach_id(r, 1, fault_all_cb, r)) == 0 &&
        (rc = ckpt_hooks_foreach_id(r, 0, fault_all_cb, r)) == 0) {
        all_faulted_g = 1; /* every later lookup finds PDC's tables complete */
        id_free(&seen_g);
    }
    else
        ckpt_log_lookup("fault in everything", rc);
    ckpt_hooks_read_end(r);
}

/* ---- kvtag queries from the store's tag index (map form) ---- */

/* PDC_Server_query_kvtag_someta scans the objects of PDC's tables. After a
 * map-form restart the objects split in two sets: those PDC's tables hold
 * or that were deleted since the restart (the ids of seen_g: faulted in,
 * created or deleted), which PDC's own scan answers, and the others, which
 * only the store holds. For the latter the store's tag index names the
 * owners carrying the tag; each one's kvtag of that name is read from the
 * store and matched with PDC's own function. Containers carry kvtags too
 * but PDC's scan never looks at them: the store's containers (the few that
 * existed at the restart; later ones are in seen_g) are skipped. */
static struct id_table store_conts_g; /* container ids of the store, at the first query */
static int store_conts_loaded_g;

static int store_cont_add(uint64_t id, void *p)
{
    (void)p;
    return id_put(&store_conts_g, id, NULL, ID_CONT) ? ckpt_error(CKPT_E_NOMEM, "out of memory") : 0;
}

struct kvtag_query {
    pdc_kvtag_t *in;
    PDC_ckpt_kvtag_match_t match;
    ckpt_hooks_read *r;
    uint32_t *n;
    uint64_t **ids;
    uint64_t *alloc_size;
    unsigned char *val; /* the value with a NUL after it, aligned for PDC's compare */
    size_t val_cap;
    uint64_t owners, matched;
};

static int kvtag_query_owner(uint64_t id, void *p)
{
    struct kvtag_query *q = p;
    struct ckpt_kvtag t;
    int rc;
    if (id_find(&seen_g, id) != NULL || id_find(&store_conts_g, id) != NULL)
        return 0; /* in PDC's tables (its scan answers it), deleted, or a container */
    if ((rc = ckpt_hooks_get_kvtag(&t, q->r, id, q->in->name)) != 0)
        return rc == CKPT_E_NOTFOUND ? 0 : rc;
    q->owners++;
    if ((size_t)t.size + 1 > q->val_cap) {
        size_t cap = (size_t)t.size + 1 > 2 * q->val_cap ? (size_t)t.size + 1 : 2 * q->val_cap;
        unsigned char *v = realloc(q->val, cap);
        if (v == NULL)
            return ckpt_error(CKPT_E_NOMEM, "kvtag query: out of memory");
        q->val = v;
        q->val_cap = cap;
    }
    if (t.size > 0)
        memcpy(q->val, t.value, t.size);
    q->val[t.size] = '\0';
    pdc_kvtag_t tag = {q->in->name, t.size, t.type, q->val};
    if (!q->match(q->in, &tag))
        return 0;
    if (*q->n >= *q->alloc_size) {
        uint64_t cap = *q->alloc_size ? 2 * *q->alloc_size : 128;
        uint64_t *ids = realloc(*q->ids, cap * sizeof *ids);
        if (ids == NULL)
            return ckpt_error(CKPT_E_NOMEM, "kvtag query: out of memory");
        *q->ids = ids;
        *q->alloc_size = cap;
    }
    (*q->ids)[(*q->n)++] = id;
    q->matched++;
    return 0;
}

void PDC_ckpt_query_kvtag(pdc_kvtag_t *in, PDC_ckpt_kvtag_match_t match, uint32_t *n, uint64_t **obj_ids,
                          uint64_t *alloc_size)
{
    ckpt_hooks_read *r;
    int rc;
    if (ckpt_g == NULL || !map_mode_g || all_faulted_g)
        return;
    /* PDC matches the tag name as a pattern too (simple_matches): a name
     * with a leading or trailing '*' names no entry of the index */
    if (in == NULL || in->name == NULL || determine_pattern_type(in->name) != PATTERN_EXACT) {
        PDC_ckpt_fault_all();
        return;
    }
    if (!fault_begin(&r))
        return;
    double t0 = now_ms();
    if (!store_conts_loaded_g) {
        if ((rc = ckpt_hooks_foreach_id(r, 1, store_cont_add, NULL)) != 0) {
            ckpt_log("kvtag query: containers", rc);
            ckpt_hooks_read_end(r);
            PDC_ckpt_fault_all(); /* PDC's own answer, the slow way */
            return;
        }
        store_conts_loaded_g = 1;
    }
    uint32_t n0 = *n;
    struct kvtag_query q = {in, match, r, n, obj_ids, alloc_size, NULL, 0, 0, 0};
    rc = ckpt_hooks_foreach_tagged(r, in->name, kvtag_query_owner, &q);
    ckpt_hooks_read_end(r);
    free(q.val);
    if (rc != 0) {
        ckpt_log("kvtag query from the tag index", rc);
        *n = n0; /* what was appended is dropped: PDC's scan answers alone */
        PDC_ckpt_fault_all();
        return;
    }
    fprintf(stderr,
            "==PDC_SERVER[%d]: pdc-ckpt: kvtag query [%s]: %" PRIu64 " of %" PRIu64
            " objects only in the store matched (tag index, %.2f ms); PDC's tables hold %u objects\n",
            pdc_server_rank_g, in->name, q.matched, q.owners, now_ms() - t0, n_metadata_g);
}

/* ---- PDC's region tables in the store (database pdc_server) ---- */

/* PDC's data-server region table: for each object this rank stored data
 * of (region transfers), where each region's bytes are in the rank's data
 * file. The read path (PDC_Server_data_read_from) finds the bytes only
 * through it. Every region PDC appends to it is logged as a data region
 * (PDC_ckpt_data_region_put) and restored at restart, both forms. */
extern data_server_region_t *dataserver_region_g;

static int restoring_g; /* restoring PDC's tables from the store: log nothing */

/* One data-server region into dataserver_region_g, as PDC's own restart
 * does (PDC_Server_restart): the object's entry has no open file (fd -1)
 * until the first I/O opens it. */
static int data_region_add(const struct ckpt_region *c, void *p)
{
    data_server_region_t *d = PDC_Server_get_obj_region(c->obj_id);
    region_list_t *r;
    (void)p;
    if (d == NULL) {
        if ((d = calloc(1, sizeof *d)) == NULL ||
            (d->storage_location = malloc(ADDR_MAX)) == NULL) {
            free(d);
            return ckpt_error(CKPT_E_NOMEM, "data region of object %" PRIu64 ": out of memory",
                              c->obj_id);
        }
        d->obj_id = c->obj_id;
        d->fd = -1;
        d->storage_location[0] = '\0';
        DL_APPEND(dataserver_region_g, d);
    }
    if ((r = region_from_ckpt(c)) == NULL)
        return ckpt_error(CKPT_E_NOMEM, "data region of object %" PRIu64 ": out of memory",
                          c->obj_id);
    DL_APPEND(d->region_storage_head, r);
    return 0;
}

static int xfer_region_add(const struct ckpt_xfer_region *x, void *p)
{
    (void)p;
    if (transfer_request_metadata_query_restore(x->obj_id, (int)x->ndim, x->start, x->count,
                                                x->unit_size, x->data_server_id) != SUCCEED)
        return ckpt_error(CKPT_E_NOMEM, "transfer region of object %" PRIu64 ": out of memory",
                          x->obj_id);
    return 0;
}

/* Restart, both forms: PDC's transfer-request and data-server region
 * tables from the store, before "Server ready". -1 (logged) on failure. */
static int region_tables_load(uint64_t *n_data, uint64_t *n_xfer)
{
    ckpt_hooks_read *r;
    int rc;
    transfer_request_metadata_query_init(pdc_server_size_g, NULL);
    if ((rc = ckpt_hooks_read_begin(&r, ckpt_g)) != 0) {
        ckpt_log("restart: reading the region tables", rc);
        return -1;
    }
    restoring_g = 1;
    if ((rc = ckpt_hooks_foreach_data_region(r, data_region_add, NULL)) == 0)
        rc = ckpt_hooks_foreach_xfer_region(r, xfer_region_add, NULL);
    restoring_g = 0;
    ckpt_hooks_read_end(r);
    if (rc != 0) {
        ckpt_log("restart: restoring the region tables", rc);
        return -1;
    }
    *n_data = *n_xfer = 0;
    data_server_region_t *d;
    region_list_t *g;
    DL_FOREACH(dataserver_region_g, d)
    {
        DL_FOREACH(d->region_storage_head, g)
            (*n_data)++;
    }
    *n_xfer = transfer_request_metadata_query_count();
    return 0;
}

void PDC_ckpt_data_region_put(uint64_t obj_id, const region_list_t *r)
{
    struct ckpt_region c;
    int rc;
    if (ckpt_g == NULL || restoring_g || r == NULL || r->ndim < 1)
        return;
    region_to_ckpt(&c, obj_id, r);
    if ((rc = ckpt_hook_data_region_put(ckpt_g, &c)) != 0)
        ckpt_log("data region put", rc);
}

void PDC_ckpt_xfer_region_put(uint64_t obj_id, int ndim, const uint64_t *start, const uint64_t *count,
                              uint64_t unit, uint32_t data_server_id)
{
    struct ckpt_xfer_region x;
    int rc;
    if (ckpt_g == NULL || restoring_g || ndim < 1 || ndim > CKPT_MAX_DIM)
        return;
    memset(&x, 0, sizeof x);
    x.obj_id = obj_id;
    x.ndim = (uint32_t)ndim;
    for (int i = 0; i < ndim; i++) {
        x.start[i] = start[i];
        x.count[i] = count[i];
    }
    x.unit_size = unit;
    x.data_server_id = data_server_id;
    if ((rc = ckpt_hook_xfer_region_put(ckpt_g, &x)) != 0)
        ckpt_log("transfer region put", rc);
}

/* Is every element of the request inside a stored region? A region whose
 * record was lost with a crash (not committed) is not in the table: a
 * read of it must fail, never answer whatever the file or the buffer
 * holds. One bit per requested element. */
int PDC_ckpt_read_covered(const data_server_region_t *d, const struct pdc_region_info *ri)
{
    uint64_t n = 1, lo[3], hi[3], dim[3] = {1, 1, 1};
    uint32_t nd;
    uint8_t *bits;
    region_list_t *g;
    int ok = 1;
    if (ckpt_g == NULL || ri == NULL || ri->ndim < 1 || ri->ndim > 3)
        return 1; /* store off, or a shape PDC's read path does not serve */
    if (d == NULL)
        return 0;
    nd = (uint32_t)ri->ndim;
    for (uint32_t i = 0; i < nd; i++) {
        dim[i] = ri->size[i];
        if (dim[i] == 0)
            return 1;
        if (n > (UINT64_C(1) << 36) / dim[i])
            return 1; /* too large to check (not PDC's transfer sizes) */
        n *= dim[i];
    }
    if ((bits = calloc((size_t)((n + 7) / 8), 1)) == NULL)
        return 1;
    DL_FOREACH(d->region_storage_head, g)
    {
        int hit = g->ndim == (int)nd;
        for (uint32_t i = 0; hit && i < nd; i++) {
            uint64_t a = ri->offset[i] > g->start[i] ? ri->offset[i] : g->start[i];
            uint64_t b = ri->offset[i] + ri->size[i] < g->start[i] + g->count[i]
                             ? ri->offset[i] + ri->size[i]
                             : g->start[i] + g->count[i];
            hit = a < b;
            lo[i] = a - ri->offset[i];
            hi[i] = b - ri->offset[i];
        }
        if (!hit)
            continue;
        for (uint32_t i = nd; i < 3; i++) {
            lo[i] = 0;
            hi[i] = 1;
        }
        for (uint64_t x = lo[0]; x < hi[0]; x++)
            for (uint64_t y = lo[1]; y < hi[1]; y++)
                for (uint64_t z = lo[2]; z < hi[2]; z++) {
                    uint64_t e = (x * dim[1] + y) * dim[2] + z;
                    bits[e / 8] |= (uint8_t)(1u << (e % 8));
                }
    }
    for (uint64_t e = 0; ok && e < n; e++)
        ok = (bits[e / 8] >> (e % 8)) & 1;
    free(bits);
    return ok;
}

/* Region transfer reads the data server refused (PDC_ckpt_read_covered):
 * the client's wait for them is answered with an error. PDC answers the
 * transfer RPC before the read and the wait after it, so the refusal is
 * kept here in between. */
#define FAILED_MAX 1024
static uint64_t failed_g[FAILED_MAX];
static unsigned failed_n_g;

void PDC_ckpt_request_failed(uint64_t transfer_request_id)
{
    for (unsigned i = 0; i < failed_n_g; i++)
        if (failed_g[i] == transfer_request_id)
            return;
    if (failed_n_g == FAILED_MAX) /* oldest out: a client that never waited */
        memmove(failed_g, failed_g + 1, (FAILED_MAX - 1) * sizeof *failed_g), failed_n_g--;
    failed_g[failed_n_g++] = transfer_request_id;
}

int PDC_ckpt_request_take_failed(uint64_t transfer_request_id)
{
    for (unsigned i = 0; i < failed_n_g; i++)
        if (failed_g[i] == transfer_request_id) {
            failed_g[i] = failed_g[--failed_n_g];
            return 1;
        }
    return 0;
}

/* ---- start, checkpoint, close ---- */

int PDC_ckpt_enabled(void)
{
    return ckpt_g != NULL;
}

static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, value) == 0;
}

/* PDC_CKPT_FALLBACK_DIR/pdc-ckpt-pending.rank-<r>: where a close that
 * cannot persist keeps its staged mutations (docs/PDC_INTEGRATION.md). 0
 * when the variable is unset or empty. */
static int pending_path(char *buf, size_t len)
{
    const char *dir = getenv("PDC_CKPT_FALLBACK_DIR");
    if (dir == NULL || *dir == '\0')
        return 0;
    snprintf(buf, len, "%s/pdc-ckpt-pending.rank-%d", dir, pdc_server_rank_g);
    return 1;
}

/* mkdir -p dir (0700); 0 or an errno value */
static int mkdirs(const char *dir)
{
    char buf[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf)
        return ENAMETOOLONG;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++)
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return errno;
            buf[i] = c;
        }
    return 0;
}

/* A restart first replays a pending file a close left: into the store
 * (committed, synced, then the file is removed), before the restart reads
 * the store. -1 (logged) on failure: the file stays. */
static int pending_replay(const struct ckpt_hooks_opts *o)
{
    char path[PATH_MAX];
    ckpt_hooks *h = NULL;
    size_t n = 0;
    int rc;
    if (!pending_path(path, sizeof path) || access(path, F_OK) != 0)
        return 0;
    if ((rc = ckpt_hooks_restart_map(&h, o)) != 0) {
        ckpt_log("restart: opening the store to replay the pending file (not starting)", rc);
        return -1;
    }
    if ((rc = ckpt_store_pending_replay(ckpt_hooks_store(h), path, &n)) != 0) {
        ckpt_log("restart: replaying the pending file (not starting; it stays)", rc);
        ckpt_hooks_discard(h);
        return -1;
    }
    if ((rc = ckpt_hooks_close(h)) != 0) {
        ckpt_log("restart: closing the store after replaying the pending file (not starting)", rc);
        ckpt_hooks_discard(h);
        return -1;
    }
    printf("==PDC_SERVER[%d]: pdc-ckpt: replayed %zu mutations from the pending file [%s] into "
           "the store (removed)\n",
           pdc_server_rank_g, n, path);
    return 0;
}

/* The start was refused (the reason is logged): the server must exit
 * non-zero without serving. */
static int refused_g;

int PDC_ckpt_refused(void)
{
    return refused_g;
}

static int refuse(void)
{
    refused_g = 1;
    return -1;
}

static int ckpt_start_rank(int is_restart)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    struct ckpt_rebuild_stats st = {0, 0, 0, 0, 0};
    const char *form = getenv("PDC_CKPT_RESTART");
    int rc, rebuild = 0;

    if (env_is("PDC_CKPT", "off")) {
        if (pdc_server_rank_g == 0)
            printf("==PDC_SERVER[0]: pdc-ckpt off (PDC_CKPT=off): PDC's own checkpoint\n");
        return 0;
    }
    /* A bad setting refuses a fresh start and a restart alike: running
     * without the store would lose everything at the next crash. */
    if ((rc = ckpt_hooks_opts_from_env(&o, ckpt_root_g, sizeof ckpt_root_g)) != 0) {
        ckpt_log("environment (not starting; fix the setting, or PDC_CKPT=off)", rc);
        return refuse();
    }
    o.rank = pdc_server_rank_g;
    o.nranks = pdc_server_size_g;
    if (!is_restart) {
        char env[PATH_MAX + 32], pend[PATH_MAX];
        if (pending_path(pend, sizeof pend) && access(pend, F_OK) == 0) {
            /* acknowledged mutations of a store's last run wait there */
            fprintf(stderr,
                    "==PDC_SERVER[%d]: pdc-ckpt: a pending file is at [%s] (mutations a close "
                    "could not commit): not starting a fresh server. Restart with `pdc_server.exe "
                    "restart` to replay it into its store, or remove it to drop them\n",
                    pdc_server_rank_g, pend);
            return refuse();
        }
        snprintf(env, sizeof env, "%s/rank-%d/data.mdb", ckpt_root_g, pdc_server_rank_g);
        if (access(env, F_OK) == 0) {
            /* a fresh start would mix PDC's empty tables (and its data
             * files, and ids) with the store's records */
            fprintf(stderr,
                    "==PDC_SERVER[%d]: pdc-ckpt: a store is already at [%s] (%s): not starting a "
                    "fresh server over it. Restart from it with `pdc_server.exe restart`, or "
                    "remove it (rm -r %s) or set PDC_CKPT_DIR elsewhere to start afresh\n",
                    pdc_server_rank_g, ckpt_root_g, env, ckpt_root_g);
            return refuse();
        }
        if ((rc = ckpt_hooks_open(&ckpt_g, &o)) != 0) {
            ckpt_log("open (not starting; PDC_CKPT=off runs without the store)", rc);
            ckpt_g = NULL;
            return refuse();
        }
        if (pdc_server_rank_g == 0)
            printf("==PDC_SERVER[0]: pdc-ckpt store [%s]\n", ckpt_root_g);
        return 0; /* PDC initialises its empty tables itself */
    }

    if (form != NULL && *form != '\0' && strcmp(form, "map") != 0) {
        if (strcmp(form, "rebuild") != 0) {
            fprintf(stderr,
                    "==PDC_SERVER[%d]: pdc-ckpt: PDC_CKPT_RESTART=%s: expected map or rebuild\n",
                    pdc_server_rank_g, form);
            return refuse();
        }
        rebuild = 1;
    }
    double t0 = now_ms();
    if (pending_replay(&o) != 0)
        return refuse();
    if (PDC_Server_init_hash_table() != SUCCEED)
        return refuse();
    if (rebuild) {
        static const struct ckpt_rebuild_cbs cbs = {rb_cont, rb_obj, rb_kvtag, rb_member, rb_region};
        struct rebuild rb;
        memset(&rb, 0, sizeof rb);
        rc = ckpt_hooks_restart_rebuild(&ckpt_g, &o, &cbs, &rb, &st);
        id_free(&rb.owners);
    }
    else {
        rc = ckpt_hooks_restart_map(&ckpt_g, &o);
        map_mode_g = 1;
    }
    if (rc != 0) {
        const char *msg = ckpt_errmsg(); /* this thread's, right away */
        fprintf(stderr, "==PDC_SERVER[%d]: pdc-ckpt restart (%s) from [%s]: %s: %s\n",
                pdc_server_rank_g, rebuild ? "rebuild" : "map", ckpt_root_g, ckpt_errname(rc),
                msg && *msg ? msg : ckpt_strerror(rc));
        ckpt_g = NULL;
        map_mode_g = 0;
        return refuse();
    }
    uint64_t n_data = 0, n_xfer = 0;
    if (region_tables_load(&n_data, &n_xfer) != 0) {
        ckpt_hooks_discard(ckpt_g);
        ckpt_g = NULL;
        map_mode_g = 0;
        return refuse();
    }
    if (dart_restore() != 0) {
        ckpt_hooks_discard(ckpt_g);
        ckpt_g = NULL;
        map_mode_g = 0;
        return refuse();
    }
    if (rebuild)
        printf("==PDC_SERVER[%d]: restarted from pdc-ckpt store [%s] (rebuild) in %.1f ms: %" PRIu64
               " containers, %" PRIu64 " objects, %" PRIu64 " kvtags, %" PRIu64 " members, %" PRIu64
               " regions, %" PRIu64 " data regions, %" PRIu64 " transfer regions\n",
               pdc_server_rank_g, ckpt_root_g, now_ms() - t0, st.conts, st.objs, st.kvtags,
               st.members, st.regions, n_data, n_xfer);
    else
        printf("==PDC_SERVER[%d]: restarted from pdc-ckpt store [%s] (map) in %.1f ms: records "
               "fault in on first use; %" PRIu64 " data regions, %" PRIu64 " transfer regions\n",
               pdc_server_rank_g, ckpt_root_g, now_ms() - t0, n_data, n_xfer);
    return 1;
}

/* Every server starts, or none does: a refusal on one rank (logged there)
 * refuses them all, so that each exits non-zero through MPI_Finalize.
 * MPI_Abort would tear the job down before mpiexec forwards the logged
 * reason. A rank that had opened its store closes it, losing nothing. */
int PDC_ckpt_start(int is_restart)
{
    int ret = ckpt_start_rank(is_restart);
#ifdef ENABLE_MPI
    int any_refused = refused_g, rc;
    MPI_Allreduce(&refused_g, &any_refused, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_refused && !refused_g) {
        fprintf(stderr, "==PDC_SERVER[%d]: pdc-ckpt: another server refused the start (its reason is "
                        "logged above); not starting\n",
                pdc_server_rank_g);
        if (ckpt_g != NULL && (rc = ckpt_hooks_close(ckpt_g)) != 0)
            ckpt_log("close after another server's refusal", rc);
        ckpt_g     = NULL;
        map_mode_g = 0;
        ret        = refuse();
    }
#endif
    return ret;
}

int PDC_ckpt_new_id(uint64_t *id)
{
    int rc;
    if (ckpt_g == NULL)
        return 0;
    if ((rc = ckpt_hook_new_id(id, ckpt_g)) != 0) {
        /* the create fails to the client (PDC answers id 0); not a
         * commit failure of the batch, so other writes go on */
        const char *msg = ckpt_errmsg();
        fprintf(stderr, "==PDC_SERVER[%d]: pdc-ckpt new id (answering id 0): %s: %s\n",
                pdc_server_rank_g, ckpt_errname(rc), msg && *msg ? msg : ckpt_strerror(rc));
        *id = 0;
    }
    return 1;
}

int PDC_ckpt_writable(void)
{
    static double last_log;
    int rc;
    if (ckpt_g == NULL || !commit_failing_g)
        return 1;
    if ((rc = ckpt_hooks_checkpoint(ckpt_g)) == 0) {
        commit_failing_g = 0;
        fprintf(stderr, "==PDC_SERVER[%d]: pdc-ckpt: the store commits again: writes accepted\n",
                pdc_server_rank_g);
        return 1;
    }
    if (now_ms() - last_log > 1000) { /* one line a second at most */
        const char *msg = ckpt_errmsg();
        last_log = now_ms();
        fprintf(stderr,
                "==PDC_SERVER[%d]: pdc-ckpt: write refused: the store cannot commit: %s: %s "
                "(%zu mutations staged)\n",
                pdc_server_rank_g, ckpt_errname(rc), msg && *msg ? msg : ckpt_strerror(rc),
                ckpt_store_pending(ckpt_hooks_store(ckpt_g)));
    }
    return 0;
}

int PDC_ckpt_close_failed(void)
{
    return close_failed_g;
}

int PDC_ckpt_checkpoint(void)
{
    int rc;
    if (ckpt_g == NULL)
        return 0;
    if ((rc = ckpt_hooks_checkpoint(ckpt_g)) != 0)
        ckpt_log("checkpoint", rc);
    return 1;
}

int PDC_ckpt_close(void)
{
    int rc;
    double t0 = now_ms();
    if (ckpt_g == NULL)
        return 0;
    if ((rc = ckpt_hooks_close(ckpt_g)) != 0) {
        /* Nothing is dropped: the handle stays open with the staged
         * mutations. Retry (space may come back) for PDC_CKPT_CLOSE_RETRY_S
         * seconds (default 60), then give up loudly and exit non-zero: the
         * store keeps what was committed, a restart resumes from it. */
        const char *env = getenv("PDC_CKPT_CLOSE_RETRY_S");
        long retry_s = env && *env ? strtol(env, NULL, 10) : 60;
        size_t pending = ckpt_store_pending(ckpt_hooks_store(ckpt_g));
        ckpt_log("close", rc);
        fprintf(stderr,
                "==PDC_SERVER[%d]: pdc-ckpt: %zu acknowledged mutations are not committed; "
                "retrying the close for %ld s\n",
                pdc_server_rank_g, pending, retry_s);
        for (long i = 0; i < retry_s && rc != 0; i++) {
            sleep(1);
            rc = ckpt_hooks_close(ckpt_g);
        }
        if (rc != 0) {
            char pend[PATH_MAX];
            pending = ckpt_store_pending(ckpt_hooks_store(ckpt_g));
            ckpt_log("close (giving up)", rc);
            if (!pending_path(pend, sizeof pend)) {
                fprintf(stderr,
                        "==PDC_SERVER[%d]: pdc-ckpt: store NOT closed: %zu acknowledged mutations "
                        "since the last commit are lost (set PDC_CKPT_FALLBACK_DIR to keep them in "
                        "a pending file there); the store keeps every committed one (restart "
                        "resumes from it); exit status 1\n",
                        pdc_server_rank_g, pending);
            }
            else {
                const char *dir = getenv("PDC_CKPT_FALLBACK_DIR");
                size_t kept = 0;
                int e = mkdirs(dir);
                rc = e ? ckpt_error(CKPT_E_IO, "PDC_CKPT_FALLBACK_DIR=%s: %s", dir, strerror(e))
                       : ckpt_store_pending_export(ckpt_hooks_store(ckpt_g), pend, &kept);
                if (rc != 0) {
                    ckpt_log("close: writing the pending file", rc);
                    fprintf(stderr,
                            "==PDC_SERVER[%d]: pdc-ckpt: store NOT closed: %zu acknowledged "
                            "mutations since the last commit are lost (the pending file [%s] "
                            "could not be written); the store keeps every committed one; exit "
                            "status 1\n",
                            pdc_server_rank_g, pending, pend);
                }
                else
                    fprintf(stderr,
                            "==PDC_SERVER[%d]: pdc-ckpt: store NOT closed: %zu acknowledged "
                            "mutations since the last commit are kept in the pending file [%s]; "
                            "a restart with the same PDC_CKPT_FALLBACK_DIR replays them into the "
                            "store once it has space; exit status 1\n",
                            pdc_server_rank_g, kept, pend);
            }
            close_failed_g = 1;
            ckpt_hooks_discard(ckpt_g);
            ckpt_g = NULL;
            map_mode_g = 0;
            id_free(&seen_g);
            return 1;
        }
        fprintf(stderr, "==PDC_SERVER[%d]: pdc-ckpt: close succeeded on a retry: nothing lost\n",
                pdc_server_rank_g);
    }
    ckpt_g = NULL;
    map_mode_g = 0;
    id_free(&seen_g);
    if (pdc_server_rank_g == 0)
        printf("==PDC_SERVER[0]: pdc-ckpt store closed [%s] in %.1f ms\n", ckpt_root_g,
               now_ms() - t0);
    return 1;
}

/* ---- PDC's DART (IDIOMS) index in the store (pdc_server entries `i`) ---- */

void PDC_ckpt_dart_log(int insert, const char *key, const void *value, uint32_t value_len, int32_t type,
                       uint64_t obj_ref, uint32_t vnode_id, uint32_t src_client_id, int is_suffix)
{
    struct ckpt_dart_entry e;
    int rc;
    if (ckpt_g == NULL || key == NULL)
        return;
    e.key = key;
    e.value = value;
    e.value_len = value != NULL ? value_len : 0;
    e.type = type;
    e.obj_ref = obj_ref;
    e.vnode_id = vnode_id;
    e.src_client_id = src_client_id;
    e.is_suffix = is_suffix == 1;
    e.string_value = is_PDC_STRING((pdc_c_var_type_t)type);
    rc = insert ? ckpt_hook_dart_put(ckpt_g, &e) : ckpt_hook_dart_delete(ckpt_g, &e);
    if (rc != 0)
        ckpt_log(insert ? "DART entry put" : "DART entry delete", rc);
}

struct dart_replay {
    char *buf; /* the value, NUL-terminated (PDC's index reads strings with strlen) */
    size_t cap;
    uint64_t n;
};

static int dart_replay_one(const struct ckpt_dart_entry *e, void *p)
{
    struct dart_replay *d = p;
    IDIOMS_md_idx_record_t rec;
    uint64_t obj_ref = e->obj_ref;
    if ((size_t)e->value_len + 1 > d->cap) {
        size_t cap = (size_t)e->value_len + 1 > 2 * d->cap ? (size_t)e->value_len + 1 : 2 * d->cap;
        char *b = realloc(d->buf, cap);
        if (b == NULL)
            return ckpt_error(CKPT_E_NOMEM, "DART entry of key [%s]: out of memory", e->key);
        d->buf = b;
        d->cap = cap;
    }
    if (e->value_len > 0)
        memcpy(d->buf, e->value, e->value_len);
    d->buf[e->value_len] = '\0';
    /* what PDC_Server_dart_perform_one_server hands its index on an insert */
    memset(&rec, 0, sizeof rec);
    rec.key = (char *)e->key;
    rec.value = d->buf;
    rec.value_len = e->value_len;
    rec.type = (pdc_c_var_type_t)e->type;
    rec.virtual_node_id = e->vnode_id;
    rec.src_client_id = e->src_client_id;
    rec.is_key_suffix = (int8_t)e->is_suffix;
    rec.obj_ids = &obj_ref;
    rec.num_obj_ids = 1;
    idioms_local_index_create(idioms_g, &rec);
    d->n++;
    return 0;
}

/* Restart, both forms: PDC's IDIOMS index from the store's DART entries,
 * before "Server ready". The index is created here (PDC_Server_init
 * creates it later; the patch makes that a no-op when it exists). -1
 * (logged) on failure. */
static int dart_restore(void)
{
    struct dart_replay d = {NULL, 0, 0};
    ckpt_hooks_read *r;
    double t0 = now_ms();
    int rc;
    if (idioms_g == NULL)
        PDC_Server_metadata_index_init((uint32_t)pdc_server_size_g, (uint32_t)pdc_server_rank_g);
    if ((rc = ckpt_hooks_read_begin(&r, ckpt_g)) != 0) {
        ckpt_log("restart: reading the DART entries", rc);
        return -1;
    }
    rc = ckpt_hooks_foreach_dart(r, dart_replay_one, &d);
    ckpt_hooks_read_end(r);
    free(d.buf);
    if (rc != 0) {
        ckpt_log("restart: restoring the DART index", rc);
        return -1;
    }
    printf("==PDC_SERVER[%d]: pdc-ckpt: DART index: %" PRIu64 " entries from the store in %.1f ms\n",
           pdc_server_rank_g, d.n, now_ms() - t0);
    return 0;
}

/* ---- mutations ---- */

/* An object that shares its name and time step with others (they differ
 * in user id or app name): record it and them as same-name objects, so
 * that a lookup by name after a restart finds them all. PDC's bucket holds
 * every one of them here (the create faulted the name in first). */
static void same_name_mark(const pdc_metadata_t *m)
{
    uint32_t key = PDC_get_hash_by_name(m->obj_name);
    pdc_hash_table_entry_head *head = hash_table_lookup(metadata_hash_table_g, &key);
    pdc_metadata_t *elt;
    int shared = 0, rc;
    if (head == NULL)
        return;
    DL_FOREACH(head->metadata, elt)
    {
        if (elt == m || elt->obj_id == m->obj_id || elt->time_step != m->time_step ||
            strcmp(elt->obj_name, m->obj_name) != 0)
            continue;
        shared = 1;
        if ((rc = ckpt_hook_same_name_put(ckpt_g, elt->obj_name, elt->time_step, elt->obj_id)) != 0)
            ckpt_log("same-name entry", rc);
    }
    if (shared && (rc = ckpt_hook_same_name_put(ckpt_g, m->obj_name, m->time_step, m->obj_id)) != 0)
        ckpt_log("same-name entry", rc);
}

void PDC_ckpt_obj_create(const pdc_metadata_t *m)
{
    struct ckpt_obj o;
    int rc;
    if (ckpt_g == NULL || m->obj_id == 0)
        return;
    mark_seen(m->obj_id);
    meta_to_ckpt(&o, m);
    if ((rc = ckpt_hook_obj_create(ckpt_g, &o)) != 0)
        ckpt_log("object create", rc);
    same_name_mark(m);
}

void PDC_ckpt_obj_update(const pdc_metadata_t *m)
{
    struct ckpt_obj o;
    int rc;
    if (ckpt_g == NULL)
        return;
    meta_to_ckpt(&o, m);
    if ((rc = ckpt_hook_obj_update(ckpt_g, &o)) != 0)
        ckpt_log("object update", rc);
}

void PDC_ckpt_obj_delete(uint64_t obj_id)
{
    int rc;
    if (ckpt_g == NULL)
        return;
    mark_seen(obj_id);
    if ((rc = ckpt_hook_obj_delete(ckpt_g, obj_id)) != 0)
        ckpt_log("object delete", rc);
}

void PDC_ckpt_kvtag_put(uint64_t owner, const pdc_kvtag_t *tag)
{
    struct ckpt_kvtag t;
    int rc;
    if (ckpt_g == NULL || tag == NULL || tag->name == NULL)
        return;
    t.name = tag->name;
    t.type = tag->type;
    t.size = tag->size;
    t.value = tag->value;
    if ((rc = ckpt_hook_kvtag_put(ckpt_g, owner, &t)) != 0)
        ckpt_log("kvtag put", rc);
}

void PDC_ckpt_kvtag_delete(uint64_t owner, const char *name)
{
    int rc;
    if (ckpt_g == NULL || name == NULL)
        return;
    if ((rc = ckpt_hook_kvtag_delete(ckpt_g, owner, name)) != 0)
        ckpt_log("kvtag delete", rc);
}

void PDC_ckpt_cont_put(const pdc_cont_hash_table_entry_t *e)
{
    struct ckpt_cont c;
    int rc;
    if (ckpt_g == NULL || e->cont_id == 0)
        return;
    mark_seen(e->cont_id);
    c.cont_id = e->cont_id;
    c.cont_name = e->cont_name;
    c.tags = e->tags;
    if ((rc = ckpt_hook_cont_create(ckpt_g, &c)) != 0)
        ckpt_log("container put", rc);
}

void PDC_ckpt_cont_delete(uint64_t cont_id)
{
    int rc;
    if (ckpt_g == NULL)
        return;
    mark_seen(cont_id);
    if ((rc = ckpt_hook_cont_delete(ckpt_g, cont_id)) != 0)
        ckpt_log("container delete", rc);
}

void PDC_ckpt_cont_add_objs(uint64_t cont_id, const uint64_t *obj_ids, int n)
{
    int rc;
    if (ckpt_g == NULL || n <= 0)
        return;
    if ((rc = ckpt_hook_cont_add_objs(ckpt_g, cont_id, obj_ids, (size_t)n)) != 0)
        ckpt_log("container add objects", rc);
}

void PDC_ckpt_cont_remove_objs(uint64_t cont_id, const uint64_t *obj_ids, int n)
{
    int rc;
    if (ckpt_g == NULL || n <= 0)
        return;
    if ((rc = ckpt_hook_cont_remove_objs(ckpt_g, cont_id, obj_ids, (size_t)n)) != 0)
        ckpt_log("container remove objects", rc);
}

void PDC_ckpt_region_put(uint64_t obj_id, const region_list_t *r)
{
    struct ckpt_region c;
    int rc;
    if (ckpt_g == NULL || r == NULL || r->ndim < 1)
        return;
    region_to_ckpt(&c, obj_id, r);
    if ((rc = ckpt_hook_region_put(ckpt_g, &c)) != 0)
        ckpt_log("region put", rc);
}
