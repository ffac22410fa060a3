build-clang/src/calib.o: src/calib.c src/internal.h include/trainplan.h

src/internal.h:

include/trainplan.h:
