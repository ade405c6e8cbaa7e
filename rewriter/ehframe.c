/* placeholder: unwind tables are not rebuilt yet */
#include "rewriter/internal.h"
bool rw_eh_analyse(rw_ctx *cx) { (void)cx; return true; }
bool rw_eh_build(rw_ctx *cx) { (void)cx; return true; }
size_t rw_eh_bound(const rw_ctx *cx) { (void)cx; return 0; }
