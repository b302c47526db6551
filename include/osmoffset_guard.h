/*
 * osmoffset - the stock guard's state, shared by its files
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * struct oo_guard and its cells, the constants that size and tune them, and
 * the functions one file of the guard calls in another (each described
 * where it is defined).  The guard's entry point, oo_guard_lfts(), is in
 * osmoffset_glue.h.  Include after osmoffset.h and osmoffset_glue.h.
 */

#ifndef OSMOFFSET_GUARD_H
#define OSMOFFSET_GUARD_H

#include <stdint.h>

/*
 * Random orders are a sample: their cell (the mean of twelve shuffles)
 * may fall this far below stock's, relative, before it counts as a loss.
 * Twelve shuffles of 72 hosts put that mean within about half a percent
 * of the mean over many: a tighter slack would make the guard's choice a
 * toss of that sample, and give up ten percent in leaf order for it (a
 * 12x6 tree, 0.570 against 0.502).  The structured orders and the LID
 * offsets count to the last digit.
 */
#define OO_GUARD_RANDOM_SLACK 0.01

/*
 * Where the stock tables stay for the base LIDs and port offsetting's
 * further LID offsets would take over (try_offsets_of_ours()), a leaf
 * order over one further offset alone may fall this far below stock's,
 * relative: stock sends each offset as its base LID, which a leaf order
 * over one offset then scores as the base LIDs' (on a degraded tree, an
 * optimum no spread of the offsets keeps for every one of them), while
 * striped traffic, which every offset carries, gains far more (a 12x6
 * tree short of a spine, LMC 2: 0.549 -> 0.618 in leaf order, 0.418 ->
 * 0.543 in random order, each offset alone 0.542 -> 0.50-0.53).  An MPI that
 * sends everything over one further offset is rare; base LIDs and
 * striped traffic still count to the last digit.
 */
#define OO_GUARD_OFFSET_SLACK 0.10

/*
 * LIDs followed per order before rounds are sampled (see oo_eval_shift);
 * the random orders share as many as OO_GUARD_POLISH_SEEDS orders.
 */
#define OO_GUARD_BUDGET 1000000ULL
/*
 * The shuffles of seeds 1-4 are the polish's: it keeps their mean from
 * dropping, and fits them.  The guard scores random orders on those of
 * seeds 5-16, which the polish does not see.
 */
#define OO_GUARD_POLISH_SEEDS 4
#define OO_GUARD_SEEDS 12
/*
 * Leaf orders whose leaves come in another order (each leaf's hosts still
 * together): a scheduler or an analyzer that groups ranks by leaf need not
 * take the leaves in the routing's order (by switch name), and tables that fit
 * that one order can lose to stock's in the others (a 12x6 tree short of
 * cables: 0.437 against 0.542).  The guard scores the leaf order, its
 * quarter and its half jobs over OO_GUARD_LEAF_SEEDS such shuffles (seeds
 * 101-103) with the option leaf_shuffles; the polish then holds those of
 * seeds 201-202 of its own.
 */
#define OO_GUARD_LEAF_SEEDS 3
#define OO_GUARD_POLISH_LEAF_SEEDS 2
/*
 * The last steps (last_step()) answer to random orders that neither they
 * nor the guard's cells hold: shuffles of seeds 1001 and up, as many as
 * OO_GUARD_CHECK_FLOWS flows make (ranks^2 per order), from
 * OO_GUARD_CHECK_MIN to OO_GUARD_CHECK_MAX of them.  Twelve shuffles of
 * a small tree do not tell a gain from a loss: on a degraded 8x4 tree
 * (32 hosts) evening the route counts raised the guard's twelve while
 * 200 others lost 0.0028 (+-0.0006); large fabrics' orders have more
 * rounds, and vary less.
 */
#define OO_GUARD_CHECK_FLOWS 262144ULL
#define OO_GUARD_CHECK_MIN 12
#define OO_GUARD_CHECK_MAX 200
#define OO_GUARD_CHECK_SEED 1001
#define OO_GUARD_MAX_CELLS (2 * (1 + 4 + 2 + 1 + 1 + 3) + 127)

/*
 * One score: a rank order (or, for random orders, the mean over several
 * seeds, which a single seed's luck does not sway) and a traffic.
 */
struct oo_cell {
	char name[40];
	const uint32_t *order[OO_GUARD_SEEDS];
	unsigned num_orders;
	/* the polish's own orders of a cell of several (num_orders > 1):
	   it holds their mean and fits none of the guard's */
	const uint32_t *sample[OO_GUARD_POLISH_SEEDS];
	unsigned num_sample;
	unsigned n;
	int traffic;		/* LID offset, or OO_EVAL_SPREAD */
	double slack;		/* relative loss that still counts as even */
	int lost_only;		/* counts the flows lost, not the efficiency */
};

struct oo_guard {
	osm_opensm_t *osm;
	osm_log_t *log;
	struct oo_glue_net gn;	/* owns the arrays below up to host_key */
	struct oo_ca_ports ca;
	osm_switch_t **sw;
	unsigned num_sw;
	struct oo_eval_net net;
	uint32_t *next;
	const uint8_t **lft;
	unsigned *lft_len;
	uint32_t *host_sw;
	uint8_t *host_port;
	uint16_t *host_lid;
	const char **host_key;	/* sort key of the host's switch */
	uint8_t *job_sw;	/* per switch: its hosts run jobs */
	int spine_cas;		/* every switch's do (option spine_cas) */
	int leaf_shuffles;	/* option leaf_shuffles: leaf_shuffled and
				   their cells, the mix in ours_reach_more() */
	unsigned num_hosts;
	unsigned num_ranks;	/* hosts of the leaves, first in leaf_order */
	uint32_t *leaf_order;
	uint32_t *random_order[OO_GUARD_SEEDS + OO_GUARD_POLISH_SEEDS];
	/* leaf_order's ranks, the leaves shuffled: the guard's, then the
	   polish's; NULL where fewer than two leaves have ranks */
	uint32_t *leaf_shuffled[OO_GUARD_LEAF_SEEDS +
				OO_GUARD_POLISH_LEAF_SEEDS];
	struct oo_cell cell[OO_GUARD_MAX_CELLS];
	unsigned num_cells;
	unsigned first_offset_cell;	/* cells of one LID offset each */
	unsigned num_base_cells;	/* cells of base-LID traffic */
	unsigned num_eff_cells;		/* cells whose efficiency counts */
	uint32_t *prof_before;	/* port profiles before any LFT stage */
	struct oo_ca_ports all_ca;	/* every CA port, SHARP nodes too */
	unsigned num_all_ca;
	int lost_ours;		/* lost_ca_lids() of lft_ours */
	int ours_by_pairs;	/* lft_ours went on by the host/LID pairs of
				   the whole pass (reach_as_ours()): weigh
				   those from then on */
	int lost_stock;		/* lost_ca_lids() of the stock tables to
				   beat, once they are in place */
	/* with st->routes_may_loop: the routes the CAs' traffic takes over
	   lft_stock close no credit loop (oo_reach_ca_routes_acyclic()), so
	   no tables that close one may go on */
	int stock_loop_free;
	uint32_t *prof_ours;
	uint32_t *prof_stock;
	uint8_t *lft_ours;
	uint8_t *lft_stock;
	const uint8_t **stock_row;	/* per switch, into lft_stock */
	const uint8_t **own_row;	/* per switch, into lft_own */
	/* per CA LID (every CA port, all_ca): lost_after_fill() of lft_stock
	   and of lft_own, once the mix needs them (kept until free_guard():
	   those tables do not change) */
	uint8_t *stock_lost;
	uint8_t *own_lost;
	/* the stock engine's own tables, over its own roots, when ours
	   and lft_stock are over roots port offsetting completed */
	uint32_t *prof_own;
	uint8_t *lft_own;
	/* the tables in place while a scoring fills them (st->fill) */
	uint8_t *lft_unfilled;
	/* the mix of ours and stock that lost a cell (keep_or_mix()), kept
	   for ours_reach_more(); NULL where none was made */
	uint8_t *lft_mix;
	struct oo_eval_score *mix_score;
	struct oo_eval_work work;
	double stock_cpu;	/* of the stock LFT stage */
};

/*
 * The tables in place and their route counts, kept to put back where a
 * try of other tables fails (take_snapshot(), put_back_snapshot()).
 */
struct oo_guard_snapshot {
	uint8_t *lft;
	uint32_t *prof;
};

/*
 * A candidate's sums over the cells: the flows lost, the efficiencies of
 * the base-LID cells (all an MPI that ignores LMC sends), of all cells.
 */
struct oo_guard_sums {
	uint64_t lost;
	double base;
	double all;
};

/*
 * Link loads the polish may hold (a byte each): the rounds of every cell,
 * the random orders' only where they fit too.  A two-level tree of 648
 * hosts (1,296 links between switches) needs 5.9 million at LMC 0, 14.2
 * million at LMC 2; the 1,130-HCA SuperPOD analog at LMC 0 32.7 million
 * (its random orders too), the HDR director analog 17.5 million (without
 * them); at LMC 2 neither fits.
 */
#define OO_GUARD_POLISH_ENTRIES (32ULL << 20)
/* Links each phase of it may load while it tries moves, about two
   seconds of CPU (the 1,130-HCA SuperPOD analog spends all three). */
#define OO_GUARD_POLISH_WORK 300000000ULL

/*
 * A variant of port offsetting's tables, as try_variant() names it in the
 * log: what it builds (the LFTs with what_new) and what it is measured
 * against (those with what_old).
 */
struct oo_variant {
	const char *scores;	/* log_scores() name */
	const char *what_new;
	const char *what_old;
};

/* What keep_or_mix() settles on. */
#define OO_GUARD_NEITHER 0
#define OO_GUARD_MIX 1		/* a mix of them and stock, in place */
#define OO_GUARD_KEEP 2		/* the tables of lft_ours */

/* The last steps on the tables that stay (see last_step()). */
enum last_step_kind { LAST_EVEN, LAST_CABLES, LAST_WAYS, LAST_KICKS };

/* osm_ucast_offset_guard_score.c: orders, cells, scores, tables in place */
uint32_t *shuffled_ranks(const struct oo_guard *g, uint64_t seed);
int make_orders(struct oo_guard *g);
void make_cells(struct oo_guard *g);
size_t total_ports(const struct oo_guard *g);
void save_profiles(const struct oo_guard *g, uint32_t *to);
void restore_profiles(const struct oo_guard *g, const uint32_t *from);
size_t total_lft(const struct oo_guard *g);
void copy_lfts(const struct oo_guard *g, uint8_t *buf, int out);
int take_snapshot(const struct oo_guard *g,
		  struct oo_guard_snapshot *s);
void put_back_snapshot(const struct oo_guard *g,
		       const struct oo_guard_snapshot *s);
void free_snapshot(struct oo_guard_snapshot *s);
void score_tables(struct oo_guard *g, const struct oo_guard_stages *st,
		  struct oo_eval_score *score);
int lost_after_fill(struct oo_guard *g,
		    const struct oo_guard_stages *st,
		    const struct oo_eval_net *net, unsigned num_hosts,
		    uint8_t *lost, struct oo_eval_score *score);
struct oo_eval_net all_ca_net(const struct oo_guard *g);
int lost_ca_lids_scored(struct oo_guard *g,
			const struct oo_guard_stages *st,
			struct oo_eval_score *score);
int lost_ca_lids(struct oo_guard *g, const struct oo_guard_stages *st);
int lost_after_stage(struct oo_guard *g,
		     const struct oo_guard_stages *st,
		     oo_lft_builder fill);
int lost_after_whole(struct oo_guard *g,
		     const struct oo_guard_stages *st);
int lost_after_whole_pass(struct oo_guard *g,
			  const struct oo_guard_stages *st,
			  uint8_t *buf, int lost);
int lost_in_place(struct oo_guard *g, const struct oo_guard_stages *st);
int64_t lost_pairs_after_pass(struct oo_guard *g,
			      const struct oo_guard_stages *st);
int64_t lost_pairs_of(struct oo_guard *g, const struct oo_guard_stages *st,
		      const uint8_t *buf, const uint32_t *prof);
int pairs_no_more(struct oo_guard *g, const struct oo_guard_stages *st,
		  const uint8_t *buf, const uint32_t *prof, int64_t *mine,
		  int64_t *theirs);
void log_scores(const struct oo_guard *g, const char *who,
		const struct oo_eval_score *score);
int cell_lost(const struct oo_guard *g, unsigned c,
	      const struct oo_eval_score *a,
	      const struct oo_eval_score *stock);
int first_loss(const struct oo_guard *g,
	       const struct oo_eval_score *ours,
	       const struct oo_eval_score *stock);
int first_drop(const struct oo_guard *g,
	       const struct oo_eval_score *after,
	       const struct oo_eval_score *before);
void count_profiles(const struct oo_guard *g);
int closes_new_loop(const struct oo_guard *g);
void sum_scores(const struct oo_guard *g,
		const struct oo_eval_score *score,
		struct oo_guard_sums *sum);
int sums_better(const struct oo_guard_sums *a,
		const struct oo_guard_sums *b);
int first_new_loss(const struct oo_guard *g,
		   const struct oo_eval_score *after,
		   const struct oo_eval_score *cur,
		   const struct oo_eval_score *stock);

/* osm_ucast_offset_guard_mix.c: mixes with the stock tables */
const uint8_t **index_rows(const struct oo_guard *g,
			   const uint8_t *buf);
void log_loss(const struct oo_guard *g, const char *what,
	      const struct oo_eval_score *a,
	      const struct oo_eval_score *stock);
int keep_or_mix(struct oo_guard *g, const struct oo_guard_stages *st,
		const char *what, const char *mix_what,
		const struct oo_eval_score *ours,
		const struct oo_eval_score *stock,
		struct oo_eval_score *mixed);
int build_scored(struct oo_guard *g, const struct oo_guard_stages *st,
		 unsigned lane_share, unsigned flags, const char *who,
		 struct oo_eval_score *score);
int try_shared(struct oo_guard *g, const struct oo_guard_stages *st,
	       const struct oo_eval_score *stock,
	       struct oo_eval_score *shared,
	       struct oo_eval_score *mixed);

/* osm_ucast_offset_guard_variants.c: variants of port offsetting's tables */
int beats_ours(const struct oo_guard *g,
	       const struct oo_eval_score *mine,
	       const struct oo_eval_score *ours,
	       const struct oo_eval_score *stock,
	       struct oo_guard_sums *sum_mine,
	       struct oo_guard_sums *sum_ours);
int keep_if_better(struct oo_guard *g, const struct oo_guard_stages *st,
		   const struct oo_variant *v,
		   struct oo_eval_score *ours,
		   const struct oo_eval_score *stock,
		   struct oo_eval_score *scratch);
int try_polish_base_hops(struct oo_guard *g,
			 const struct oo_guard_stages *st,
			 const struct oo_eval_score *kept,
			 int kept_lost,
			 const struct oo_eval_score *stock,
			 struct oo_eval_score *scratch);
int try_offsets_of_ours(struct oo_guard *g,
			const struct oo_guard_stages *st,
			const struct oo_eval_score *kept,
			int kept_lost,
			const struct oo_eval_score *stock,
			struct oo_eval_score *scratch);
void try_variants(struct oo_guard *g, const struct oo_guard_stages *st,
		  struct oo_eval_score *ours,
		  struct oo_eval_score *scratch);

/* osm_ucast_offset_guard_polish.c: the polish and the last steps */
unsigned polish_in_place(struct oo_guard *g,
			 const struct oo_guard_stages *st,
			 const char *whose, const uint8_t *was,
			 const double *lead,
			 const struct oo_eval_score *cur,
			 const struct oo_eval_score *stock, int lost,
			 uint64_t part_work, int offsets_only);
void polish_leads(const struct oo_guard *g,
		  const struct oo_eval_score *ours,
		  const struct oo_eval_score *stock, double *lead);
void try_polish(struct oo_guard *g, const struct oo_guard_stages *st,
		struct oo_eval_score *ours,
		const struct oo_eval_score *stock,
		struct oo_eval_score *scratch);
int try_polish_stock(struct oo_guard *g,
		     const struct oo_guard_stages *st,
		     const uint8_t *was, const uint32_t *prof,
		     const struct oo_eval_score *stock,
		     struct oo_eval_score *scratch, int *lost);
void last_step(struct oo_guard *g, const struct oo_guard_stages *st,
	       const struct oo_eval_score *stock,
	       enum last_step_kind kind);

#endif /* OSMOFFSET_GUARD_H */
