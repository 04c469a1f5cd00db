#ifndef COREDATA_SHIMS_H
#define COREDATA_SHIMS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__APPLE__)
/// Clang's ARC runtime functions (`objc_initWeak` stores nil for an object being deallocated).
void *objc_initWeak(void **location, void *value);
void *objc_loadWeakRetained(void **location);
void objc_destroyWeak(void **location);
#else
/// The Swift runtime's own atomic "retain unless deallocating" (`HeapObject.h`, C calling
/// convention): a strong reference count that has reached zero is never raised again. It
/// returns the object, retained, or `NULL` (not a `bool`: the runtime of Swift 5 and 6 declares
/// `HeapObject *swift_tryRetain(HeapObject *)`).
void *swift_tryRetain(void *object);
#endif

/// Retains the object at `object` (an `NSManagedObject`) unless its last strong reference is
/// gone and it is being deallocated (possibly on another thread). A context's registry holds
/// its objects unretained: an object released on another thread has its `deinit` wait for the
/// registry's lock to leave it, and a strong reference taken under that lock in the meantime
/// would outlive the object. (On Apple platforms `NSManagedObject` is an `NSObject`, counted by
/// the Objective-C runtime, not Swift's: there a weak reference's load does it.)
static inline bool coredata_try_retain(void *object) {
#if defined(__APPLE__)
    void *weak = NULL;
    objc_initWeak(&weak, object);
    void *retained = objc_loadWeakRetained(&weak);
    objc_destroyWeak(&weak);
    return retained != NULL;
#else
    return swift_tryRetain(object) != NULL;
#endif
}

/// Asks the processor to start bringing the cache line holding `address` in (a hint: it never
/// faults, and nothing waits for it). A bulk save reads buffers that were written thousands of
/// objects earlier and are no longer cached; hinted a few rows ahead, their misses overlap with
/// the work on the rows before them instead of each stalling in turn.
static inline void coredata_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// One argument read from a C `va_list` by `coredata_read_va_args`: the field its kind names.
typedef struct {
    long long integer;
    double real;
    const void *pointer;
} coredata_va_value;

/// Reads `count` arguments from `args` into `values`, the kind of each given by `kinds[i]`:
/// `'d'` a `double`, `'p'` a pointer, anything else a `long long`. One call reads them all, since
/// a `va_list` passed by value cannot be read further by its caller on every ABI.
/// (`NSPredicate(format:arguments:)` takes a `CVaListPointer`, which Swift cannot read itself.)
void coredata_read_va_args(const char *kinds, long count, va_list args, coredata_va_value *values);

#endif
