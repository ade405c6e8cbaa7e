# lua 5.4 interpreter (src/lua.c plus the whole library; luac is not built).
# As upstream's "linux-noreadline" target: LUA_COMPAT_5_3, LUA_USE_LINUX
# (POSIX + dlopen), -Wl,-E so C modules could bind to the interpreter.  The
# static build takes loadlib.c without dlopen (LUA_USE_POSIX only): dlopen
# from a static glibc program is not useful.  Debian's patches make luaconf.h
# include lua5.4-deb-multiarch.h (written by debian/rules): we write the same
# header for alpha-linux-gnu.
include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

LUA_SRCS := $(filter-out src/lua.c src/luac.c,$(patsubst $(SRC)/%,%,$(wildcard $(SRC)/src/*.c)))
LIB_OBJS := $(call obj_of,$(filter-out src/loadlib.c,$(LUA_SRCS)))
MAIN_OBJ := $(OBJ)/src/lua.o
# A fixed string-hash seed: lua mixes the time, a stack address and the
# address of lua_newstate into it, so every code layout would otherwise run
# with its own hash tables and measurements of layouts would differ by the
# seed, not by the layout (docs/workloads.md).
DEFS     := -DLUA_COMPAT_5_3 -I$(OBJ)/include '-Dluai_makeseed(L)=0x2545f491u'
MULTIARCH := $(OBJ)/include/lua5.4-deb-multiarch.h

.PHONY: dynamic static
dynamic: $(BIN)/lua
static: $(BIN)/lua-static

$(MULTIARCH):
	@mkdir -p $(dir $@)
	printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "alpha-linux-gnu"\n#endif\n' >$@

$(OBJ)/%.o: $(SRC)/%.c $(RECIPE) | $(MULTIARCH)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEFS) -DLUA_USE_LINUX -c $< -o $@

$(OBJ)/src/loadlib-static.o: $(SRC)/src/loadlib.c $(RECIPE) | $(MULTIARCH)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEFS) -DLUA_USE_POSIX -c $< -o $@

$(BIN)/lua: $(MAIN_OBJ) $(LIB_OBJS) $(OBJ)/src/loadlib.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Wl,-E -o $@.tmp $^ -ldl -lm && mv -f $@.tmp $@

$(BIN)/lua-static: $(MAIN_OBJ) $(LIB_OBJS) $(OBJ)/src/loadlib-static.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -static -o $@.tmp $^ -lm && mv -f $@.tmp $@
