#include <stdio.h>
#include "cli/commands.h"

int cmd_run(int argc, char **argv)
{
	fprintf(stderr, "zlb run: not built yet\n");
	return ZLB_EXIT_USAGE;
}
