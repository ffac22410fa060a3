build-clang/src/time.o: src/time.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
