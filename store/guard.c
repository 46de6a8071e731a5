/*
 * guard.c - the one recovery mechanism for faults while LMDB reads a
 * damaged store (docs/RELIABILITY.md, "A damaged store never kills a
 * process").
 *
 * LMDB trusts its file. On a damaged page it either fails an assertion --
 * mdb_assert_fail() calls the callback set with mdb_env_set_assert() and
 * abort()s when that returns -- or follows a garbage pointer and faults
 * (SIGSEGV, or SIGBUS past the end of the file). Every LMDB call of the
 * store runs inside a guard: a recovery point (sigsetjmp) kept in a
 * thread-local stack. The assertion callback and, once installed, the
 * SIGSEGV/SIGBUS handlers leave through siglongjmp to the innermost guard
 * of the calling thread; the caller turns that into CKPT_E_CORRUPT and
 * marks the store failed (store.c, read.c say what state LMDB is left in).
 *
 * Signal handlers are process-wide, so the library installs them only
 * when asked (ckpt_fault_guard_install): a fault outside any guard, or on
 * a thread with no guard, goes on to the handler that was there before,
 * or kills the process as it would have without us. The assertion
 * callback needs no handler and is always set.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "store_int.h"

static _Thread_local struct ckpt_guard *cur_guard;

void ckpt_guard_push(struct ckpt_guard *g)
{
    g->prev = cur_guard;
    g->sig = 0;
    g->addr = NULL;
    g->what[0] = 0;
    cur_guard = g;
}

void ckpt_guard_pop(struct ckpt_guard *g)
{
    cur_guard = g->prev;
}

/* mdb_env_set_assert callback. LMDB abort()s when it returns, so with a
 * guard armed it never does. Without one (a bug: every LMDB call of the
 * store is guarded) LMDB's own message and abort() follow. */
void ckpt_guard_on_assert(MDB_env *env, const char *msg)
{
    struct ckpt_guard *g = cur_guard;
    (void)env;
    if (g == NULL)
        return;
    snprintf(g->what, sizeof g->what, "LMDB assertion failed: %s", msg);
    siglongjmp(g->jb, 1);
}

/* ---- SIGSEGV / SIGBUS ---- */

static pthread_mutex_t inst_mu = PTHREAD_MUTEX_INITIALIZER;
static int installed;
static struct sigaction old_segv, old_bus;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    struct ckpt_guard *g = cur_guard;
    const struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;
    if (g != NULL) {
        g->sig = sig;
        g->addr = si != NULL ? si->si_addr : NULL;
        siglongjmp(g->jb, 1);
    }
    /* not ours: what was there before us */
    if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    } else {
        /* die of the signal as we would have without the handler */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig);
    }
}

int ckpt_fault_guard_install(void)
{
    struct sigaction sa;
    int rc = 0;
    pthread_mutex_lock(&inst_mu);
    if (!installed) {
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        /* SA_NODEFER: siglongjmp leaves the handler without restoring the
         * mask (the guards use sigsetjmp(jb, 0), no syscall per guard), so
         * the signal must not stay blocked */
        sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSEGV, &sa, &old_segv) != 0 || sigaction(SIGBUS, &sa, &old_bus) != 0) {
            int e = errno;
            sigaction(SIGSEGV, &old_segv, NULL);
            rc = ckpt_error(CKPT_E_SYS, "cannot install the SIGSEGV/SIGBUS handlers (%s)", strerror(e));
        } else {
            installed = 1;
        }
    }
    pthread_mutex_unlock(&inst_mu);
    return rc;
}

void ckpt_fault_guard_uninstall(void)
{
    pthread_mutex_lock(&inst_mu);
    if (installed) {
        sigaction(SIGSEGV, &old_segv, NULL);
        sigaction(SIGBUS, &old_bus, NULL);
        installed = 0;
    }
    pthread_mutex_unlock(&inst_mu);
}

int ckpt_guard_run(void (*fn)(void *), void *arg)
{
    struct ckpt_guard g;
    if (fn == NULL)
        return 0;
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        ckpt_guard_pop(&g);
        return g.sig != 0 ? g.sig : SIGABRT;
    }
    fn(arg);
    ckpt_guard_pop(&g);
    return 0;
}

void ckpt_guard_describe(char *buf, size_t n, const struct ckpt_guard *g, const char *map,
                         size_t map_len, unsigned psize)
{
    const char *a = g->addr;
    if (g->sig == 0) {
        snprintf(buf, n, "%s", g->what);
        return;
    }
    const char *name = g->sig == SIGBUS ? "SIGBUS" : g->sig == SIGSEGV ? "SIGSEGV" : "a signal";
    if (map != NULL && psize > 0 && a >= map && (size_t)(a - map) < map_len)
        snprintf(buf, n, "reading it faulted (%s) at page %zu (byte %zu of the file)", name,
                 (size_t)(a - map) / psize, (size_t)(a - map));
    else if (map != NULL)
        snprintf(buf, n, "reading it faulted (%s at address %p, outside the file: a pointer taken "
                 "from a damaged page)", name, g->addr);
    else
        snprintf(buf, n, "reading it faulted (%s at address %p)", name, g->addr);
}
