#include "CCallgrind.h"
#include <valgrind/callgrind.h>

void stepbench_window_open(void) { CALLGRIND_ZERO_STATS; }

void stepbench_window_close(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
