build-clang/cli/cmd_memory.o: cli/cmd_memory.c cli/cli.h \
  include/trainplan.h

cli/cli.h:

include/trainplan.h:
