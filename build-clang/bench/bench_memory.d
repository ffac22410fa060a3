build-clang/bench/bench_memory.o: bench/bench_memory.c \
  include/trainplan.h

include/trainplan.h:
