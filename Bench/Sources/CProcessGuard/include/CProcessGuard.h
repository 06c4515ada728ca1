#ifndef STEPBENCH_CPROCESSGUARD_H
#define STEPBENCH_CPROCESSGUARD_H

#include <sys/types.h>

// prctl is variadic, so Swift cannot call it; this is the one use the bench makes of it.

/// Asks the kernel to SIGKILL this process when its parent dies (Linux PR_SET_PDEATHSIG), then
/// exits at once (status 137) if the parent is not `expected_parent` any more: it died before the
/// request took effect. Does nothing but the check where the kernel has no such request.
void stepbench_die_with_parent(pid_t expected_parent);

#endif
