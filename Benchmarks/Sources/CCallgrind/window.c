#include "CCallgrind.h"
#include <valgrind/callgrind.h>

// A dump, not CALLGRIND_ZERO_STATS: after a zero, the cost lines of the next dump part still held
// costs from before it (their sum, the part's "totals", exceeded its "summary": by 21,031
// instructions after one path's warm-up, by 73,477 after nine other paths'), so a window's count
// depended on what the process had run before it. A dump resets every cost; its part (`label`:
// MeasuredWindow.openLabel) is left unread.
void stepbench_window_open(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }

void stepbench_window_close(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
