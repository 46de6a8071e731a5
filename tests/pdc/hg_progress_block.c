/*
 * hg_progress_block.c - an LD_PRELOAD module for the `pdc` tests: PDC's
 * server and client ask Mercury for busy-polling progress (NA_NO_BLOCK in
 * HG_Init_opt, pdc_server.c and pdc_client_connect.c), so every PDC
 * process keeps a core busy even while it waits. With more PDC processes
 * than cores (2 servers and a client, or 3 servers, on a 2-core machine)
 * a process waiting for an answer spins through the time slice of the one
 * that would send it, and each round trip costs milliseconds: a test ran 4
 * to 7 times longer, and any test running beside it crawled too. This
 * module clears that flag, so PDC's processes sleep in Mercury's progress
 * until there is something to do; nothing else of PDC changes.
 *
 * pdc_lib.sh's pdc_test_init preloads it for the test scripts (not for
 * tools/bench/pdc_bench.sh: the benchmarks run PDC as it ships);
 * PDC_CKPT_TEST_BUSY_POLL=1 runs the tests in PDC's busy mode instead.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include <mercury.h>

typedef hg_class_t *(*hg_init_opt_fn)(const char *, hg_bool_t, const struct hg_init_info *);

hg_class_t *HG_Init_opt(const char *na_info_string, hg_bool_t na_listen,
                        const struct hg_init_info *hg_init_info)
{
    void *sym = dlsym(RTLD_NEXT, "HG_Init_opt");
    hg_init_opt_fn real;
    struct hg_init_info info;
    memcpy(&real, &sym, sizeof real); /* POSIX: dlsym's object pointer is the function's */
    if (real == NULL)
        return NULL; /* Mercury is not loaded: HG_Init_opt fails as it would without it */
    if (hg_init_info == NULL)
        return real(na_info_string, na_listen, NULL);
    info = *hg_init_info;
    info.na_init_info.progress_mode = 0; /* blocking progress: Mercury's default */
    return real(na_info_string, na_listen, &info);
}
