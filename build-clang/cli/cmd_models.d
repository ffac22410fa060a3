build-clang/cli/cmd_models.o: cli/cmd_models.c cli/cli.h \
  include/trainplan.h

cli/cli.h:

include/trainplan.h:
