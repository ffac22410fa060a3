build-clang/src/suggest.o: src/suggest.c src/internal.h \
  include/trainplan.h

src/internal.h:

include/trainplan.h:
