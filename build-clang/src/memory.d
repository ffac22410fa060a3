build-clang/src/memory.o: src/memory.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
