/* cmd_record.c - the live session: buildtrace [-p PID | -a] ... */
#include <stdio.h>
#include "commands.h"

int cmd_record(int argc, char **argv)
{
	fprintf(stderr, "buildtrace: the live session is not built yet\n");
	return 1;
}
