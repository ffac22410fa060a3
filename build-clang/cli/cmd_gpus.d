build-clang/cli/cmd_gpus.o: cli/cmd_gpus.c cli/cli.h include/trainplan.h

cli/cli.h:

include/trainplan.h:
