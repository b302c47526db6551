/*
 * osmoffset - the stock guard's variants of port offsetting's tables
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Port offsetting's tables built other ways (the variants of st->variants),
 * kept where they score better; and the further LID offsets of ours beside
 * the stock base LIDs where the stock tables stay for those.
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

static void log_variant(const struct oo_guard *g,
			const struct oo_variant *v, int better,
			const struct oo_guard_sums *mine,
			const struct oo_guard_sums *ours)
{
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: port "
		"offsetting's LFTs %s score %s than %s (%" PRIu64 " flows "
		"lost, base LIDs %.4f, all cells %.4f on average, against %"
		PRIu64 ", %.4f, %.4f); %s\n", v->what_new,
		better ? "better" : "no better", v->what_old, mine->lost,
		mine->base / g->num_base_cells, mine->all / g->num_eff_cells,
		ours->lost, ours->base / g->num_base_cells,
		ours->all / g->num_eff_cells,
		better ? "they go on in their place" : "those go on");
}

/*
 * Whether tables scored in mine beat ours: they score better
 * (sums_better()), or, where the stock scores are known, they lose no
 * cell to stock and ours do, or score better and lose no cell to stock
 * that ours win (the polish sees the leaf order and its jobs only, and
 * may cost the random orders).
 */
int beats_ours(const struct oo_guard *g,
	       const struct oo_eval_score *mine,
	       const struct oo_eval_score *ours,
	       const struct oo_eval_score *stock,
	       struct oo_guard_sums *sum_mine,
	       struct oo_guard_sums *sum_ours)
{
	int mine_lose, ours_lose, better;

	sum_scores(g, ours, sum_ours);
	sum_scores(g, mine, sum_mine);
	better = sums_better(sum_mine, sum_ours);
	if (!stock)
		return better;
	mine_lose = first_loss(g, mine, stock) >= 0;
	ours_lose = first_loss(g, ours, stock) >= 0;
	return mine_lose ? ours_lose && better : ours_lose || better;
}

/*
 * Whether the tables in place, which leave lost CA LIDs without a route
 * from some CA after the reach pass's first stage (lost_ca_lids(), -1
 * not known), reach as much as port offsetting's (lft_ours, lost_ours):
 * no more such LIDs; or, where more, no more host/LID pairs without a
 * route after the whole pass as OpenSM runs it (lost_pairs_after_pass()):
 * its retry round and last fills reach much that the first stage leaves.
 * Once tables go on so (ours_by_pairs), those pairs decide from then on.
 * Logged where the pairs decide.
 */
static int reach_as_ours(struct oo_guard *g, const struct oo_guard_stages *st,
			 const struct oo_variant *v, int lost)
{
	int64_t mine = -1, theirs = -1;
	int fewer = -1;

	if (lost >= 0 && lost <= g->lost_ours && !g->ours_by_pairs)
		return 1;
	if (lost >= 0)
		fewer = pairs_no_more(g, st, g->lft_ours, g->prof_ours, &mine,
				      &theirs);
	if (fewer < 0) {
		if (lost >= 0 && lost <= g->lost_ours)
			return 1;	/* the first stage's count decides */
	} else if (fewer) {
		if (lost > g->lost_ours) {
			OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock "
				"guard: port offsetting's LFTs %s leave %d CA "
				"LIDs without a route from some CA after the "
				"reach pass's first stage, against %d, but no "
				"more host/LID pairs after the whole pass (%"
				PRId64 ", against %" PRId64 ")\n", v->what_new,
				lost, g->lost_ours, mine, theirs);
			g->ours_by_pairs = 1;
		}
		return 1;
	}
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: port "
		"offsetting's LFTs %s would score better, but leave %d CA "
		"LIDs (SHARP nodes among them) without a route from some CA "
		"after the reach pass, against %d (host/LID pairs after the "
		"whole pass: %" PRId64 ", against %" PRId64 "; -1 not known); "
		"those %s go on\n", v->what_new, lost, g->lost_ours, mine,
		theirs, v->what_old);
	return 0;
}

/*
 * The tables in place, scored into scratch, against ours (lft_ours,
 * prof_ours and the scores in ours), as variant v names them: they
 * replace ours where they beat them (beats_ours(), stock NULL where the
 * stock tables are not built yet) and reach as much (reach_as_ours());
 * else ours go back in place.  Returns 1 where they replaced ours, else
 * 0.
 */
int keep_if_better(struct oo_guard *g, const struct oo_guard_stages *st,
		   const struct oo_variant *v,
		   struct oo_eval_score *ours,
		   const struct oo_eval_score *stock,
		   struct oo_eval_score *scratch)
{
	struct oo_guard_sums sum_ours, sum_mine;
	int lost = 0, better;

	better = beats_ours(g, scratch, ours, stock, &sum_mine, &sum_ours);
	if (better)
		lost = lost_ca_lids(g, st);
	if (better && !reach_as_ours(g, st, v, lost)) {
		better = 0;
	} else {
		log_variant(g, v, better, &sum_mine, &sum_ours);
	}
	if (better) {
		save_profiles(g, g->prof_ours);
		copy_lfts(g, g->lft_ours, 1);
		memcpy(ours, scratch, sizeof(*ours) * g->num_cells);
		g->lost_ours = lost;
		return 1;
	}
	copy_lfts(g, g->lft_ours, 0);
	restore_profiles(g, g->prof_ours);
	return 0;
}

/*
 * Port offsetting's LFTs again with flags, as variant v names them: they
 * replace ours where they score better (keep_if_better()), scored into
 * scratch.  The tables of ours, or of those that replace them, are in
 * place on return.  Returns 1 where they replaced ours, else 0 (also
 * where flags change nothing).
 */
static int try_variant(struct oo_guard *g, const struct oo_guard_stages *st,
		       unsigned flags, const struct oo_variant *v,
		       struct oo_eval_score *ours,
		       struct oo_eval_score *scratch)
{
	int ret = build_scored(g, st, 0, flags, v->scores, scratch);

	if (!ret)
		return keep_if_better(g, st, v, ours, NULL, scratch);
	if (ret < 0)
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"LFTs %s could not be built; those %s stay in the "
			"running\n", v->what_new, v->what_old);
	copy_lfts(g, g->lft_ours, 0);
	restore_profiles(g, g->prof_ours);
	return 0;
}

/* The slack of the cells of one further LID offset each (cell_lost()). */
static void set_offset_slack(struct oo_guard *g, double slack)
{
	unsigned c;

	for (c = g->first_offset_cell; c < g->num_cells; c++)
		g->cell[c].slack = slack;
}

/*
 * The tables in place, with every entry toward a further LID offset of a
 * host (base + k, k > 0) taken from port offsetting's (ours, per switch
 * into lft_ours); base LIDs, switches and the other CAs keep theirs.
 */
static void take_our_offsets(const struct oo_guard *g, const uint8_t **ours)
{
	unsigned lids = g->net.lids_per_port, h, o, s;

	for (s = 0; s < g->num_sw; s++)
		for (h = 0; h < g->num_hosts; h++)
			for (o = 1; o < lids; o++) {
				unsigned lid = g->host_lid[h] + o;

				if (lid < g->lft_len[s])
					g->sw[s]->new_lft[lid] = ours[s][lid];
			}
}

/* Per switch, 1 where hosts hang off it (calloc'd; NULL without memory). */
static uint8_t *host_switches(const struct oo_guard *g)
{
	uint8_t *holds = calloc(g->num_sw + 1, 1);
	unsigned h;

	if (holds)
		for (h = 0; h < g->num_hosts; h++)
			holds[g->host_sw[h]] = 1;
	return holds;
}

/*
 * Port offsetting's tables (lft_ours) in place, but for the entries of the
 * switches with hosts toward the hosts' base LIDs, which keep those of
 * the tables in kept.  Where the stock engine ranked the switches its
 * own way (other roots), the stock entries toward the switches and the
 * stock routes of switches without hosts follow that ranking, and with
 * port offsetting's further offsets over them they can close a credit
 * loop: a spine that the stock ranking puts below the leaves reaches a
 * host it is not cabled to down and up again, over a leaf, while ours
 * lead traffic down through it.  And those down-and-up routes forward
 * traffic from the spines up out of the leaves, whose up ports the polish
 * then may not move entries to (a route that starts there could close a
 * loop).  Here every entry follows ours but the first hop of a base LID
 * out of the hosts' switch, which the stock tables (or their polish) take
 * to a neighbour as close to the host.
 */
