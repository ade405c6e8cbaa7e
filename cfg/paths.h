/*
 * cfg/paths.h: Ball-Larus path numbering of one procedure (seed 004, after
 * Ball and Larus, "Efficient path profiling", MICRO 1996).
 *
 * The procedure's CFG is made acyclic by cutting every back edge v->w
 * (a retreating edge of a depth-first walk from the entries) and adding two
 * dummy edges in its place: ENTRY->w (a path starts again at w) and v->EXIT
 * (the path ends at v).  The table edges of a jump reading a table that
 * another jump reads too are cut the same way (code on such an edge would
 * sit on a table entry, which the other jump runs as well): the dummy
 * edges of their restarts are always on the spanning tree, so that all the
 * jump's edges have the same code, the count of its one dummy to the exit,
 * and restart with 0.  Every path from ENTRY to EXIT of that graph then
 * gets a number in [0, npaths) as the sum of the values of its edges.  The
 * increments place those sums on as few edges as possible: on the chords of
 * a maximum spanning tree (by edge weight, the hottest edges in the tree
 * and so free), so that a path's increments also add up to its number.
 *
 * Parallel CFG edges (a branch whose both ways go to one block, a table
 * with repeated targets) are one path edge: a run cannot tell them apart
 * by the blocks it visits.  Unreachable blocks are on no path.
 *
 * Counting at run time: r = 0 at the procedure's entry; r += inc on each
 * edge taken; at a return or exit, count[r + inc(exit edge)]++; at a cut
 * edge v->w, count[r + back_exit_inc]++ then r = back_entry_inc.
 */
#ifndef CFG_PATHS_H
#define CFG_PATHS_H

#include "cfg/cfg.h"

/* Node numbers of the path graph: blocks are 0..nblocks-1, then these. */
#define CFG_PATH_ENTRY(nb) ((uint32_t)(nb))
#define CFG_PATH_EXIT(nb)  ((uint32_t)(nb) + 1)

typedef enum {
    CFG_PATH_EDGE_REAL,      /* a CFG edge (or several parallel ones) */
    CFG_PATH_EDGE_BACK_IN,   /* dummy ENTRY->w for the cut edge v->w */
    CFG_PATH_EDGE_BACK_OUT   /* dummy v->EXIT for the cut edge v->w */
} cfg_path_edge_kind;

typedef struct cfg_path_edge {
    uint32_t from, to;       /* path-graph nodes */
    uint8_t  kind;           /* cfg_path_edge_kind */
    bool     chord;          /* not in the spanning tree: carries inc */
    uint32_t cfg_edge;       /* the CFG edge (the back edge for dummies) */
    double   weight;         /* what chose the spanning tree */
    uint64_t val;            /* Ball-Larus value */
    int64_t  inc;            /* increment (0 on tree edges) */
} cfg_path_edge;

typedef struct cfg_paths {
    uint32_t nblocks;
    size_t nedges;
    cfg_path_edge *edges;    /* grouped by from node, val ascending */
    uint32_t *first;         /* [nblocks + 3]: edges of node n are
                                first[n] .. first[n + 1] - 1 */
    uint32_t *of_cfg;        /* [cfg nedges]: path edge of each CFG edge;
                                for a cut edge its BACK_OUT dummy; CFG_NONE
                                when on no path (unreachable) */
    uint32_t *back_in;       /* [cfg nedges]: BACK_IN dummy of a cut edge (a
                                back edge or a shared table's), else CFG_NONE */
    uint64_t npaths;         /* potential paths: ids are 0..npaths-1 */
    size_t nchords;
} cfg_paths;

/* Number the paths of f.  weight[e] for each CFG edge (how often it runs,
 * an estimate or exact) chooses the spanning tree; NULL weighs by loop
 * depth.  False with a message naming the procedure when it has more than
 * 2^63 paths, when its CFG misses edges (CFG_PF_MISSING), or out of memory. */
bool cfg_paths_build(const cfg_proc *f, const double *weight, cfg_paths *out, char *err,
                     size_t errlen);
/* The weight cfg_paths_build gives edge e when it is given none: 8 to the
 * loop depth of its source (of its target for an entry edge), at most 8^10. */
double cfg_paths_depth_weight(const cfg_proc *f, uint32_t e);
void cfg_paths_free(cfg_paths *p);

/* The path with number id, as path-graph edges from ENTRY to EXIT into
 * edges[0..cap): returns how many it has (more than cap: only cap were
 * written), 0 when id >= npaths. */
size_t cfg_path_edges(const cfg_paths *p, uint64_t id, uint32_t *edges, size_t cap);

/* A piece of a path: from node `from` to node `to` (the entry and the
 * exit included), the edges whose values add up to val, into
 * edges[0..cap); *n says how many there are (more than cap: only cap were
 * written).  False when no piece has that value.  Pieces are what a run
 * leaves of a path when it starts or stops in the middle of one. */
bool cfg_path_piece(const cfg_paths *p, uint32_t from, uint32_t to, uint64_t val, uint32_t *edges, size_t cap,
                    size_t *n);

/* The path edge from node a to node b, CFG_NONE when there is none. */
uint32_t cfg_path_edge_between(const cfg_paths *p, uint32_t a, uint32_t b);

#endif
