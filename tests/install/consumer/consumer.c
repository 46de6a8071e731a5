/*
 * consumer.c - a program outside the pdc-ckpt tree, built against an
 * installed prefix (tests/install/CMakeLists.txt): log an object and a
 * kvtag, close, restart by mapping, read both back and compare.
 * With -DCONSUMER_MPI (pdc-ckpt-mpi / pdc-ckpt::hooks_mpi) the restart is
 * ckpt_hooks_restart_elastic on MPI_COMM_WORLD instead.
 * usage: consumer STORE   (a path that does not exist yet; left behind)
 * Exit 0 when everything read back equals what was logged, 1 otherwise.
 */
#include <stdio.h>
#include <string.h>

#include <bulki.h>
#include <ckpt_hooks.h>
#ifdef CONSUMER_MPI
#include <ckpt_hooks_mpi.h>
#endif

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, "consumer: " __VA_ARGS__);                             \
        fputc('\n', stderr);                                                   \
        goto done;                                                             \
    } while (0)

int main(int argc, char **argv)
{
    const char *root;
    ckpt_hooks *h = NULL;
    ckpt_hooks_read *r = NULL;
    int rc, ok = 0;
    uint64_t id;
    const char value[] = "hello";
    struct ckpt_obj obj = {0}, got = {0};
    struct ckpt_kvtag tag = {"greeting", BULKI_T_STRING, sizeof value, value}, gtag;
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;

#ifdef CONSUMER_MPI
    MPI_Init(&argc, &argv);
#endif
    if (argc != 2) {
        fprintf(stderr, "usage: consumer STORE\n");
        goto done;
    }
    root = argv[1];
    o.store_root = root;
    /* a restart never creates a store */
    if ((rc = ckpt_hooks_restart_map(&h, &o)) != CKPT_E_NOSTORE)
        FAIL("restart_map of the missing store %s gave %s, not CKPT_E_NOSTORE", root,
             ckpt_errname(rc));
    h = NULL;

    if ((rc = ckpt_hooks_open(&h, &o)) != 0)
        FAIL("open %s: %s", root, ckpt_errmsg());
    if ((rc = ckpt_hook_new_id(&id, h)) != 0)
        FAIL("new id: %s", ckpt_errmsg());
    obj.obj_id = id;
    obj.obj_name = "consumer-object";
    obj.app_name = obj.data_location = obj.tags = "";
    obj.time_step = 7;
    obj.ndim = 2;
    obj.dims[0] = 3;
    obj.dims[1] = 4;
    if ((rc = ckpt_hook_obj_create(h, &obj)) != 0)
        FAIL("obj_create: %s", ckpt_errmsg());
    if ((rc = ckpt_hook_kvtag_put(h, id, &tag)) != 0)
        FAIL("kvtag_put: %s", ckpt_errmsg());
    if ((rc = ckpt_hooks_close(h)) != 0)
        FAIL("close: %s", ckpt_errmsg());
    h = NULL;

#ifdef CONSUMER_MPI
    if ((rc = ckpt_hooks_restart_elastic(&h, &o, MPI_COMM_WORLD, NULL)) != 0)
        FAIL("restart_elastic: %s", ckpt_strerror(rc));
#else
    if ((rc = ckpt_hooks_restart_map(&h, &o)) != 0)
        FAIL("restart_map: %s", ckpt_strerror(rc));
#endif
    if ((rc = ckpt_hooks_read_begin(&r, h)) != 0)
        FAIL("read_begin: %s", ckpt_errmsg());
    if ((rc = ckpt_hooks_get_obj(&got, r, id)) != 0)
        FAIL("get_obj %llu: %s", (unsigned long long)id, ckpt_strerror(rc));
    if (got.obj_id != id || strcmp(got.obj_name, obj.obj_name) != 0 || got.time_step != 7 ||
        got.ndim != 2 || got.dims[0] != 3 || got.dims[1] != 4)
        FAIL("object read back differs: id %llu name '%s' time_step %d ndim %u",
             (unsigned long long)got.obj_id, got.obj_name, (int)got.time_step, (unsigned)got.ndim);
    if ((rc = ckpt_hooks_get_kvtag(&gtag, r, id, "greeting")) != 0)
        FAIL("get_kvtag: %s", ckpt_strerror(rc));
    if (gtag.type != tag.type || gtag.size != tag.size || memcmp(gtag.value, value, sizeof value) != 0)
        FAIL("kvtag read back differs: type %d size %u", (int)gtag.type, (unsigned)gtag.size);
    printf("consumer: object %llu and kvtag read back after restart\n", (unsigned long long)id);
    ok = 1;
done:
    ckpt_hooks_read_end(r);
    if (h && ckpt_hooks_close(h) != 0) {
        fprintf(stderr, "consumer: final close: %s\n", ckpt_errmsg());
        ckpt_hooks_discard(h);
        ok = 0;
    }
#ifdef CONSUMER_MPI
    MPI_Finalize();
#endif
    return ok ? 0 : 1;
}
