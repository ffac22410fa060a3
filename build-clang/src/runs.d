build-clang/src/runs.o: src/runs.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
