#include "CJemallocConfig.h"

// jemalloc reads this global at start-up. The thread caches are disabled so that every
// allocation reaches the arena and `stats.arenas.<all>.*.nmalloc` counts each one exactly,
// whatever thread it was made on (GCD workers included). The cost — each malloc takes the
// arena path — is the same for every design and is recorded with the results.
const char *malloc_conf = "tcache:false";

const char *stepbench_jemalloc_config(void) { return malloc_conf; }
