/*
 * osmoffset - the stock guard's mixes with the stock tables
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Where port offsetting's tables lose a cell to the stock ones, the flows
 * they lose (the LIDs they leave without a route, then the job blocks and
 * LID offsets that lost) take the stock routes, where that mix scores at
 * least as well everywhere; and ours built again with their lanes shared.
 */

#if HAVE_CONFIG_H
#  include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <opensm/osm_config.h>
#include <complib/cl_qmap.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_port.h>
#include <opensm/osm_node.h>
#include <opensm/osm_log.h>

#include "osmoffset.h"
#include "osmoffset_glue.h"
#include "osmoffset_guard.h"

/*
 * Which LIDs of a losing block's flows go stock: a base cell, the base
 * LIDs; a striped one, first the further LID offsets only (the base LIDs,
 * all an MPI that ignores LMC uses, keep ours), then, should it still
 * lose, the base LIDs too.  tried holds what the cell marked before.
 */
static uint8_t kinds_to_mix(const struct oo_cell *c, uint8_t tried)
{
	if (c->traffic != OO_EVAL_SPREAD)
		return OO_EVAL_MARK_BASE;
	if (!(tried & OO_EVAL_MARK_MORE))
		return OO_EVAL_MARK_MORE;
	return OO_EVAL_MARK_BASE | OO_EVAL_MARK_MORE;
}

/*
 * Where ours lose a job block, the block's flows take the stock routes:
 * every switch that a flow among the block's hosts visits in the stock
 * tables takes the stock entries toward the flow's destination switch,
 * for the kinds of LID (base, further offsets) kinds_to_mix() names.
 * The block then scores as stock; each entry of the mix is one of the two
 * engines' equal-cost up/down choices over the same hop tables, so it is
 * as loop- and deadlock-free as both.  first and last bound the cells
 * looked at; tried[c] collects the kinds cell c has marked.  Returns how
 * many cells lost.
 */
static unsigned mark_losing_blocks(const struct oo_guard *g,
				   const struct oo_eval_net *stock_net,
				   const struct oo_eval_score *cur,
				   const struct oo_eval_score *stock,
				   unsigned first, unsigned last,
				   uint8_t *tried, uint8_t *mark)
{
	unsigned c, lost = 0;

	for (c = first; c < last && c < g->num_cells; c++) {
		uint8_t kinds;

		if (!cell_lost(g, c, &cur[c], &stock[c]))
			continue;
		kinds = kinds_to_mix(&g->cell[c], tried[c]);
		oo_eval_mark_paths(stock_net, g->cell[c].order[0],
				   g->cell[c].n, kinds, mark);
		tried[c] |= kinds;
		lost++;
	}
	return lost;
}

/* What a LID offset takes in a mix (offset[o] of try_mix()). */
#define OO_MIX_OURS 0		/* port offsetting's entries */
#define OO_MIX_STOCK 1		/* the stock entries (lft_stock) */
#define OO_MIX_OWN 2		/* the stock engine's own (lft_own) */

/* A CA LID ours lose that no table looked at so far routes. */
#define OO_MIX_LOST 0xff

/*
 * Where lost (OO_MIX_LOST) has LIDs that the tables in buf route after
 * the reach pass (net: every CA port), they take what.  The tables' own
 * marks are counted once into *theirs (leaving the tables in place
 * undefined then) and kept.  Returns -1 with no memory, else 0.
 */
static int mark_routed_by(struct oo_guard *g, const struct oo_guard_stages *st,
			  const struct oo_eval_net *net, uint8_t *buf,
			  uint8_t **theirs, uint8_t what, uint8_t *lost)
{
	size_t n = (size_t)g->num_all_ca * g->net.lids_per_port, i;

	if (!*theirs) {
		*theirs = calloc(n + 1, 1);
		if (!*theirs)
			return -1;
		copy_lfts(g, buf, 0);
		if (lost_after_fill(g, st, net, g->num_all_ca, *theirs,
				    NULL) < 0) {
			free(*theirs);
			*theirs = NULL;
			return -1;
		}
	}
	for (i = 0; i < n; i++)
		if (lost[i] == OO_MIX_LOST && !(*theirs)[i])
			lost[i] = what;
	return 0;
}

/*
 * The CA LIDs (SHARP nodes' among them) that the tables in place (ours,
 * or a mix) leave without a route after the reach pass and the stock
 * tables do not, and that dest does not mark yet: every switch takes the
 * stock entry toward them (dest[c * 2^LMC + o] over every CA port:
 * OO_MIX_STOCK from lft_stock, else OO_MIX_OWN from the stock engine's
 * own tables where they route them).  A management HCA on a spine is
 * often one: the pass cannot reach it from ours without closing a credit
 * loop, but can from the stock routes, and the other way round for
 * another HCA.  Leaves the tables in place undefined.  Returns how many
 * it marks (0 too with no memory).
 */
static unsigned mark_lost_destinations(struct oo_guard *g,
				       const struct oo_guard_stages *st,
				       uint8_t *dest)
{
	size_t n = (size_t)g->num_all_ca * g->net.lids_per_port, i;
	struct oo_eval_net net = all_ca_net(g);
	uint8_t *lost = calloc(n + 1, 1);
	unsigned found = 0;

	if (!lost ||
	    lost_after_fill(g, st, &net, g->num_all_ca, lost, NULL) <= 0)
		goto out;
	for (i = 0; i < n; i++)
		lost[i] = lost[i] && dest[i] == OO_MIX_OURS ? OO_MIX_LOST :
		    OO_MIX_OURS;
	if (mark_routed_by(g, st, &net, g->lft_stock, &g->stock_lost,
			   OO_MIX_STOCK, lost) ||
	    (g->lft_own &&
	     mark_routed_by(g, st, &net, g->lft_own, &g->own_lost,
			    OO_MIX_OWN, lost)))
		goto out;
	for (i = 0; i < n; i++)
		if (lost[i] != OO_MIX_LOST && lost[i] != OO_MIX_OURS) {
			dest[i] = lost[i];
			found++;
		}
out:
	free(lost);
	return found;
}

/*
 * Where the mix still leaves CA LIDs without a route after the whole
 * reach pass and the stock tables to beat leave none: every LID of every
 * SHARP aggregation node takes the entries of the tables to beat
 * (OO_MIX_OWN where those are the stock engine's own, else OO_MIX_STOCK),
 * where those route it after the reach pass; the hosts' LIDs keep what
 * they have.  The cells score host traffic only, so the mix scores as
 * before, and the routes toward SHARP nodes are stock's: on two directors
 * joined through their edges (shape 76 of bench-shapes), ours send one
 * line's SHARP traffic to the other line over a fabric ASIC, and the
 * turns the pass needs at an edge toward the other director's SHARP nodes
 * then close a credit loop with the turns back.  Leaves the tables in
 * place undefined.  Returns how many LIDs it marks that were ours (0
 * too with no memory).
 */
static unsigned mark_sharp_destinations(struct oo_guard *g,
					const struct oo_guard_stages *st,
					uint8_t *dest)
{
	size_t n = (size_t)g->num_all_ca * g->net.lids_per_port, i;
	unsigned lids = g->net.lids_per_port, found = 0, c;
	struct oo_eval_net net = all_ca_net(g);
	uint8_t what = g->lft_own ? OO_MIX_OWN : OO_MIX_STOCK;
	uint8_t *buf = g->lft_own ? g->lft_own : g->lft_stock;
	uint8_t **theirs = g->lft_own ? &g->own_lost : &g->stock_lost;
	uint8_t *routed = calloc(n + 1, 1);
	int ret;

	if (!routed)
		return 0;
	for (c = 0; c < g->num_all_ca; c++)
		if (oo_is_aggregation_node(g->all_ca.desc[c]))
			memset(routed + (size_t)c * lids, OO_MIX_LOST, lids);
	ret = mark_routed_by(g, st, &net, buf, theirs, what, routed);
	for (i = 0; !ret && i < n; i++)
		if (routed[i] == what) {
			found += dest[i] == OO_MIX_OURS;
			dest[i] = what;
		}
	free(routed);
	return found;
}

/* lost_in_place() has not counted the mix in place. */
#define OO_MIX_UNCOUNTED (-2)

/*
 * Ours, with the marked entries from stock: those toward the switches
 * marked in each switch's row of mark (base LIDs where the mark has
 * OO_EVAL_MARK_BASE, further offsets where it has OO_EVAL_MARK_MORE),
 * and every entry of a LID offset marked OO_MIX_STOCK in offset.  A LID
 * offset marked OO_MIX_OWN takes the entries of the stock engine's own
 * tables, over its own roots (own_row).  Then every entry toward a CA
 * LID marked in dest (mark_lost_destinations()) takes what dest says,
 * unless its offset takes the stock engine's own.
 */
static void mix_lfts(const struct oo_guard *g, const uint8_t *mark,
		     const uint8_t *offset, const uint8_t *dest)
{
	unsigned lids = g->net.lids_per_port, c, h, o, s;

	copy_lfts(g, g->lft_ours, 0);
	for (s = 0; s < g->num_sw; s++) {
		const uint8_t *row = mark + (size_t)s * g->num_sw;

		for (h = 0; h < g->num_hosts; h++) {
			uint8_t m = row[g->host_sw[h]];

			for (o = 0; o < lids; o++) {
				unsigned lid = g->host_lid[h] + o;
				uint8_t kind = o ? OO_EVAL_MARK_MORE :
				    OO_EVAL_MARK_BASE;

				if (lid >= g->lft_len[s])
					continue;
				if (offset[o] == OO_MIX_OWN)
					g->sw[s]->new_lft[lid] =
					    g->own_row[s][lid];
				else if ((m & kind) || offset[o])
					g->sw[s]->new_lft[lid] =
					    g->stock_row[s][lid];
			}
		}
		for (c = 0; c < g->num_all_ca; c++)
			for (o = 0; o < lids; o++) {
				unsigned lid = g->all_ca.lid[c] + o;
				uint8_t d = dest[(size_t)c * lids + o];

				if (!d || offset[o] == OO_MIX_OWN ||
				    lid >= g->lft_len[s])
					continue;
				g->sw[s]->new_lft[lid] = d == OO_MIX_OWN ?
				    g->own_row[s][lid] : g->stock_row[s][lid];
			}
	}
}

/* Per switch, its row in buf, laid out as copy_lfts() does; or NULL. */
const uint8_t **index_rows(const struct oo_guard *g,
			   const uint8_t *buf)
{
	const uint8_t **row = calloc(g->num_sw + 1, sizeof(*row));
	unsigned s;

	if (!row)
		return NULL;
	for (s = 0; s < g->num_sw; s++) {
		row[s] = buf;
		buf += g->lft_len[s];
	}
	return row;
}

/*
 * The stock tables as a net of their own, and the rows of the stock
 * engine's own tables where there are such (indexed once, kept until
 * free_guard()).
 */
static int index_stock(struct oo_guard *g, struct oo_eval_net *net)
{
	if (!g->stock_row && !(g->stock_row = index_rows(g, g->lft_stock)))
		return -1;
	if (g->lft_own && !g->own_row &&
	    !(g->own_row = index_rows(g, g->lft_own)))
		return -1;
	*net = g->net;
	net->lft = g->stock_row;
	return 0;
}

/*
 * The LID offsets whose own cells ours lose: first all their entries go
 * stock.  Where the cell loses still and the scores to beat are the stock
 * engine's own tables over its own roots (own_row; the stock entries of
 * the mix are over the roots port offsetting completed), the offset takes
 * those own entries: its cell then scores exactly as theirs.  Entries of
 * two up/down rankings can close a credit loop together; try_mix() keeps
 * such a mix only where the whole tables are checked free of one.
 * Returns how many offsets changed.
 */
static unsigned mark_losing_offsets(const struct oo_guard *g,
				    const struct oo_eval_score *cur,
				    const struct oo_eval_score *stock,
				    uint8_t *offset)
{
	uint8_t top = g->own_row ? OO_MIX_OWN : OO_MIX_STOCK;
	unsigned c, lost = 0;

	for (c = g->first_offset_cell; c < g->num_cells; c++) {
		uint8_t *o = &offset[g->cell[c].traffic];

		if (*o < top && cell_lost(g, c, &cur[c], &stock[c])) {
			(*o)++;
			lost++;
		}
	}
	return lost;
}

static unsigned count_offsets(const uint8_t *offset, unsigned lids,
			      uint8_t what)
{
	unsigned o, n = 0;

	for (o = 1; o < lids; o++)
		n += offset[o] == what;
	return n;
}

/*
 * Whether tables (what, in the log) leave lost CA LIDs without a route
 * from some CA after the reach pass (SHARP nodes among them:
 * lost_ca_lids(), -1 where it could not count) where the stock tables to
 * beat leave none: they lose then, whatever they score, unless the reach
 * pass may put what it cannot fill on lanes above VL0.  Where the stock
 * tables leave some too, neither is whole, and the scores decide: on the
 * SuperPOD analog with SHARP nodes ours leave 5,973 CA/LID pairs before
 * the reach pass's retry round (2,463 after it), stock's 5,466, and
 * stock's score less than half of ours (reach_vls routes them all).
 */
static int loses_ca_lids(const struct oo_guard *g,
			 const struct oo_guard_stages *st, const char *what,
			 int lost)
{
	if (st->lanes_beyond_vl0 || g->lost_stock || lost <= 0)
		return 0;
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s leave %d "
		"CA LIDs (SHARP nodes among them) without a route from some "
		"CA after the reach pass, the stock tables %d\n", what, lost,
		g->lost_stock);
	return 1;
}

/*
 * The CA LIDs of dest that take the stock engine's own entries in the
 * mix: those marked so whose LID offset takes no other of its own.
 */
static unsigned count_own_dests(const struct oo_guard *g, const uint8_t *dest,
				const uint8_t *offset)
{
	unsigned lids = g->net.lids_per_port, c, o, n = 0;

	for (c = 0; c < g->num_all_ca; c++)
		for (o = 0; o < lids; o++)
			n += dest[(size_t)c * lids + o] == OO_MIX_OWN &&
			    offset[o] != OO_MIX_OWN;
	return n;
}

/* Rounds of try_mix(): quarters, halves and offsets once per round. */
#define OO_GUARD_MIX_ROUNDS 3

/*
 * Try the mix of ours and stock: first the host LIDs that ours leave
 * without a route and stock's do not, then the losing quarter-job blocks,
 * then the halves, then the LID offsets whose own traffic loses, and
 * again while some cell still loses (at most OO_GUARD_MIX_ROUNDS times).
 * The entries come from lft_stock; stock holds the scores to beat.
 * Returns 1 with the mix in place when it scores at least as well in
 * every cell, 0 otherwise (the caller puts the stock tables back).
 */
static int try_mix(struct oo_guard *g, const struct oo_guard_stages *st,
		   const struct oo_eval_score *ours,
		   const struct oo_eval_score *stock,
		   struct oo_eval_score *mixed)
{
	unsigned blocks = g->net.lids_per_port > 1 ? 2 : 1;
	unsigned quarters = g->num_ranks >= 8 ? 4 * blocks : 0;
	unsigned halves = g->num_ranks >= 4 ? 2 * blocks : 0;
	unsigned first = blocks, lost = 0, dests, own, own_dests, step;
	unsigned sharp = 0;
	int ca_lost = OO_MIX_UNCOUNTED;	/* lost_in_place() */
	char more[64] = "";
	struct oo_eval_net stock_net;
	uint8_t offset[1U << 7] = { 0 };	/* LMC <= 7 */
	uint8_t tried[OO_GUARD_MAX_CELLS] = { 0 };
	uint8_t *mark, *dest;
	int ok = 0;

	mark = calloc((size_t)g->num_sw * g->num_sw + 1, 1);
	dest = calloc((size_t)g->num_all_ca * g->net.lids_per_port + 1, 1);
	if (!mark || !dest || index_stock(g, &stock_net)) {
		free(mark);
		free(dest);
		return 0;
	}
	memcpy(mixed, ours, sizeof(*mixed) * g->num_cells);
	/* the stock routes toward one CA LID can keep the reach pass from
	   another: the mix is looked at again (at most
	   OO_GUARD_MIX_ROUNDS times) */
	for (dests = 0, step = 0; step < OO_GUARD_MIX_ROUNDS; step++) {
		unsigned n;

		mix_lfts(g, mark, offset, dest);
		n = mark_lost_destinations(g, st, dest);
		if (!n)
			break;
		dests += n;
	}
	mix_lfts(g, mark, offset, dest);
	/* where it still leaves CA LIDs without a route and the stock
	   tables to beat leave none, the SHARP nodes' LIDs go stock too */
	if (dests && !st->lanes_beyond_vl0 && !g->lost_stock &&
	    (ca_lost = lost_in_place(g, st)) > 0) {
		sharp = mark_sharp_destinations(g, st, dest);
		dests += sharp;
		mix_lfts(g, mark, offset, dest);
		ca_lost = OO_MIX_UNCOUNTED;
	}
	if (dests)
		score_tables(g, st, mixed);
	/* a mix can lose a cell ours won (a block's flows meet the stock
	   routes of another): another round takes that one too */
	for (step = 0; step < 3 * OO_GUARD_MIX_ROUNDS; step++) {
		unsigned n;

		if (!(step % 3) && first_loss(g, mixed, stock) < 0)
			break;

		if (step % 3 == 0)
			n = mark_losing_blocks(g, &stock_net, mixed, stock,
					       first, first + quarters, tried,
					       mark);
		else if (step % 3 == 1)
			n = mark_losing_blocks(g, &stock_net, mixed, stock,
					       first + quarters,
					       first + quarters + halves,
					       tried, mark);
		else
			n = mark_losing_offsets(g, mixed, stock, offset);
		if (!n)
			continue;
		lost += n;
		mix_lfts(g, mark, offset, dest);
		score_tables(g, st, mixed);
		ca_lost = OO_MIX_UNCOUNTED;
	}
	own = count_offsets(offset, g->net.lids_per_port, OO_MIX_OWN);
	own_dests = count_own_dests(g, dest, offset);
	ok = (dests || lost) && first_loss(g, mixed, stock) < 0;
	if (ok && ca_lost == OO_MIX_UNCOUNTED)
		ca_lost = lost_in_place(g, st);
	ok = ok && !loses_ca_lids(g, st, "a mix of both would", ca_lost);
	if (ok && (own || own_dests) && oo_reach_tables_acyclic(g->osm) != 1) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: a mix "
			"where %u LID offsets and %u CA LIDs take updn's own "
			"routes would score at least as well, but its tables "
			"have a credit loop (or could not be checked)\n", own,
			own_dests);
		ok = 0;
	}
	if (ok && closes_new_loop(g)) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: a mix "
			"of port offsetting's and the stock routes would score "
			"at least as well, but it closes a credit loop among "
			"the routes the CAs' traffic takes, where the stock "
			"tables close none\n");
		ok = 0;
	}
	if (ok) {
		count_profiles(g);
		log_scores(g, "mix", mixed);
		if (sharp) {
			OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock "
				"guard: the mix of the lost CA LIDs alone "
				"still lost some; %u more LIDs of SHARP "
				"aggregation nodes take the routes of the "
				"stock tables to beat\n", sharp);
			snprintf(more, sizeof(more), " and %u more LIDs of "
				 "SHARP nodes", sharp);
		}
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"routes toward %u CA LIDs port offsetting left "
			"without a route%s, and the flows of %u job blocks or "
			"LID offsets where it lost, take the stock routes (%u "
			"LID offsets and %u of those CA LIDs updn's own, over "
			"its own roots; the tables have no credit loop); the "
			"rest keep port offsetting's\n", dests - sharp, more,
			lost, own, own_dests);
	}
	free(mark);
	free(dest);
	return ok;
}

void log_loss(const struct oo_guard *g, const char *what,
	      const struct oo_eval_score *a,
	      const struct oo_eval_score *stock)
{
	int c = first_loss(g, a, stock);

	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s score "
		"lower than the stock ones in %s (%.4f, %" PRIu64 " flows "
		"lost, against %.4f, %" PRIu64 ")\n", what, g->cell[c].name,
		a[c].eff, a[c].lost, stock[c].eff, stock[c].lost);
}

/*
 * With the option leaf_shuffles, the first mix of ours and stock that
 * lost a cell (in place, scored in mixed; ours scored in ours), kept with
 * its scores for ours_reach_more(): it may reach more CA LIDs than the
 * tables that won.  Nothing where it mixed nothing (it scores as ours) or
 * without memory.
 */
