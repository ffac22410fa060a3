build-clang/src/flops.o: src/flops.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
