# zstd command-line tool (programs/*.c plus the library sources), as
# upstream's `make -C programs zstd-release` would build it with no zlib,
# lzma or lz4: multithreaded, legacy formats v0.5-v0.7 readable, no
# backtraces, no x86-64 assembly (not compiled for Alpha).  -O2, not
# upstream's -O3.
include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

ZSTD_SRCS := $(patsubst $(SRC)/%,%,$(sort \
    $(wildcard $(SRC)/lib/common/*.c) $(wildcard $(SRC)/lib/compress/*.c) \
    $(wildcard $(SRC)/lib/decompress/*.c) $(wildcard $(SRC)/lib/dictBuilder/*.c) \
    $(wildcard $(SRC)/lib/legacy/zstd_v0[5-7].c) $(wildcard $(SRC)/programs/*.c)))
ZSTD_OBJS := $(call obj_of,$(ZSTD_SRCS))
DEFS      := -DXXH_NAMESPACE=ZSTD_ -DDEBUGLEVEL=0 -DZSTD_LEGACY_SUPPORT=5 \
             -DZSTD_MULTITHREAD -DBACKTRACE_ENABLE=0

.PHONY: dynamic static
dynamic: $(BIN)/zstd
static: $(BIN)/zstd-static

$(OBJ)/%.o: $(SRC)/%.c $(RECIPE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEFS) -pthread -c $< -o $@

$(BIN)/zstd: $(ZSTD_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -pthread -o $@.tmp $^ && mv -f $@.tmp $@

$(BIN)/zstd-static: $(ZSTD_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -static -pthread -o $@.tmp $^ && mv -f $@.tmp $@

# datagen for the host: the test-data generator zstd's tests/playTests.sh
# runs (it only writes files, so it need not run under qemu).
HOST_CC ?= cc
HOSTBIN ?= $(BIN)/../host
.PHONY: host-datagen
host-datagen: $(HOSTBIN)/datagen
$(HOSTBIN)/datagen: $(SRC)/programs/datagen.c $(SRC)/tests/datagencli.c
	@mkdir -p $(dir $@)
	$(HOST_CC) -O2 -I$(SRC)/lib -I$(SRC)/lib/common -I$(SRC)/programs -o $@ $^
