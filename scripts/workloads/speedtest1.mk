# sqlite's speedtest1 benchmark (test/speedtest1.c) linked with the sqlite3.c
# amalgamation.  The amalgamation is generated for the host first (it needs
# the host's tclsh and helper programs); AMALG names the directory holding
# the generated sqlite3.c and sqlite3.h.  Flags: the amalgamation's defaults
# (SQLITE_THREADSAFE=1) plus upstream's speedtest1 option
# SQLITE_OS_KV_OPTIONAL, and SQLITE_OMIT_LOAD_EXTENSION so that neither build
# needs dlopen.
include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

ifndef AMALG
$(error AMALG (the directory with the generated sqlite3.c) is not set)
endif

DEFS := -DSQLITE_THREADSAFE=1 -DSQLITE_OS_KV_OPTIONAL -DSQLITE_OMIT_LOAD_EXTENSION
OBJS := $(OBJ)/speedtest1.o $(OBJ)/sqlite3.o

.PHONY: dynamic static
dynamic: $(BIN)/speedtest1
static: $(BIN)/speedtest1-static

$(OBJ)/sqlite3.o: $(AMALG)/sqlite3.c $(AMALG)/sqlite3.h $(RECIPE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEFS) -c $< -o $@

$(OBJ)/speedtest1.o: $(SRC)/test/speedtest1.c $(AMALG)/sqlite3.h $(RECIPE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEFS) -I$(AMALG) -c $< -o $@

$(BIN)/speedtest1: $(OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@.tmp $^ -lpthread -lm && mv -f $@.tmp $@

$(BIN)/speedtest1-static: $(OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -static -o $@.tmp $^ -lpthread -lm && mv -f $@.tmp $@
