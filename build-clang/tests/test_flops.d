build-clang/tests/test_flops.o: tests/test_flops.c include/trainplan.h

include/trainplan.h:
