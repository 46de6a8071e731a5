/*
 * model_server.c - the model PDC metadata server (see model_server.h).
 *
 * Tables as in PDC's server: objects in a hash table keyed by
 * djb2(obj_name) + time_step with chained buckets (plus an id index that
 * PDC keeps as a lookup by id), each object carrying its kvtag list and
 * region list; containers with member-id lists and kvtag lists.
 */
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_server.h"

struct m_tag {
    struct ckpt_kvtag t;     /* name and value owned */
    struct m_tag *next;
};

struct m_region {
    struct ckpt_region r;    /* strings and histogram owned */
    struct m_region *next;
};

struct m_obj {
    struct ckpt_obj o;       /* strings owned */
    struct m_tag *tags;
    struct m_region *regions;
    struct m_obj *next_name; /* bucket chain of the name table */
    struct m_obj *next_id;   /* bucket chain of the id table */
};

struct m_cont {
    struct ckpt_cont c;      /* name owned */
    uint64_t *members;       /* sorted, no duplicates */
    size_t nmem, capmem;
    struct m_tag *tags;
    struct m_cont *next;
};

struct model_server {
    int rank, nranks;
    struct model_sink sink;  /* all NULL: nothing persisted */
    uint64_t next_seq;       /* without hooks */
    struct m_obj **by_name, **by_id;
    size_t nbuckets, nobjs;
    struct m_cont *conts;
    pthread_mutex_t mu;
};

static char *dupstr(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s ? s : "", n);
    return d;
}

static size_t name_bucket(const model_server *m, const char *name, int32_t ts)
{
    return (size_t)(ckpt_djb2(name) + (uint32_t)ts) & (m->nbuckets - 1);
}

static size_t id_bucket(const model_server *m, uint64_t id)
{
    return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & (m->nbuckets - 1);
}

/* The hooks as a sink. */
static int hk_new_id(void *c, uint64_t *id) { return ckpt_hook_new_id(id, c); }
static int hk_obj_put(void *c, const struct ckpt_obj *o) { return ckpt_hook_obj_create(c, o); }
static int hk_obj_delete(void *c, uint64_t id) { return ckpt_hook_obj_delete(c, id); }
static int hk_kvtag_put(void *c, uint64_t owner, const struct ckpt_kvtag *t)
{
    return ckpt_hook_kvtag_put(c, owner, t);
}
static int hk_kvtag_delete(void *c, uint64_t owner, const char *name)
{
    return ckpt_hook_kvtag_delete(c, owner, name);
}
static int hk_cont_put(void *c, const struct ckpt_cont *cont) { return ckpt_hook_cont_create(c, cont); }
static int hk_cont_delete(void *c, uint64_t id) { return ckpt_hook_cont_delete(c, id); }
static int hk_cont_add(void *c, uint64_t cont, const uint64_t *ids, size_t n)
{
    return ckpt_hook_cont_add_objs(c, cont, ids, n);
}
static int hk_cont_remove(void *c, uint64_t cont, const uint64_t *ids, size_t n)
{
    return ckpt_hook_cont_remove_objs(c, cont, ids, n);
}
static int hk_region_put(void *c, const struct ckpt_region *g) { return ckpt_hook_region_put(c, g); }

static struct model_sink hooks_sink(ckpt_hooks *hooks)
{
    const struct model_sink sink = {hooks,         hk_new_id,       hk_obj_put,  hk_obj_delete,
                                    hk_kvtag_put,  hk_kvtag_delete, hk_cont_put, hk_cont_delete,
                                    hk_cont_add,   hk_cont_remove,  hk_region_put};
    return sink;
}

int model_create(model_server **out, int rank, int nranks, ckpt_hooks *hooks)
{
    const struct model_sink sink = hooks_sink(hooks);
    return model_create_sink(out, rank, nranks, hooks ? &sink : NULL);
}

