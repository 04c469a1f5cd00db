// The shims are inline functions in include/CoreDataShims.h; a C target needs a source file.
#include "CoreDataShims.h"
