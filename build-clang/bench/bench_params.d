build-clang/bench/bench_params.o: bench/bench_params.c \
  include/trainplan.h

include/trainplan.h:
