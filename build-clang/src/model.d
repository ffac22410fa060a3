build-clang/src/model.o: src/model.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
