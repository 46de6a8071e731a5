/*
 * workload.c - the stream of ckpt-workload. Rank r's stream:
 *   if r is the home of container "cont0": create it, tag it ("owner")
 *   for i = 0..N-1 whose home (djb2("obj<i>") + i%3) % P is r, in order:
 *     create obj<i> (time_step i%3) in cont0,
 *     M kvtags tag<j> (int, double, string in turn, values from i, j, seed),
 *     "Group" = i if i < T,
 *     a region (with a histogram every second time) if i % region_every == 0
 *   if r is the container's home: add every object to it, in order of i.
 * Ids: a fresh store hands rank r the ids (r+1)*1e9 + 0, 1, 2, ... in the
 * order it asks, so the stream knows every id without talking to anyone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

#define ID_BASE 1000000000ull

static void obj_name(char *buf, size_t n, long i)
{
    snprintf(buf, n, "obj%ld", i);
}

static int32_t obj_ts(long i)
{
    return (int32_t)(i % 3);
}

static int home_of(const struct wl_params *p, long i)
{
    char name[32];
    obj_name(name, sizeof name, i);
    return ckpt_home_obj(name, obj_ts(i), p->nranks);
}

/* Ids of every object as the stream assigns them (all ranks). */
static uint64_t *all_ids(const struct wl_params *p)
{
    uint64_t *ids = malloc((size_t)(p->objects > 0 ? p->objects : 1) * sizeof *ids);
    uint64_t *seq = calloc((size_t)p->nranks, sizeof *seq);
    int ch = ckpt_home_cont(WL_CONT_NAME, p->nranks);
    if (ids == NULL || seq == NULL) {
        free(ids);
        free(seq);
        return NULL;
    }
    seq[ch] = 1; /* the container took seq 0 on its home */
    for (long i = 0; i < p->objects; i++) {
        int h = home_of(p, i);
        ids[i] = ((uint64_t)h + 1) * ID_BASE + seq[h]++;
    }
    free(seq);
    return ids;
}

int wl_home(const struct wl_mut *m, int nranks)
{
    char name[32];
    switch (m->kind) {
    case WL_CONT:
    case WL_CONT_TAG:
    case WL_MEMBER:
        return ckpt_home_cont(WL_CONT_NAME, nranks);
    default:
        obj_name(name, sizeof name, m->i);
        return ckpt_home_obj(name, obj_ts(m->i), nranks);
    }
}

long wl_count(const struct wl_params *p)
{
    long n = 0;
    int ch = ckpt_home_cont(WL_CONT_NAME, p->nranks);
    if (ch == p->rank)
        n += 2 + p->objects;
    for (long i = 0; i < p->objects; i++) {
        if (home_of(p, i) != p->rank)
            continue;
        n += 1 + p->tags_per_object + (i < p->tagged ? 1 : 0);
        if (p->region_every > 0 && i % p->region_every == 0)
            n++;
    }
    return n;
}

