build-clang/tests/test_params.o: tests/test_params.c include/trainplan.h

include/trainplan.h:
