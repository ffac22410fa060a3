build-clang/tests/test_memory.o: tests/test_memory.c include/trainplan.h

include/trainplan.h:
