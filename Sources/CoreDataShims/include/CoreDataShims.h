#ifndef COREDATA_SHIMS_H
#define COREDATA_SHIMS_H

/// Asks the processor to start bringing the cache line holding `address` in (a hint: it never
/// faults, and nothing waits for it). A bulk save reads buffers that were written thousands of
/// objects earlier and are no longer cached; hinted a few rows ahead, their misses overlap with
/// the work on the rows before them instead of each stalling in turn.
static inline void coredata_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
