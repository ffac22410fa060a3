build-clang/cli/args.o: cli/args.c cli/cli.h include/trainplan.h

cli/cli.h:

include/trainplan.h:
