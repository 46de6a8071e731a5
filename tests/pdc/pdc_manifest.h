/*
 * pdc_manifest.h - the manifest files of the PDC test clients
 * (pdc_client.c, pdc_query_client.c): what a client wrote, one line
 * "KIND NAME ID" per container or object (KIND: cont, obj, deleted, new),
 * read back after a restart; later lines about a name win.
 */
#ifndef PDC_CKPT_PDC_MANIFEST_H
#define PDC_CKPT_PDC_MANIFEST_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char kind[16];
    char name[64];
    uint64_t id;
};

struct manifest {
    struct entry *e;
    size_t n, cap;
};

/* one more entry: 0, or -1 out of memory */
static inline int manifest_add(struct manifest *m, const char *kind, const char *name, uint64_t id)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        struct entry *e = realloc(m->e, cap * sizeof *e);
        if (e == NULL)
            return -1;
        m->e = e;
        m->cap = cap;
    }
    snprintf(m->e[m->n].kind, sizeof m->e[m->n].kind, "%s", kind);
    snprintf(m->e[m->n].name, sizeof m->e[m->n].name, "%s", name);
    m->e[m->n].id = id;
    m->n++;
    return 0;
}

/* Every line of the manifest at path added to m, in order. 0, or -1 when
 * the file cannot be opened (said on stderr, after prog) or memory ran
 * out. */
static inline int manifest_load(struct manifest *m, const char *prog, const char *path)
{
    char kind[16], name[64];
    uint64_t id;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    while (fscanf(f, "%15s %63s %" SCNu64, kind, name, &id) == 3)
        if (manifest_add(m, kind, name, id) != 0) {
            fclose(f);
            return -1;
        }
    fclose(f);
    return 0;
}

#endif
