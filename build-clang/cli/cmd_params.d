build-clang/cli/cmd_params.o: cli/cmd_params.c cli/cli.h \
  include/trainplan.h

cli/cli.h:

include/trainplan.h:
