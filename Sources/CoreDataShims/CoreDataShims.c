// The prefetch shim is inline in include/CoreDataShims.h; the va_list reader is here.
#include "CoreDataShims.h"

void coredata_read_va_args(const char *kinds, long count, va_list args, coredata_va_value *values) {
    va_list list;
    va_copy(list, args);
    for (long i = 0; i < count; i++) {
        switch (kinds[i]) {
        case 'd': values[i].real = va_arg(list, double); break;
        case 'p': values[i].pointer = va_arg(list, const void *); break;
        default: values[i].integer = va_arg(list, long long); break;
        }
    }
    va_end(list);
}
