build-clang/src/hf_config.o: src/hf_config.c src/internal.h \
  include/trainplan.h

src/internal.h:

include/trainplan.h:
