build-clang/src/util.o: src/util.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
