build-clang/src/runs_csv.o: src/runs_csv.c src/internal.h \
  include/trainplan.h

src/internal.h:

include/trainplan.h:
