build-clang/cli/common.o: cli/common.c cli/cli.h include/trainplan.h

cli/cli.h:

include/trainplan.h:
