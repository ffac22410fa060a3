build-clang/src/gpus.o: src/gpus.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