static void keep_mix(struct oo_guard *g, const struct oo_eval_score *ours,
		     const struct oo_eval_score *mixed)
{
	if (!g->leaf_shuffles || g->lft_mix ||
	    !memcmp(ours, mixed, sizeof(*ours) * g->num_cells))
		return;
	g->lft_mix = malloc(total_lft(g) + 1);
	g->mix_score = malloc(sizeof(*mixed) * (g->num_cells + 1));
	if (!g->lft_mix || !g->mix_score) {
		free(g->lft_mix);
		free(g->mix_score);
		g->lft_mix = NULL;
		g->mix_score = NULL;
		return;
	}
	copy_lfts(g, g->lft_mix, 1);
	memcpy(g->mix_score, mixed, sizeof(*mixed) * g->num_cells);
}

/*
 * Port offsetting's tables (lft_ours), scored in ours and named what in
 * the log: kept where they score at least as well as stock in every
 * cell, else a mix (try_mix(), mix_what naming it in the log should it
 * lose too), else neither (the tables in place are then undefined).
 */
int keep_or_mix(struct oo_guard *g, const struct oo_guard_stages *st,
		const char *what, const char *mix_what,
		const struct oo_eval_score *ours,
		const struct oo_eval_score *stock,
		struct oo_eval_score *mixed)
{
	int lost = first_loss(g, ours, stock) >= 0;

	if (!lost &&
	    !loses_ca_lids(g, st, what,
			   lost_after_whole_pass(g, st, g->lft_ours,
						 g->lost_ours))) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s "
			"score at least as well as the stock ones in all %u "
			"cells; they stay\n", what, g->num_cells);
		return OO_GUARD_KEEP;
	}
	if (lost)
		log_loss(g, what, ours, stock);
	if (try_mix(g, st, ours, stock, mixed))
		return OO_GUARD_MIX;
	keep_mix(g, ours, mixed);
	if (first_loss(g, mixed, stock) >= 0)
		log_loss(g, mix_what, mixed, stock);
	return OO_GUARD_NEITHER;
}

/*
 * Port offsetting's LFTs again (st->ours_with) with lane_share and flags,
 * from the profiles before any LFT stage, scored into score and logged
 * as who.  Returns as oo_build_offset_lfts() does; the tables in place
 * are scored only on 0.
 */
int build_scored(struct oo_guard *g, const struct oo_guard_stages *st,
		 unsigned lane_share, unsigned flags, const char *who,
		 struct oo_eval_score *score)
{
	int ret;

	restore_profiles(g, g->prof_before);
	ret = st->ours_with(st->ctx, lane_share, flags);
	if (!ret) {
		score_tables(g, st, score);
		log_scores(g, who, score);
	}
	return ret;
}

/*
 * The lane_share of try_shared(): a base LID whose lane to a spine has
 * no cable leaves that spine once its other lanes carry twice the least
 * loaded cable's LIDs.  Edges with 2 to 4 cables to each spine, which the
 * level numbers as 4 lanes, then load their cables evenly, as random
 * orders want, at some cost to the coordination leaf order and jobs want.
 */
#define OO_GUARD_LANE_SHARE 2

/*
 * Port offsetting's LFTs again with their lanes shared, where ours and
 * their mix lose: then ours, or else a mix of them, as keep_or_mix()
 * settles; lft_ours and prof_ours become theirs.  Returns 1 with one of
 * them in place, 0 otherwise (the tables in place are undefined).
 */
int try_shared(struct oo_guard *g, const struct oo_guard_stages *st,
	       const struct oo_eval_score *stock,
	       struct oo_eval_score *shared,
	       struct oo_eval_score *mixed)
{
	if (build_scored(g, st, OO_GUARD_LANE_SHARE, 0,
			 "offsetting, lanes shared", shared))
		return 0;
	save_profiles(g, g->prof_ours);
	copy_lfts(g, g->lft_ours, 1);
	g->lost_ours = lost_ca_lids(g, st);
	return keep_or_mix(g, st, "port offsetting's LFTs with the base LIDs "
			   "of dead lanes spread beyond their spine",
			   "a mix of those and stock's would", shared, stock,
			   mixed) != OO_GUARD_NEITHER;
}