int model_create_sink(model_server **out, int rank, int nranks, const struct model_sink *sink)
{
    model_server *m = calloc(1, sizeof *m);
    if (m == NULL)
        return CKPT_E_NOMEM;
    m->rank = rank;
    m->nranks = nranks;
    if (sink)
        m->sink = *sink;
    m->nbuckets = 1024;
    m->by_name = calloc(m->nbuckets, sizeof *m->by_name);
    m->by_id = calloc(m->nbuckets, sizeof *m->by_id);
    if (m->by_name == NULL || m->by_id == NULL) {
        free(m->by_name);
        free(m->by_id);
        free(m);
        return CKPT_E_NOMEM;
    }
    pthread_mutex_init(&m->mu, NULL);
    *out = m;
    return 0;
}

static void free_tags(struct m_tag *t)
{
    while (t) {
        struct m_tag *n = t->next;
        free((void *)t->t.name);
        free((void *)t->t.value);
        free(t);
        t = n;
    }
}

static void free_region(struct m_region *g)
{
    free((void *)g->r.storage_location);
    free((void *)g->r.cache_location);
    free((void *)g->r.hist.range);
    free((void *)g->r.hist.bin);
    free(g);
}

static void free_obj(struct m_obj *o)
{
    free((void *)o->o.obj_name);
    free((void *)o->o.app_name);
    free((void *)o->o.data_location);
    free((void *)o->o.tags);
    free_tags(o->tags);
    while (o->regions) {
        struct m_region *n = o->regions->next;
        free_region(o->regions);
        o->regions = n;
    }
    free(o);
}

