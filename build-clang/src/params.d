build-clang/src/params.o: src/params.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
