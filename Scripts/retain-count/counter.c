// Counts swift_retain and swift_release calls by call site (return address), for
// `Scripts/retain-count/retain-count.sh`. Loaded with LD_PRELOAD into the release `coredata`
// binary: its calls into libswiftCore go through the PLT, so these definitions take them.
// On exit, every site called at least 1,000 times is written to $RC_OUT as
// "<count> RET|REL <module path> <offset in module (hex)>". Calls with a null reference (a `nil`
// optional let go) are not counted: they cost a test and a return, not an atomic operation.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS (1 << 16)
static uintptr_t sites[SLOTS];
static int kinds[SLOTS];
static unsigned long counts[SLOTS];
static void *(*real_retain)(void *);
static void (*real_release)(void *);

static void record(uintptr_t site, int kind) {
    uintptr_t index = (site * 0x9E3779B97F4A7C15ull) >> 48;
    for (;;) {
        uintptr_t seen = __atomic_load_n(&sites[index], __ATOMIC_ACQUIRE);
        if (seen == site && kinds[index] == kind) { __atomic_add_fetch(&counts[index], 1, __ATOMIC_RELAXED); return; }
        if (seen == 0) {
            uintptr_t empty = 0;
            if (__atomic_compare_exchange_n(&sites[index], &empty, site, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                kinds[index] = kind;
                __atomic_add_fetch(&counts[index], 1, __ATOMIC_RELAXED);
                return;
            }
            continue;
        }
        index = (index + 1) & (SLOTS - 1);
    }
}

void *swift_retain(void *object) {
    if (!real_retain) real_retain = dlsym(RTLD_NEXT, "swift_retain");
    if (object) record((uintptr_t)__builtin_return_address(0), 0);
    return real_retain(object);
}

void swift_release(void *object) {
    if (!real_release) real_release = dlsym(RTLD_NEXT, "swift_release");
    if (object) record((uintptr_t)__builtin_return_address(0), 1);
    real_release(object);
}

__attribute__((destructor)) static void dump(void) {
    const char *path = getenv("RC_OUT");
    FILE *out = fopen(path ? path : "retain-counts.txt", "w");
    if (!out) return;
    for (int i = 0; i < SLOTS; i++) {
        if (!sites[i] || counts[i] < 1000) continue;
        Dl_info info;
        if (!dladdr((void *)sites[i], &info) || !info.dli_fname) continue;
        fprintf(out, "%lu %s %s %lx\n", counts[i], kinds[i] ? "REL" : "RET", info.dli_fname,
                (unsigned long)(sites[i] - (uintptr_t)info.dli_fbase));
    }
    fclose(out);
}
