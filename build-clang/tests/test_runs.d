build-clang/tests/test_runs.o: tests/test_runs.c include/trainplan.h

include/trainplan.h:
