build-clang/cli/main.o: cli/main.c cli/cli.h include/trainplan.h

cli/cli.h:

include/trainplan.h:
