build-clang/src/layout.o: src/layout.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