static int take_ours_but_base_hops(const struct oo_guard *g,
				   const uint8_t **kept)
{
	uint8_t *holds = host_switches(g);
	unsigned h, s;

	if (!holds)
		return -1;
	copy_lfts(g, g->lft_ours, 0);
	for (s = 0; s < g->num_sw; s++) {
		if (!holds[s])
			continue;
		for (h = 0; h < g->num_hosts; h++)
			if (g->host_lid[h] < g->lft_len[s])
				g->sw[s]->new_lft[g->host_lid[h]] =
				    kept[s][g->host_lid[h]];
	}
	free(holds);
	return 0;
}

/*
 * Hops from switch s to host h's switch for LID lid, leaving s by port (0:
 * s's entry for lid) and then by the tables in place; -1 where the LID
 * arrives nowhere.
 */
static int hops_to_host(const struct oo_guard *g, uint32_t s, uint8_t port,
			unsigned lid, uint32_t h)
{
	unsigned hops;

	for (hops = 0; hops <= g->num_sw; hops++) {
		size_t at;
		int ret = oo_eval_hop(&g->net, s, port, lid, h, &at);

		if (ret)
			return ret > 0 ? (int)hops : -1;
		s = g->net.next[at];
		port = 0;
	}
	return -1;
}

/* Whether a neighbour of switch s leads LID lid into s. */
static int leads_into(const struct oo_guard *g, uint32_t s, unsigned lid)
{
	unsigned stride = g->net.stride, port;

	for (port = 1; port < stride; port++) {
		uint32_t n = g->net.next[(size_t)s * stride + port];
		uint8_t back;

		if (n == OO_EVAL_NONE || lid >= g->lft_len[n])
			continue;
		back = g->lft[n][lid];
		if (back && back < stride &&
		    g->net.next[(size_t)n * stride + back] == s)
			return 1;
	}
	return 0;
}

/*
 * The neighbours of switch s (ascending, each once, into cand) by which
 * host h's LID lid arrives in len hops; returns how many.  is_short[port]
 * (stride entries) tells whether s's port does.
 */
static unsigned short_neighbours(const struct oo_guard *g, uint32_t s,
				 unsigned lid, uint32_t h, int len,
				 uint32_t *cand, uint8_t *is_short)
{
	const uint32_t *next = g->net.next + (size_t)s * g->net.stride;
	unsigned n = 0, port, j;

	is_short[0] = 0;
	for (port = 1; port < g->net.stride; port++) {
		uint32_t t = next[port];

		is_short[port] = t != OO_EVAL_NONE &&
		    hops_to_host(g, s, (uint8_t)port, lid, h) == len;
		if (!is_short[port])
			continue;
		for (j = 0; j < n && cand[j] < t; j++)
			;
		if (j < n && cand[j] == t)
			continue;
		memmove(cand + j + 1, cand + j, (n - j) * sizeof(*cand));
		cand[j] = t;
		n++;
	}
	return n;
}

/*
 * Switch s's entry toward LID offset o (o > 0) of host h moved beside its
 * base LID's (oo_beside_base()) among the neighbours by which that LID
 * arrives as short as now (short_neighbours()); over parallel cables to
 * the one it picks, the (h + o)-th of them that does.  Not where a
 * neighbour leads that LID into s, nor where the base LID leaves s by a
 * neighbour that is not among them.  cand and is_short take up to stride
 * entries each.
 */
static void move_beside_base(const struct oo_guard *g, uint32_t s,
			     uint32_t h, unsigned o, uint32_t *cand,
			     uint8_t *is_short)
{
	const uint32_t *next = g->net.next + (size_t)s * g->net.stride;
	unsigned base = g->host_lid[h], lid = base + o, n, port, par = 0;
	uint8_t *lft = g->sw[s]->new_lft, par_port[256];
	int len, i;

	if (lid >= g->lft_len[s] || !lft[base] || lft[base] >= g->net.stride ||
	    next[lft[base]] == OO_EVAL_NONE || leads_into(g, s, lid))
		return;
	len = hops_to_host(g, s, 0, lid, h);
	if (len < 0)
		return;
	n = short_neighbours(g, s, lid, h, len, cand, is_short);
	i = oo_beside_base(cand, n, next[lft[base]], o);
	if (i < 0)
		return;
	for (port = 1; port < g->net.stride && par < sizeof(par_port); port++)
		if (is_short[port] && next[port] == cand[i])
			par_port[par++] = (uint8_t)port;
	lft[lid] = par_port[(h + o) % par];
}

/*
 * The tables in place (the kept ones' base LIDs under port offsetting's
 * further LID offsets), with the entries of the switches with hosts
 * toward the further LID offsets moved beside their base LID's
 * (move_beside_base()).  Port offsetting's digits place a further offset
 * by its own base LID's slot; over the stock base LIDs, which leave by
 * other neighbours, an offset can leave on its base LID's neighbour, and
 * striped traffic then crosses fewer links than it could.  Returns -1
 * without memory, else 0.
 */
static int take_offsets_beside_base(const struct oo_guard *g)
{
	uint32_t *cand = calloc(g->net.stride + 1, sizeof(*cand));
	uint8_t *is_short = calloc(g->net.stride + 1, 1);
	uint8_t *holds = host_switches(g);
	unsigned lids = g->net.lids_per_port, h, o, s;
	int ret = -1;

	if (!cand || !is_short || !holds)
		goto out;
	for (s = 0; s < g->num_sw; s++) {
		if (!holds[s])
			continue;
		for (h = 0; h < g->num_hosts; h++)
			for (o = 1; g->host_sw[h] != s && o < lids; o++)
				move_beside_base(g, s, h, o, cand, is_short);
	}
	ret = 0;
out:
	free(cand);
	free(is_short);
	free(holds);
	return ret;
}

/* What the log lines of offsets_of_ours_win() say of the tables. */
struct oo_offsets_try {
	const char *would;
	const char *done;
};

static const struct oo_offsets_try offsets_of_ours = {
	"with port offsetting's entries toward the further LID offsets of "
	"the hosts, the stock LFTs would",
	"the stock LFTs keep their entries toward base LIDs, and port "
	"offsetting's take those toward the further LID offsets of the hosts",
};

static const struct oo_offsets_try beside_base = {
	"with their further LID offsets moved beside the base LIDs' at the "
	"switches with hosts, those LFTs would",
	"the further LID offsets of the hosts leave the switches with hosts "
	"by the neighbours beside their base LIDs'",
};

static const struct oo_offsets_try base_hops_of_stock = {
	"port offsetting's LFTs with the stock entries of the switches with "
	"hosts toward the base LIDs would",
	"port offsetting's LFTs go on, but for the entries of the switches "
	"with hosts toward the base LIDs, which keep the stock ones",
};

/*
 * Whether the tables in place (t says which: ours' further offsets over
 * the kept ones' base LIDs, ours but for the base LIDs' first hop, or
 * either with the further offsets beside the base LIDs), scored in mine,
 * may replace the kept ones (scored in kept, kept_lost CA LIDs without a
 * route): they lose no cell to stock and score better on the whole
 * (beats_ours()), leave no more CA LIDs without a route after the reach
 * pass, and are checked free of a credit loop (the entries of two
 * rankings, ours over the roots port offsetting completed and the stock
 * engine's over its own, can close one).
 */
static int offsets_of_ours_win(struct oo_guard *g,
			       const struct oo_guard_stages *st,
			       const struct oo_offsets_try *t,
			       const struct oo_eval_score *mine,
			       const struct oo_eval_score *kept,
			       const struct oo_eval_score *stock,
			       int kept_lost)
{
	struct oo_guard_sums sum_mine, sum_kept;
	char slack[80] = "";
	int lost;

	if (!beats_ours(g, mine, kept, stock, &sum_mine, &sum_kept)) {
		if (first_loss(g, mine, stock) >= 0)
			log_loss(g, t->would, mine, stock);
		else
			OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock "
				"guard: %s score no better on the whole (%"
				PRIu64 " flows lost, base LIDs %.4f, all cells "
				"%.4f on average, against %" PRIu64 ", %.4f, "
				"%.4f)\n", t->would, sum_mine.lost,
				sum_mine.base / g->num_base_cells,
				sum_mine.all / g->num_eff_cells, sum_kept.lost,
				sum_kept.base / g->num_base_cells,
				sum_kept.all / g->num_eff_cells);
		return 0;
	}
	lost = lost_in_place(g, st);
	if (lost < 0 || kept_lost < 0 || lost > kept_lost) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s "
			"leave %d CA LIDs without a route from some CA after "
			"the reach pass, against %d\n",
			t->would, lost, kept_lost);
		return 0;
	}
	if (oo_reach_tables_acyclic(g->osm) != 1) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s "
			"score better, but have a credit loop (or could not "
			"be checked)\n", t->would);
		return 0;
	}
	if (g->first_offset_cell < g->num_cells)
		snprintf(slack, sizeof(slack), " (a leaf order over one "
			 "further LID offset alone allowed %.0f %% below)",
			 100.0 * OO_GUARD_OFFSET_SLACK);
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s: they "
		"score at least as well as the stock ones in all %u cells%s "
		"and better than the stock LFTs alone (%" PRIu64 " flows "
		"lost, base LIDs %.4f, all cells %.4f on average, against %"
		PRIu64 ", %.4f, %.4f); the tables have no credit loop\n",
		t->done, g->num_cells, slack, sum_mine.lost,
		sum_mine.base / g->num_base_cells,
		sum_mine.all / g->num_eff_cells,
		sum_kept.lost, sum_kept.base / g->num_base_cells,
		sum_kept.all / g->num_eff_cells);
	return 1;
}

/*
 * The polish of the tables of try_offsets_of_ours() in place, scored in
 * score.  Where they lose a cell to stock (mostly a leaf order over one
 * further LID offset alone, where port offsetting's digits lost the base
 * LIDs' to stock too), the polish may spend the lead of the striped cells
 * to raise it (polish_leads()), every entry free to move.  With
 * offsets_only (where they lose none) only the entries toward further LID
 * offsets move, and the base LIDs keep the stock entries they took; the
 * moves are taken back where any cell of the guard's would then score
 * lower than before them (first_drop()): the polish holds random orders
 * of its own, not the guard's, and shape 449 of docs/shapes.md at LMC 2
 * lost the guard's random orders to stock and, with them, tables that
 * win unpolished; on the dragonfly df18 of docs/dragonfly.md at LMC 1
 * the random orders dropped within the guard's slack.  score then takes
 * the scores of the tables in place.  With no memory for a copy of the
 * tables as they were, nothing is polished.
 */
static void polish_offsets(struct oo_guard *g,
			   const struct oo_guard_stages *st, const char *what,
			   const char *who, struct oo_eval_score *score,
			   const struct oo_eval_score *stock, int offsets_only)
{
	uint8_t *was = malloc(total_lft(g) + 1);
	double lead[OO_GUARD_MAX_CELLS];
	struct oo_eval_score before[OO_GUARD_MAX_CELLS];
	int c;

	if (!was)
		return;
	polish_leads(g, score, stock, lead);
	copy_lfts(g, was, 1);
	memcpy(before, score, sizeof(*score) * g->num_cells);
	if (polish_in_place(g, st, what, was, lead, score, stock,
			    lost_ca_lids(g, st), OO_GUARD_POLISH_WORK,
			    offsets_only)) {
		score_tables(g, st, score);
		log_scores(g, who, score);
		c = offsets_only ? first_drop(g, score, before) : -1;
		if (c >= 0) {
			OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock "
				"guard: the polish of %s is taken back: after "
				"it they would score lower than before it in "
				"%s (%.4f, %" PRIu64 " flows lost, against "
				"%.4f, %" PRIu64 ")\n", what, g->cell[c].name,
				score[c].eff, score[c].lost, before[c].eff,
				before[c].lost);
			copy_lfts(g, was, 0);
			count_profiles(g);
			memcpy(score, before, sizeof(*score) * g->num_cells);
		}
	}
	free(was);
}

/*
 * Whether tables scored in mine may replace others (ones that won, or the
 * stock ones), scored in them: no more flows lost, base LIDs at least as
 * well on the whole, and all cells better (a polish that raises the base
 * LIDs a hair may cost the striped traffic far more, which sums_better()
 * would not weigh).
 */
static int beats_every_sum(const struct oo_guard *g,
			   const struct oo_eval_score *mine,
			   const struct oo_eval_score *them,
			   struct oo_guard_sums *sum_mine,
			   struct oo_guard_sums *sum_them)
{
	sum_scores(g, mine, sum_mine);
	sum_scores(g, them, sum_them);
	return sum_mine->lost <= sum_them->lost &&
	    sum_mine->base >= sum_them->base && sum_mine->all > sum_them->all;
}

/*
 * The tables in place, scored in score (port offsetting's further LID
 * offsets over the kept tables' base LIDs, as try_offsets_of_ours() last
 * tried them; won where they won), with their further offsets moved
 * beside the base LIDs (take_offsets_beside_base()), polished
 * (polish_offsets(): every entry where they lose a cell, else the entries
 * toward the further offsets alone; on a degraded 8x4 tree at LMC 1 the
 * leaf order's striped traffic 0.677 -> 0.694, where the optimum is
 * 0.726, its base LIDs as stock's).  They go on where they beat the tables
 * that won, where those won, else the kept ones (beats_every_sum(): a
 * lead in base LIDs bought with the striped traffic does not count), and
 * offsets_of_ours_win(); score then takes their scores.  Else the tables
 * in place are as they were.  Returns 1 where they go on.
 */
static int try_beside_base(struct oo_guard *g,
			   const struct oo_guard_stages *st,
			   const struct oo_eval_score *kept, int kept_lost,
			   const struct oo_eval_score *stock,
			   struct oo_eval_score *score, int won)
{
	struct oo_eval_score mine[OO_GUARD_MAX_CELLS];
	const struct oo_eval_score *them;
	struct oo_guard_sums sum_mine, sum_them;
	struct oo_guard_snapshot was;
	int ret = 0;

	if (take_snapshot(g, &was) || take_offsets_beside_base(g))
		goto out;
	count_profiles(g);
	score_tables(g, st, mine);
	log_scores(g, "offsetting's further LID offsets beside the base LIDs",
		   mine);
	if (st->variants & OO_GUARD_POLISH) {
		if (first_loss(g, mine, stock) >= 0)
			polish_offsets(g, st, "the LFTs with further LID "
				       "offsets beside the base LIDs",
				       "offsetting's further LID offsets "
				       "beside the base LIDs, polished", mine,
				       stock, 0);
		else	/* they lose no cell: their further offsets alone */
			polish_offsets(g, st, "the further LID offsets of the "
				       "LFTs with them beside the base LIDs",
				       "offsetting's further LID offsets "
				       "beside the base LIDs, those polished",
				       mine, stock, 1);
	}
	them = won ? score : kept;
	if (!beats_every_sum(g, mine, them, &sum_mine, &sum_them))
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s "
			"score no better on the whole than %s (%" PRIu64
			" flows lost, base LIDs %.4f, all cells %.4f on "
			"average, against %" PRIu64 ", %.4f, %.4f)\n",
			beside_base.would, won ? "the tables that won" :
			"the stock LFTs", sum_mine.lost,
			sum_mine.base / g->num_base_cells,
			sum_mine.all / g->num_eff_cells, sum_them.lost,
			sum_them.base / g->num_base_cells,
			sum_them.all / g->num_eff_cells);
	else
		ret = offsets_of_ours_win(g, st, &beside_base, mine, kept,
					  stock, kept_lost);
	if (ret)
		memcpy(score, mine, sizeof(*score) * g->num_cells);
	else
		put_back_snapshot(g, &was);
out:
	free_snapshot(&was);
	return ret;
}

/*
 * Port offsetting's tables whole but for the first hops of the base LIDs
 * out of the switches with hosts, which keep the kept tables' (kept_rows;
 * take_ours_but_base_hops()), in place, scored in scratch and, where
 * polish, polished (polish_offsets()).  Returns offsets_of_ours_win()
 * against the kept tables (scored in kept); without memory 0, and the
 * tables in place are as they were.
 */
static int try_base_hops_of_stock(struct oo_guard *g,
				  const struct oo_guard_stages *st,
				  const uint8_t **kept_rows,
				  const struct oo_eval_score *kept,
				  int kept_lost,
				  const struct oo_eval_score *stock,
				  struct oo_eval_score *scratch, int polish)
{
	if (take_ours_but_base_hops(g, kept_rows))
		return 0;
	count_profiles(g);
	score_tables(g, st, scratch);
	log_scores(g, "offsetting, stock first hops of base LIDs", scratch);
	if (polish)
		polish_offsets(g, st, "port offsetting's LFTs with the stock "
			       "first hops of the base LIDs", "offsetting, "
			       "stock first hops of base LIDs, polished",
			       scratch, stock, 0);
	return offsets_of_ours_win(g, st, &base_hops_of_stock, scratch, kept,
				   stock, kept_lost);
}

/*
 * The stock tables (as built or polished, scored in kept; kept_lost their
 * lost_in_place()) are in place and stay, with LMC 0: port offsetting's
 * tables whole but for the stock first hops of the base LIDs out of the
 * switches with hosts (take_ours_but_base_hops()), polished.  Over the
 * roots updn found itself, the stock spines reach the hosts they are not
 * cabled to down and up again through the leaves, whose up ports the
 * polish of the stock tables then may not move entries to; over port
 * offsetting's ranking it may.  They go on where offsets_of_ours_win();
 * scratch takes the scores.  Returns 1 with those tables in place, else
 * 0 with the kept ones back in place.
 */
int try_polish_base_hops(struct oo_guard *g,
			 const struct oo_guard_stages *st,
			 const struct oo_eval_score *kept,
			 int kept_lost,
			 const struct oo_eval_score *stock,
			 struct oo_eval_score *scratch)
{
	struct oo_guard_snapshot was;
	const uint8_t **kept_rows = NULL;
	int ret = 0;

	if (take_snapshot(g, &was))
		goto out;
	kept_rows = index_rows(g, was.lft);
	if (!kept_rows)
		goto out;
	ret = try_base_hops_of_stock(g, st, kept_rows, kept, kept_lost, stock,
				     scratch, 1);
	if (!ret) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"stock LFTs stay as they are\n");
		put_back_snapshot(g, &was);
	}
out:
	free_snapshot(&was);
	free(kept_rows);
	return ret;
}

/*
 * The stock tables (as built or polished, scored in kept) are in place
 * and stay, with LMC > 0: port offsetting's tables lost a cell of base
 * LIDs (the leaf order of a degraded tree, say), and no mix won it back.
 * Their further LID offsets may still spread the striped traffic far
 * better than stock's, whose further offsets follow their base LID's
 * port or nearly so: every entry toward a further LID offset of a host
 * takes port offsetting's (lft_ours), where offsets_of_ours_win().  The
 * base LIDs, all an MPI that ignores LMC uses, keep the stock entries,
 * so every base cell scores as with the stock tables alone, unless
 * polish_offsets() moves them too (never below stock's figure).  A leaf
 * order over one further offset alone may lose up to
 * OO_GUARD_OFFSET_SLACK here.  Where those tables lose, port
 * offsetting's are tried whole but for the first hop of the base LIDs
 * out of the switches with hosts, which keeps the stock one
 * (take_ours_but_base_hops()), on the same terms.  Last, the tables
 * tried last move their further offsets beside the base LIDs
 * (try_beside_base()), and go on where they win, or beat the ones that
 * won.  scratch takes the scores; kept_lost is the kept tables'
 * lost_in_place().  Returns 1 with those tables in place, else 0 with
 * the kept ones back in place.
 */
int try_offsets_of_ours(struct oo_guard *g,
			const struct oo_guard_stages *st,
			const struct oo_eval_score *kept,
			int kept_lost,
			const struct oo_eval_score *stock,
			struct oo_eval_score *scratch)
{
	const uint8_t **ours = index_rows(g, g->lft_ours);
	const uint8_t **kept_rows = NULL;
	struct oo_guard_snapshot was;
	int ret = 0;

	if (take_snapshot(g, &was))
		goto out;
	kept_rows = index_rows(g, was.lft);
	if (!ours || !kept_rows)
		goto out;
	set_offset_slack(g, OO_GUARD_OFFSET_SLACK);
	take_our_offsets(g, ours);
	count_profiles(g);
	score_tables(g, st, scratch);
	log_scores(g, "stock, offsetting's further LID offsets", scratch);
	if ((st->variants & OO_GUARD_POLISH) &&
	    first_loss(g, scratch, stock) >= 0)
		polish_offsets(g, st, "the stock LFTs with port offsetting's "
			       "further LID offsets", "stock, offsetting's "
			       "further LID offsets, polished", scratch,
			       stock, 0);
	ret = offsets_of_ours_win(g, st, &offsets_of_ours, scratch, kept,
				  stock, kept_lost);
	if (!ret)
		ret = try_base_hops_of_stock(g, st, kept_rows, kept, kept_lost,
					     stock, scratch, 0);
	if (try_beside_base(g, st, kept, kept_lost, stock, scratch, ret))
		ret = 1;
	set_offset_slack(g, 0.0);
	if (!ret) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"stock LFTs stay as they are\n");
		put_back_snapshot(g, &was);
	}
out:
	free_snapshot(&was);
	free(ours);
	free(kept_rows);
	return ret;
}

/*
 * The variants of port offsetting's tables the guard tries before it
 * compares with stock (those of st->variants), each against the best so
 * far.  Each level's lanes by its design where that is narrower than its
 * widest trunk: edges cabled twice to each spine, a third of their cables
 * doubled once more, then have 2 lanes, not 3 or 4 that most of them
 * leave dead, and the doubled cables share their lane's LIDs.  Then the
 * live slots of plans that miss one slot in eight or fewer keeping their
 * digits (an edge short of one uplink).  Then the level-1 digits of the
 * CAs below one line ASIC or pod spine apart (ranks that run over the
 * pods in turn).  Then further LID offsets a fraction of the slots apart
 * rather than in blocks of neighbouring slots, over whatever went on:
 * where a level's slots reach parents in different places (the line
 * ASICs of two directors, edges cabled to a rotating subset), a port's
 * LIDs then leave through all of them.  A variant goes on only if it
 * leaves no more CA LIDs without a route than ours (lost_ours, counted
 * by compare_with_stock()).
 */
void try_variants(struct oo_guard *g, const struct oo_guard_stages *st,
		  struct oo_eval_score *ours,
		  struct oo_eval_score *scratch)
{
	static const struct oo_variant design = {
		"offsetting, lanes by design",
		"with each level's lanes by design",
		"with the widest trunks'",
	};
	static const struct oo_variant digits = {
		"offsetting, digits apart",
		"with the level-1 digits of the CAs below each level-1 switch "
		"apart",
		"with the digits of their ranks",
	};
	static const struct oo_variant live = {
		"offsetting, live slots kept",
		"with the live slots of plans that miss few keeping their "
		"digits",
		"with those plans numbered over their live slots",
	};
	static const struct oo_variant apart = {
		"offsetting, LID offsets apart",
		"with further LID offsets apart around the slots",
		"with them in blocks",
	};
	unsigned kept = 0;

	if ((st->variants & OO_LFT_DESIGN_LANES) &&
	    try_variant(g, st, OO_LFT_DESIGN_LANES, &design, ours, scratch))
		kept = OO_LFT_DESIGN_LANES;
	if ((st->variants & OO_LFT_KEEP_LIVE) &&
	    try_variant(g, st, kept | OO_LFT_KEEP_LIVE, &live, ours, scratch))
		kept |= OO_LFT_KEEP_LIVE;
	if ((st->variants & OO_LFT_DIGITS_APART) &&
	    try_variant(g, st, kept | OO_LFT_DIGITS_APART, &digits, ours,
			scratch))
		kept |= OO_LFT_DIGITS_APART;
	if (st->variants & OO_LFT_OFFSETS_APART)
		try_variant(g, st, kept | OO_LFT_OFFSETS_APART, &apart, ours,
			    scratch);
}
