build-clang/tests/test_gpus.o: tests/test_gpus.c include/trainplan.h

include/trainplan.h:
