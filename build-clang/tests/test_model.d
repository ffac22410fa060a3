build-clang/tests/test_model.o: tests/test_model.c include/trainplan.h

include/trainplan.h:
