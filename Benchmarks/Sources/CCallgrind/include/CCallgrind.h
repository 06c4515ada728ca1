#ifndef STEPBENCH_CCALLGRIND_H
#define STEPBENCH_CCALLGRIND_H

// The measured window's edges as callgrind client requests (valgrind's <valgrind/callgrind.h>,
// from Debian's `valgrind` package). Outside valgrind each is a few no-op instructions.

/// Opens a window: a dump labelled `label` (its part is not read), which resets
/// every one of callgrind's counters (one table for every thread: the profiler never passes
/// --separate-threads). CALLGRIND_ZERO_STATS left costs from before it in the next part's lines.
void stepbench_window_open(const char *label);

/// Closes a window: writes callgrind's counters since the open as one dump part, whose trigger
/// reads "Client Request: <label>".
void stepbench_window_close(const char *label);

#endif