int wl_stream(const struct wl_params *p, wl_fn fn, void *arg)
{
    int ch = ckpt_home_cont(WL_CONT_NAME, p->nranks);
    uint64_t cont_id = ((uint64_t)ch + 1) * ID_BASE;
    uint64_t *ids = all_ids(p);
    struct wl_mut m;
    char name[32], app[32], loc[64], tname[32], sval[64], store_loc[64];
    int32_t ival;
    double dval;
    double range[8];
    uint64_t bins[4];
    int rc = 0;

    if (ids == NULL)
        return CKPT_E_NOMEM;
    if (ch == p->rank) {
        memset(&m, 0, sizeof m);
        m.kind = WL_CONT;
        m.id = cont_id;
        m.cont.cont_id = cont_id;
        m.cont.cont_name = WL_CONT_NAME;
        m.cont.tags = "";
        if ((rc = fn(&m, arg)) != 0)
            goto done;
        memset(&m, 0, sizeof m);
        m.kind = WL_CONT_TAG;
        m.owner = cont_id;
        m.tag.name = "owner";
        m.tag.type = 16; /* PDC_STRING */
        m.tag.value = "ckpt-workload";
        m.tag.size = (uint32_t)strlen("ckpt-workload") + 1;
        if ((rc = fn(&m, arg)) != 0)
            goto done;
    }
    for (long i = 0; i < p->objects; i++) {
        if (home_of(p, i) != p->rank)
            continue;
        uint64_t id = ids[i];
        obj_name(name, sizeof name, i);
        snprintf(app, sizeof app, "ckpt-workload");
        snprintf(loc, sizeof loc, "/data/obj%ld", i);
        memset(&m, 0, sizeof m);
        m.kind = WL_OBJ;
        m.i = i;
        m.id = id;
        struct ckpt_obj *o = &m.obj;
        o->obj_id = id;
        o->cont_id = cont_id;
        o->obj_name = name;
        o->app_name = app;
        o->data_location = loc;
        o->tags = "";
        o->time_step = obj_ts(i);
        o->user_id = 1000 + (int32_t)(i % 7);
        o->data_type = 13 + (int32_t)(i % 2); /* PDC_FLOAT / PDC_DOUBLE */
        o->create_time = 1700000000 + i;
        o->last_modified_time = 1700000000 + i;
        o->ndim = 1 + (uint32_t)(i % 3);
        for (uint32_t d = 0; d < o->ndim; d++)
            o->dims[d] = (uint64_t)(64u << d) + (uint64_t)(i % 5);
        if ((rc = fn(&m, arg)) != 0)
            goto done;
        for (long j = 0; j < p->tags_per_object; j++) {
            memset(&m, 0, sizeof m);
            m.kind = WL_TAG;
            m.i = i;
            m.owner = id;
            snprintf(tname, sizeof tname, "tag%ld", j);
            m.tag.name = tname;
            switch (j % 3) {
            case 0:
                ival = (int32_t)(i * 31 + j + p->seed);
                m.tag.type = 2; /* PDC_INT */
                m.tag.size = sizeof ival;
                m.tag.value = &ival;
                break;
            case 1:
                dval = (double)i + (double)j * 0.25 + p->seed;
                m.tag.type = 14; /* PDC_DOUBLE */
                m.tag.size = sizeof dval;
                m.tag.value = &dval;
                break;
            default:
                snprintf(sval, sizeof sval, "v%ld.%ld.%u", i, j, p->seed);
                m.tag.type = 16; /* PDC_STRING */
                m.tag.size = (uint32_t)strlen(sval) + 1;
                m.tag.value = sval;
                break;
            }
            if ((rc = fn(&m, arg)) != 0)
                goto done;
        }
        if (i < p->tagged) {
            memset(&m, 0, sizeof m);
            m.kind = WL_TAG;
            m.i = i;
            m.owner = id;
            ival = (int32_t)i;
            m.tag.name = "Group";
            m.tag.type = 2;
            m.tag.size = sizeof ival;
            m.tag.value = &ival;
            if ((rc = fn(&m, arg)) != 0)
                goto done;
        }
        if (p->region_every > 0 && i % p->region_every == 0) {
            memset(&m, 0, sizeof m);
            m.kind = WL_REGION;
            m.i = i;
            struct ckpt_region *g = &m.region;
            g->obj_id = id;
            g->ndim = 1;
            g->start[0] = (uint64_t)i * 1024;
            g->count[0] = 1024;
            g->unit_size = 8;
            g->data_size = 8192;
            g->data_loc_type = 1;
            snprintf(store_loc, sizeof store_loc, "/data/obj%ld.bin", i);
            g->storage_location = store_loc;
            g->cache_location = "";
            g->offset = (uint64_t)i * 8192;
            if ((i / p->region_every) % 2 == 0) {
                g->has_hist = 1;
                g->hist.dtype = 14;
                g->hist.nbin = 4;
                for (int b = 0; b < 8; b++)
                    range[b] = b * 0.5;
                for (int b = 0; b < 4; b++)
                    bins[b] = (uint64_t)(i + b);
                g->hist.range = range;
                g->hist.bin = bins;
                g->hist.incr = 0.5;
            }
            if ((rc = fn(&m, arg)) != 0)
                goto done;
        }
    }
    if (ch == p->rank) {
        for (long i = 0; i < p->objects; i++) {
            memset(&m, 0, sizeof m);
            m.kind = WL_MEMBER;
            m.i = i;
            m.owner = cont_id;
            m.id = ids[i];
            if ((rc = fn(&m, arg)) != 0)
                goto done;
        }
    }
done:
    free(ids);
    return rc;
}
