#include "backends/backend.h"

void device_state_drop_pid(struct device_state *st, pid_t pid)
{
	unsigned listed = st->nprocs < 16 ? st->nprocs : 16, kept = 0;

	if (pid <= 0 || !st->procs_known)
		return;
	for (unsigned i = 0; i < listed; i++)
		if (st->pids[i] != (unsigned)pid)
			st->pids[kept++] = st->pids[i];
	st->nprocs -= listed - kept;
}