void model_destroy(model_server *m)
{
    if (m == NULL)
        return;
    for (size_t b = 0; b < m->nbuckets; b++) {
        struct m_obj *o = m->by_id[b];
        while (o) {
            struct m_obj *n = o->next_id;
            free_obj(o);
            o = n;
        }
    }
    while (m->conts) {
        struct m_cont *n = m->conts->next;
        free((void *)m->conts->c.cont_name);
        free((void *)m->conts->c.tags);
        free(m->conts->members);
        free_tags(m->conts->tags);
        free(m->conts);
        m->conts = n;
    }
    free(m->by_name);
    free(m->by_id);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* Double the bucket arrays when the load passes 1. */
static void maybe_grow(model_server *m)
{
    if (m->nobjs < m->nbuckets)
        return;
    size_t nb = m->nbuckets * 2;
    struct m_obj **bn = calloc(nb, sizeof *bn), **bi = calloc(nb, sizeof *bi);
    if (bn == NULL || bi == NULL) {
        free(bn);
        free(bi);
        return; /* keep the old tables: slower, still correct */
    }
    size_t old = m->nbuckets;
    m->nbuckets = nb;
    for (size_t b = 0; b < old; b++) {
        for (struct m_obj *o = m->by_id[b], *n; o; o = n) {
            n = o->next_id;
            size_t i = id_bucket(m, o->o.obj_id);
            o->next_id = bi[i];
            bi[i] = o;
            size_t j = name_bucket(m, o->o.obj_name, o->o.time_step);
            o->next_name = bn[j];
            bn[j] = o;
        }
    }
    free(m->by_name);
    free(m->by_id);
    m->by_name = bn;
    m->by_id = bi;
}

static struct m_obj *find_id(model_server *m, uint64_t id)
{
    for (struct m_obj *o = m->by_id[id_bucket(m, id)]; o; o = o->next_id)
        if (o->o.obj_id == id)
            return o;
    return NULL;
}

static struct m_cont *find_cont(model_server *m, uint64_t id)
{
    for (struct m_cont *c = m->conts; c; c = c->next)
        if (c->c.cont_id == id)
            return c;
    return NULL;
}

static int new_id(model_server *m, uint64_t *id)
{
    if (m->sink.new_id)
        return m->sink.new_id(m->sink.ctx, id);
    *id = ((uint64_t)m->rank + 1) * 1000000000ull + m->next_seq++;
    return 0;
}

/* Insert a copy of obj (id already set) into the tables. */
static int insert_obj(model_server *m, const struct ckpt_obj *src, struct m_obj **out)
{
    struct m_obj *o = calloc(1, sizeof *o);
    if (o == NULL)
        return CKPT_E_NOMEM;
    o->o = *src;
    o->o.obj_name = dupstr(src->obj_name);
    o->o.app_name = dupstr(src->app_name);
    o->o.data_location = dupstr(src->data_location);
    o->o.tags = dupstr(src->tags);
    if (!o->o.obj_name || !o->o.app_name || !o->o.data_location || !o->o.tags) {
        free_obj(o);
        return CKPT_E_NOMEM;
    }
    maybe_grow(m);
    size_t i = id_bucket(m, o->o.obj_id), j = name_bucket(m, o->o.obj_name, o->o.time_step);
    o->next_id = m->by_id[i];
    m->by_id[i] = o;
    o->next_name = m->by_name[j];
    m->by_name[j] = o;
    m->nobjs++;
    if (out)
        *out = o;
    return 0;
}

static void unlink_obj(model_server *m, struct m_obj *o)
{
    struct m_obj **pp = &m->by_id[id_bucket(m, o->o.obj_id)];
    while (*pp && *pp != o)
        pp = &(*pp)->next_id;
    if (*pp)
        *pp = o->next_id;
    pp = &m->by_name[name_bucket(m, o->o.obj_name, o->o.time_step)];
    while (*pp && *pp != o)
        pp = &(*pp)->next_name;
    if (*pp)
        *pp = o->next_name;
    m->nobjs--;
}

int model_obj_create(model_server *m, const struct ckpt_obj *obj, uint64_t *id)
{
    struct ckpt_obj o = *obj;
    int rc = 0;
    pthread_mutex_lock(&m->mu);
    if (o.obj_id == 0)
        rc = new_id(m, &o.obj_id);
    if (rc == 0 && find_id(m, o.obj_id) != NULL)
        rc = ckpt_error(CKPT_E_EXISTS, "object %llu exists", (unsigned long long)o.obj_id);
    if (rc == 0 && m->sink.obj_put)
        rc = m->sink.obj_put(m->sink.ctx, &o);
    if (rc == 0 || rc == CKPT_E_NOSPACE || rc == CKPT_E_IO) /* staged even if commit failed */
        if (insert_obj(m, &o, NULL) != 0 && rc == 0)
            rc = CKPT_E_NOMEM;
    pthread_mutex_unlock(&m->mu);
    if (id)
        *id = o.obj_id;
    return rc;
}

static int del_obj(model_server *m, uint64_t id)
{
    struct m_obj *o = find_id(m, id);
    if (o == NULL)
        return CKPT_E_NOTFOUND;
    int rc = m->sink.obj_delete ? m->sink.obj_delete(m->sink.ctx, id) : 0;
    struct m_cont *c = find_cont(m, o->o.cont_id);
    if (c) {
        /* as the store does: the object leaves its own container */
        for (size_t i = 0; i < c->nmem; i++)
            if (c->members[i] == id) {
                memmove(&c->members[i], &c->members[i + 1], (c->nmem - i - 1) * sizeof(uint64_t));
                c->nmem--;
                break;
            }
    }
    unlink_obj(m, o);
    free_obj(o);
    return rc;
}

int model_obj_delete(model_server *m, uint64_t id)
{
    pthread_mutex_lock(&m->mu);
    int rc = del_obj(m, id);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* Put tag into list *head, replacing one of the same name; with
 * `unique` (a rebuild: the store holds one tag per name and owner) just
 * push it, without the O(list) search for a twin. */
static int list_put_tag_ex(struct m_tag **head, const struct ckpt_kvtag *t, int unique)
{
    struct m_tag *n = calloc(1, sizeof *n);
    void *val = malloc(t->size ? t->size : 1);
    char *name = dupstr(t->name);
    if (n == NULL || val == NULL || name == NULL) {
        free(n);
        free(val);
        free(name);
        return CKPT_E_NOMEM;
    }
    if (t->size)
        memcpy(val, t->value, t->size);
    n->t = *t;
    n->t.name = name;
    n->t.value = val;
    if (unique) {
        n->next = *head;
        *head = n;
        return 0;
    }
    struct m_tag **pp = head;
    while (*pp && strcmp((*pp)->t.name, t->name) != 0)
        pp = &(*pp)->next;
    if (*pp) {
        struct m_tag *old = *pp;
        n->next = old->next;
        old->next = NULL;
        free_tags(old);
    }
    *pp = n;
    return 0;
}

static int list_del_tag(struct m_tag **head, const char *name)
{
    struct m_tag **pp = head;
    while (*pp && strcmp((*pp)->t.name, name) != 0)
        pp = &(*pp)->next;
    if (*pp == NULL)
        return CKPT_E_NOTFOUND;
    struct m_tag *old = *pp;
    *pp = old->next;
    old->next = NULL;
    free_tags(old);
    return 0;
}

static struct m_tag **tag_list(model_server *m, uint64_t owner)
{
    struct m_obj *o = find_id(m, owner);
    if (o)
        return &o->tags;
    struct m_cont *c = find_cont(m, owner);
    return c ? &c->tags : NULL;
}

static int fill_tag_ex(model_server *m, uint64_t owner, const struct ckpt_kvtag *t, int unique)
{
    struct m_tag **list = tag_list(m, owner);
    if (list == NULL)
        return ckpt_error(CKPT_E_NOTFOUND, "kvtag %s: no object or container %llu on rank %d",
                          t->name, (unsigned long long)owner, m->rank);
    return list_put_tag_ex(list, t, unique);
}

static int fill_tag(model_server *m, uint64_t owner, const struct ckpt_kvtag *t)
{
    return fill_tag_ex(m, owner, t, 0);
}

int model_kvtag_put(model_server *m, uint64_t owner, const struct ckpt_kvtag *t)
{
    pthread_mutex_lock(&m->mu);
    int rc = tag_list(m, owner) ? 0
                                : ckpt_error(CKPT_E_NOTFOUND, "kvtag %s: no object or container "
                                             "%llu on rank %d", t->name,
                                             (unsigned long long)owner, m->rank);
    if (rc == 0 && m->sink.kvtag_put)
        rc = m->sink.kvtag_put(m->sink.ctx, owner, t);
    if (rc == 0 || rc == CKPT_E_NOSPACE || rc == CKPT_E_IO) {
        int r2 = fill_tag(m, owner, t);
        if (rc == 0)
            rc = r2;
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int model_kvtag_delete(model_server *m, uint64_t owner, const char *name)
{
    pthread_mutex_lock(&m->mu);
    struct m_tag **list = tag_list(m, owner);
    int rc = list ? list_del_tag(list, name) : CKPT_E_NOTFOUND;
    if (rc == 0 && m->sink.kvtag_delete)
        rc = m->sink.kvtag_delete(m->sink.ctx, owner, name);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static int insert_cont(model_server *m, const struct ckpt_cont *src)
{
    struct m_cont *c = calloc(1, sizeof *c);
    if (c == NULL)
        return CKPT_E_NOMEM;
    c->c = *src;
    c->c.cont_name = dupstr(src->cont_name);
    c->c.tags = dupstr(src->tags);
    if (!c->c.cont_name || !c->c.tags) {
        free((void *)c->c.cont_name);
        free((void *)c->c.tags);
        free(c);
        return CKPT_E_NOMEM;
    }
    c->next = m->conts;
    m->conts = c;
    return 0;
}

int model_cont_create(model_server *m, const char *name, uint64_t *id)
{
    struct ckpt_cont c = {0, name, ""};
    pthread_mutex_lock(&m->mu);
    int rc = new_id(m, &c.cont_id);
    if (rc == 0 && m->sink.cont_put)
        rc = m->sink.cont_put(m->sink.ctx, &c);
    if (rc == 0 || rc == CKPT_E_NOSPACE || rc == CKPT_E_IO)
        if (insert_cont(m, &c) != 0 && rc == 0)
            rc = CKPT_E_NOMEM;
    pthread_mutex_unlock(&m->mu);
    if (id)
        *id = c.cont_id;
    return rc;
}

int model_cont_create_id(model_server *m, const struct ckpt_cont *cont)
{
    if (m == NULL || cont == NULL || cont->cont_id == 0 || cont->cont_name == NULL)
        return CKPT_E_INVAL;
    pthread_mutex_lock(&m->mu);
    int rc = find_cont(m, cont->cont_id) ? CKPT_E_EXISTS : 0;
    if (rc == 0 && m->sink.cont_put)
        rc = m->sink.cont_put(m->sink.ctx, cont);
    if (rc == 0 || rc == CKPT_E_NOSPACE || rc == CKPT_E_IO)
        if (insert_cont(m, cont) != 0 && rc == 0)
            rc = CKPT_E_NOMEM;
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int model_cont_delete(model_server *m, uint64_t id)
{
    pthread_mutex_lock(&m->mu);
    struct m_cont **pp = &m->conts;
    while (*pp && (*pp)->c.cont_id != id)
        pp = &(*pp)->next;
    int rc = *pp ? 0 : CKPT_E_NOTFOUND;
    if (rc == 0) {
        struct m_cont *c = *pp;
        *pp = c->next;
        free((void *)c->c.cont_name);
        free((void *)c->c.tags);
        free(c->members);
        free_tags(c->tags);
        free(c);
        if (m->sink.cont_delete)
            rc = m->sink.cont_delete(m->sink.ctx, id);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* Index of id in the sorted member array, or where it would go. */
static size_t member_pos(const struct m_cont *c, uint64_t id)
{
    size_t lo = 0, hi = c->nmem;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->members[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int member_add(struct m_cont *c, uint64_t id)
{
    size_t p = member_pos(c, id);
    if (p < c->nmem && c->members[p] == id)
        return 0;
    if (c->nmem == c->capmem) {
        size_t nc = c->capmem ? c->capmem * 2 : 64;
        uint64_t *nm = realloc(c->members, nc * sizeof *nm);
        if (nm == NULL)
            return CKPT_E_NOMEM;
        c->members = nm;
        c->capmem = nc;
    }
    memmove(&c->members[p + 1], &c->members[p], (c->nmem - p) * sizeof(uint64_t));
    c->members[p] = id;
    c->nmem++;
    return 0;
}

int model_cont_add(model_server *m, uint64_t cont, const uint64_t *ids, size_t n)
{
    pthread_mutex_lock(&m->mu);
    struct m_cont *c = find_cont(m, cont);
    int rc = c ? 0 : ckpt_error(CKPT_E_NOTFOUND, "container %llu not on rank %d",
                                (unsigned long long)cont, m->rank);
    if (rc == 0 && m->sink.cont_add)
        rc = m->sink.cont_add(m->sink.ctx, cont, ids, n);
    if (c && (rc == 0 || rc == CKPT_E_NOSPACE || rc == CKPT_E_IO))
        for (size_t i = 0; i < n; i++)
            if (member_add(c, ids[i]) != 0 && rc == 0)
                rc = CKPT_E_NOMEM;
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int model_cont_remove(model_server *m, uint64_t cont, const uint64_t *ids, size_t n)
{
    pthread_mutex_lock(&m->mu);
    struct m_cont *c = find_cont(m, cont);
    int rc = c ? 0 : CKPT_E_NOTFOUND;
    if (c) {
        for (size_t i = 0; i < n; i++) {
            size_t p = member_pos(c, ids[i]);
            if (p < c->nmem && c->members[p] == ids[i]) {
                memmove(&c->members[p], &c->members[p + 1], (c->nmem - p - 1) * sizeof(uint64_t));
                c->nmem--;
            }
        }
        if (m->sink.cont_remove)
            rc = m->sink.cont_remove(m->sink.ctx, cont, ids, n);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static int same_geometry(const struct ckpt_region *a, const struct ckpt_region *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (uint32_t i = 0; i < a->ndim; i++)
        if (a->start[i] != b->start[i] || a->count[i] != b->count[i])
            return 0;
    return 1;
}

static int fill_region(model_server *m, const struct ckpt_region *src)
{
    struct m_obj *o = find_id(m, src->obj_id);
    if (o == NULL)
        return ckpt_error(CKPT_E_NOTFOUND, "region: no object %llu on rank %d",
                          (unsigned long long)src->obj_id, m->rank);
    struct m_region *g = calloc(1, sizeof *g);
    if (g == NULL)
        return CKPT_E_NOMEM;
    g->r = *src;
    g->r.storage_location = dupstr(src->storage_location);
    g->r.cache_location = dupstr(src->cache_location);
    g->r.hist.range = NULL;
    g->r.hist.bin = NULL;
    if (src->has_hist && src->hist.nbin > 0) {
        size_t nb = (size_t)src->hist.nbin;
        void *r = malloc(2 * nb * sizeof(double)), *b = malloc(nb * sizeof(uint64_t));
        if (r)
            memcpy(r, src->hist.range, 2 * nb * sizeof(double));
        if (b)
            memcpy(b, src->hist.bin, nb * sizeof(uint64_t));
        g->r.hist.range = r;
        g->r.hist.bin = b;
        if (!r || !b) {
            free_region(g);
            return CKPT_E_NOMEM;
        }
    }
    if (!g->r.storage_location || !g->r.cache_location) {
        free_region(g);
        return CKPT_E_NOMEM;
    }
    struct m_region **pp = &o->regions;
    while (*pp && !same_geometry(&(*pp)->r, src))
        pp = &(*pp)->next;
    if (*pp) {
        struct m_region *old = *pp;
        g->next = old->next;
        free_region(old);
    }
    *pp = g;
    return 0;
}

int model_region_put(model_server *m, const struct ckpt_region *reg)
{
    pthread_mutex_lock(&m->mu);
    int rc = find_id(m, reg->obj_id) ? 0 : CKPT_E_NOTFOUND;
    if (rc == 0 && m->sink.region_put)
        rc = m->sink.region_put(m->sink.ctx, reg);
    if (rc == 0 || rc == CKPT_E_NOSPACE || rc == CKPT_E_IO) {
        int r2 = fill_region(m, reg);
        if (rc == 0)
            rc = r2;
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

const struct ckpt_obj *model_find_obj(model_server *m, uint64_t id)
{
    pthread_mutex_lock(&m->mu);
    struct m_obj *o = find_id(m, id);
    pthread_mutex_unlock(&m->mu);
    return o ? &o->o : NULL;
}

const struct ckpt_obj *model_find_obj_by_name(model_server *m, const char *name, int32_t ts)
{
    const struct ckpt_obj *r = NULL;
    pthread_mutex_lock(&m->mu);
    for (struct m_obj *o = m->by_name[name_bucket(m, name, ts)]; o; o = o->next_name)
        if (o->o.time_step == ts && strcmp(o->o.obj_name, name) == 0) {
            r = &o->o;
            break;
        }
    pthread_mutex_unlock(&m->mu);
    return r;
}

const struct ckpt_kvtag *model_find_kvtag(model_server *m, uint64_t owner, const char *name)
{
    const struct ckpt_kvtag *r = NULL;
    pthread_mutex_lock(&m->mu);
    struct m_tag **list = tag_list(m, owner);
    for (struct m_tag *t = list ? *list : NULL; t; t = t->next)
        if (strcmp(t->t.name, name) == 0) {
            r = &t->t;
            break;
        }
    pthread_mutex_unlock(&m->mu);
    return r;
}

size_t model_count_objs(model_server *m)
{
    pthread_mutex_lock(&m->mu);
    size_t n = m->nobjs;
    pthread_mutex_unlock(&m->mu);
    return n;
}

/* ---- rebuild ---- */

static int rb_cont(const struct ckpt_cont *c, void *p)
{
    return insert_cont(p, c);
}

static int rb_obj(const struct ckpt_obj *o, void *p)
{
    return insert_obj(p, o, NULL);
}

static int rb_kvtag(uint64_t owner, const struct ckpt_kvtag *t, void *p)
{
    return fill_tag_ex(p, owner, t, 1);
}

static int rb_member(uint64_t cont, uint64_t obj, void *p)
{
    struct m_cont *c = find_cont(p, cont);
    if (c == NULL)
        return ckpt_error(CKPT_E_CORRUPT, "membership of object %llu in container %llu, which "
                          "is not in the store", (unsigned long long)obj, (unsigned long long)cont);
    return member_add(c, obj);
}

static int rb_region(const struct ckpt_region *g, void *p)
{
    return fill_region(p, g);
}

const struct ckpt_rebuild_cbs model_rebuild_cbs = {rb_cont, rb_obj, rb_kvtag, rb_member, rb_region};

int model_restart_rebuild(model_server **out, ckpt_hooks **hooks, const struct ckpt_hooks_opts *o,
                          struct ckpt_rebuild_stats *stats)
{
    model_server *m;
    int rc = model_create(&m, o->rank, o->nranks, NULL);
    if (rc)
        return rc;
    if ((rc = ckpt_hooks_restart_rebuild(hooks, o, &model_rebuild_cbs, m, stats)) != 0) {
        model_destroy(m);
        return rc;
    }
    /* the tables were filled without a sink; from now on log to the hooks */
    m->sink = hooks_sink(*hooks);
    *out = m;
    return 0;
}

int model_foreach(model_server *m, const struct ckpt_rebuild_cbs *cbs, void *payload)
{
    int rc = 0;
    pthread_mutex_lock(&m->mu);
    for (struct m_cont *c = m->conts; c && rc == 0; c = c->next)
        if (cbs->cont)
            rc = cbs->cont(&c->c, payload);
    for (size_t b = 0; b < m->nbuckets && rc == 0; b++)
        for (struct m_obj *o = m->by_id[b]; o && rc == 0; o = o->next_id)
            if (cbs->obj)
                rc = cbs->obj(&o->o, payload);
    for (size_t b = 0; b < m->nbuckets && rc == 0; b++)
        for (struct m_obj *o = m->by_id[b]; o && rc == 0; o = o->next_id)
            for (struct m_tag *t = o->tags; t && rc == 0 && cbs->kvtag; t = t->next)
                rc = cbs->kvtag(o->o.obj_id, &t->t, payload);
    for (struct m_cont *c = m->conts; c && rc == 0; c = c->next) {
        for (struct m_tag *t = c->tags; t && rc == 0 && cbs->kvtag; t = t->next)
            rc = cbs->kvtag(c->c.cont_id, &t->t, payload);
        for (size_t i = 0; i < c->nmem && rc == 0 && cbs->member; i++)
            rc = cbs->member(c->c.cont_id, c->members[i], payload);
    }
    for (size_t b = 0; b < m->nbuckets && rc == 0; b++)
        for (struct m_obj *o = m->by_id[b]; o && rc == 0; o = o->next_id)
            for (struct m_region *g = o->regions; g && rc == 0 && cbs->region; g = g->next)
                rc = cbs->region(&g->r, payload);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* ---- equality ---- */

static int str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static int tags_equal(struct m_tag *a, struct m_tag *b, const char *owner, char *why, size_t n)
{
    size_t na = 0, nb = 0;
    for (struct m_tag *t = a; t; t = t->next)
        na++;
    for (struct m_tag *t = b; t; t = t->next)
        nb++;
    if (na != nb) {
        snprintf(why, n, "%s: %zu kvtags vs %zu", owner, na, nb);
        return 0;
    }
    for (struct m_tag *t = a; t; t = t->next) {
        struct m_tag *u = b;
        while (u && strcmp(u->t.name, t->t.name) != 0)
            u = u->next;
        if (u == NULL || u->t.type != t->t.type || u->t.size != t->t.size ||
            memcmp(u->t.value, t->t.value, t->t.size) != 0) {
            snprintf(why, n, "%s: kvtag %s differs", owner, t->t.name);
            return 0;
        }
    }
    return 1;
}

static int region_eq(const struct ckpt_region *a, const struct ckpt_region *b)
{
    if (!same_geometry(a, b) || a->data_size != b->data_size || a->unit_size != b->unit_size ||
        a->data_loc_type != b->data_loc_type || a->offset != b->offset ||
        a->cache_offset != b->cache_offset || !str_eq(a->storage_location, b->storage_location) ||
        !str_eq(a->cache_location, b->cache_location) || a->has_hist != b->has_hist)
        return 0;
    if (!a->has_hist)
        return 1;
    if (a->hist.dtype != b->hist.dtype || a->hist.nbin != b->hist.nbin || a->hist.incr != b->hist.incr)
        return 0;
    for (int32_t i = 0; i < a->hist.nbin; i++)
        if (ckpt_hist_bin(&a->hist, (size_t)i) != ckpt_hist_bin(&b->hist, (size_t)i) ||
            ckpt_hist_range(&a->hist, 2 * (size_t)i) != ckpt_hist_range(&b->hist, 2 * (size_t)i) ||
            ckpt_hist_range(&a->hist, 2 * (size_t)i + 1) != ckpt_hist_range(&b->hist, 2 * (size_t)i + 1))
            return 0;
    return 1;
}

static int obj_eq(const struct ckpt_obj *a, const struct ckpt_obj *b)
{
    if (a->obj_id != b->obj_id || a->cont_id != b->cont_id || !str_eq(a->obj_name, b->obj_name) ||
        !str_eq(a->app_name, b->app_name) || !str_eq(a->data_location, b->data_location) ||
        !str_eq(a->tags, b->tags) || a->time_step != b->time_step || a->user_id != b->user_id ||
        a->data_type != b->data_type || a->transform_state != b->transform_state ||
        a->create_time != b->create_time || a->last_modified_time != b->last_modified_time ||
        a->data_server_id != b->data_server_id || a->region_partition != b->region_partition ||
        a->consistency != b->consistency || a->ndim != b->ndim)
        return 0;
    for (uint32_t i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

static int equal_locked(model_server *a, model_server *b, char *why, size_t n)
{
    char owner[64];
    if (a->nobjs != b->nobjs) {
        snprintf(why, n, "%zu objects vs %zu", a->nobjs, b->nobjs);
        return 0;
    }
    for (size_t bk = 0; bk < a->nbuckets; bk++) {
        for (struct m_obj *o = a->by_id[bk]; o; o = o->next_id) {
            struct m_obj *p = find_id(b, o->o.obj_id);
            snprintf(owner, sizeof owner, "object %llu", (unsigned long long)o->o.obj_id);
            if (p == NULL || !obj_eq(&o->o, &p->o)) {
                snprintf(why, n, "%s (%s): %s", owner, o->o.obj_name, p ? "fields differ" : "missing");
                return 0;
            }
            if (!tags_equal(o->tags, p->tags, owner, why, n))
                return 0;
            size_t ra = 0, rb = 0;
            for (struct m_region *g = o->regions; g; g = g->next)
                ra++;
            for (struct m_region *g = p->regions; g; g = g->next)
                rb++;
            if (ra != rb) {
                snprintf(why, n, "%s: %zu regions vs %zu", owner, ra, rb);
                return 0;
            }
            for (struct m_region *g = o->regions; g; g = g->next) {
                struct m_region *h = p->regions;
                while (h && !same_geometry(&h->r, &g->r))
                    h = h->next;
                if (h == NULL || !region_eq(&g->r, &h->r)) {
                    snprintf(why, n, "%s: a region differs", owner);
                    return 0;
                }
            }
        }
    }
    size_t ca = 0, cb = 0;
    for (struct m_cont *c = a->conts; c; c = c->next)
        ca++;
    for (struct m_cont *c = b->conts; c; c = c->next)
        cb++;
    if (ca != cb) {
        snprintf(why, n, "%zu containers vs %zu", ca, cb);
        return 0;
    }
    for (struct m_cont *c = a->conts; c; c = c->next) {
        struct m_cont *d = find_cont(b, c->c.cont_id);
        snprintf(owner, sizeof owner, "container %llu", (unsigned long long)c->c.cont_id);
        if (d == NULL || !str_eq(c->c.cont_name, d->c.cont_name) || !str_eq(c->c.tags, d->c.tags)) {
            snprintf(why, n, "%s: %s", owner, d ? "fields differ" : "missing");
            return 0;
        }
        if (c->nmem != d->nmem || (c->nmem && memcmp(c->members, d->members, c->nmem * sizeof(uint64_t)) != 0)) {
            snprintf(why, n, "%s: members differ (%zu vs %zu)", owner, c->nmem, d->nmem);
            return 0;
        }
        if (!tags_equal(c->tags, d->tags, owner, why, n))
            return 0;
    }
    return 1;
}

int model_equal(model_server *a, model_server *b, char *why, size_t n)
{
    /* Two servers are always locked in address order, so that
     * model_equal(a, b) in one thread and model_equal(b, a) in another
     * cannot deadlock (locking in call order is a lock-order inversion). */
    model_server *lo = (uintptr_t)a <= (uintptr_t)b ? a : b, *hi = lo == a ? b : a;
    pthread_mutex_lock(&lo->mu);
    if (hi != lo)
        pthread_mutex_lock(&hi->mu);
    int eq = equal_locked(a, b, why, n);
    if (hi != lo)
        pthread_mutex_unlock(&hi->mu);
    pthread_mutex_unlock(&lo->mu);
    return eq;
}
