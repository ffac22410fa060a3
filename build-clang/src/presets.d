build-clang/src/presets.o: src/presets.c src/internal.h \
  include/trainplan.h

src/internal.h:

include/trainplan.h:
