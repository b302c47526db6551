/*
 * osmoffset - the stock guard's polish and last steps
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * The polish (oo_polish(), osm_offset_polish.c) of the tables the guard
 * weighs, held to the cells it scores; and the last steps on the tables
 * that stay (the evening of the route counts, kicks), held to random orders
 * neither they nor the cells hold.
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

/* The port profiles of the tables in place, from those of the tables in
   was (a copy_lfts() buffer) with theirs in place. */
static void polish_profiles(const struct oo_guard *g, const uint8_t *was)
{
	unsigned s, lid;

	for (s = 0; s < g->num_sw; s++) {
		osm_switch_t *sw = g->sw[s];

		for (lid = 0; lid < g->lft_len[s]; lid++) {
			uint8_t a = was[lid], b = sw->new_lft[lid];

			if (a == b)
				continue;
			if (a < sw->num_ports && sw->p_prof[a].num_paths)
				sw->p_prof[a].num_paths--;
			if (b < sw->num_ports)
				sw->p_prof[b].num_paths++;
		}
		was += g->lft_len[s];
	}
}

/* Why a polish (or kicks) found no room to start, or NULL. */
static const char *polish_unfit(const struct oo_polish_result *res)
{
	if (res->status == OO_POLISH_HEAVY)
		return "a round loads some link with nearly 128 LIDs";
	if (res->status == OO_POLISH_TOO_BIG)
		return "the rounds of the leaf order and its jobs would need "
		    "more than 32 million link loads";
	return NULL;
}

static void log_polish(const struct oo_guard *g, const char *whose,
		       const struct oo_polish_result *res, unsigned cells)
{
	const char *unfit = polish_unfit(res);

	if (unfit) {
		OSM_LOG(g->log, OSM_LOG_VERBOSE, "osmoffset: stock guard: no "
			"polish of %s: %s\n", whose, unfit);
		return;
	}
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the polish "
		"of %s moved %u entries of %u switches with hosts in %u passes, "
		"%u of them to even the route counts, %u to part the routes "
		"a round of a random order may run at once, %u in swaps of "
		"two, %u "
		"to raise cells below the stock tables' (%u more taken back: "
		"some cell stayed below; %.1f "
		"million link loads held, %" PRIu64 " links loaded%s; %"
		PRIu64 " flows without a route before the reach pass left "
		"out%s): the leaf order and its jobs %.4f on average, against "
		"%.4f\n", whose, res->moved, res->movable, res->sweeps,
		res->balanced, res->parted, res->swapped, res->rescued,
		res->undone,
		res->held / 1e6, res->work,
		res->status == OO_POLISH_BUDGET ? ", its budget" : "",
		res->lost, res->left_out ? "; the random orders left out, "
		"they would not fit" : "", res->eff_after / cells,
		res->eff_before / cells);
}

/*
 * The polish's cells: each cell of the guard (those of the base LIDs
 * only, with base_only); one of several orders (random orders, leaves
 * shuffled) as the orders of its own sample, which do not steer, and
 * with judged the orders the guard judges it on before them (the
 * kicks': many kicks find moves that keep a sample of random orders from
 * dropping while random orders at large lose a little; held to the
 * guard's twelve, 200 kicks cost 20 other random orders 0.0016 on
 * average on the trees of docs/degraded.md they changed at LMC 1, with
 * the sample too 0.0005).  Returns how many; *steer counts those that
 * steer.
 */
static unsigned polish_cells(const struct oo_guard *g, const double *lead,
			     int base_only, int judged,
			     struct oo_polish_cell *cell, unsigned *steer)
{
	unsigned c, i, n = 0;

	*steer = 0;
	for (c = 0; c < g->num_cells; c++) {
		const struct oo_cell *gc = &g->cell[c];
		int sampled = gc->num_sample > 0;
		unsigned first = sampled && judged ? gc->num_orders : 0;
		unsigned num = sampled ? first + gc->num_sample : 1;

		if ((base_only && gc->traffic) || gc->lost_only)
			continue;
		for (i = 0; i < num; i++) {
			cell[n].order = !sampled ? gc->order[0] :
			    i < first ? gc->order[i] : gc->sample[i - first];
			cell[n].n = gc->n;
			cell[n].traffic = gc->traffic;
			cell[n].group = c;
			cell[n].steer = !sampled;
			cell[n].lead = lead ? lead[c] : 0.0;
			*steer += (unsigned)cell[n].steer;
			n++;
		}
	}
	return n;
}

/* Whether a polish moved entries worth keeping (see polish_in_place()). */
static int polish_gained(const struct oo_polish_result *res)
{
	return res->moved && (res->eff_after > res->eff_before +
			      OO_EVAL_EPSILON || res->balanced || res->parted ||
			      res->rescued);
}

/*
 * Whether the moves of polish_base_lids() must be taken back (logged):
 * the reach pass would leave more CA LIDs without a route from some CA
 * after them than the lost_before before (lost_ca_lids()), and more
 * host/LID pairs after the whole pass than the tables before them (in
 * was: pairs_no_more(); the first stage's count alone where that is not
 * known), or a cell the tables did not lose to stock's (scored in cur,
 * stock's in stock) now loses: the striped traffic and the further LID
 * offsets, which that polish does not hold, may drop.  With no memory to
 * tell, they are.
 */
static int take_back_base_polish(struct oo_guard *g,
				 const struct oo_guard_stages *st,
				 const char *whose, const uint8_t *was,
				 int lost_before,
				 const struct oo_eval_score *cur,
				 const struct oo_eval_score *stock)
{
	struct oo_eval_score *after = calloc(g->num_cells + 1, sizeof(*after));
	int64_t mine = -1, theirs = -1;
	int lost, c;

	if (!after)
		return 1;
	lost = lost_ca_lids_scored(g, st, after);
	if (lost < 0 || (lost > lost_before &&
			 pairs_no_more(g, st, was, NULL, &mine,
				       &theirs) != 1)) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"polish of the base LIDs of %s is taken back: the "
			"reach pass would leave %d CA LIDs without a route "
			"from some CA after it, against %d (host/LID pairs "
			"after the whole pass: %" PRId64 ", against %" PRId64
			"; -1 not known)\n", whose, lost, lost_before, mine,
			theirs);
		free(after);
		return 1;
	}
	c = first_new_loss(g, after, cur, stock);
	if (c >= 0)
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"polish of the base LIDs of %s is taken back: after it "
			"they would score lower than the stock ones in %s "
			"(%.4f, %" PRIu64 " flows lost, against %.4f, %"
			PRIu64 "), where they did not before\n", whose,
			g->cell[c].name, after[c].eff, after[c].lost,
			stock[c].eff, stock[c].lost);
	free(after);
	return c >= 0;
}

/*
 * At LMC > 0, the polish of the base LIDs alone first, as at LMC 0 and on
 * a budget as large: the cells of the base LIDs steer it and only their
 * entries move.  The polish of every cell after it spends its budget on
 * more LIDs and more cells (at LMC 2 on the 648-host degraded tree it
 * ends after 3 passes where it makes 10 at LMC 0), and on the 1,130-HCA
 * SuperPOD analog at LMC 1 and 2 its rounds do not fit at all; the base
 * LIDs, all an MPI that ignores LMC uses, then came out far below their
 * LMC 0 figures (leaf order 0.279 against 0.487 there).  Its moves are
 * taken back where take_back_base_polish() says so.  was holds the
 * tables in place, as before, cur their scores, before their
 * lost_ca_lids() (-1: not counted, no polish), stock the stock tables'
 * scores; cell is room for the polish's cells.  res takes the polish's result
 * (moved 0 where it could not run or was taken back).
 */
static void polish_base_lids(struct oo_guard *g,
			     const struct oo_guard_stages *st,
			     const char *whose, const uint8_t *was,
			     const double *lead,
			     const struct oo_eval_score *cur,
			     const struct oo_eval_score *stock, int before,
			     struct oo_polish_cell *cell,
			     struct oo_polish_result *res)
{
	struct oo_eval_net base = g->net;
	unsigned n, steer;
	char what[160];

	n = polish_cells(g, lead, 1, 0, cell, &steer);
	base.lids_per_port = 1;
	if (before < 0 || oo_polish(&base, g->gn.lft, g->num_hosts, cell, n,
				    OO_GUARD_POLISH_ENTRIES,
				    OO_GUARD_POLISH_WORK, 0, res)) {
		memset(res, 0, sizeof(*res));
		return;
	}
	snprintf(what, sizeof(what), "%s, base LIDs first", whose);
	log_polish(g, what, res, steer);
	if (!res->moved ||
	    !take_back_base_polish(g, st, whose, was, before, cur, stock))
		return;
	copy_lfts(g, (uint8_t *)was, 0);
	memset(res, 0, sizeof(*res));
}

/* closes_new_loop() after a polish of whose, logged. */
static int polish_closes_loop(const struct oo_guard *g, const char *whose)
{
	if (!closes_new_loop(g))
		return 0;
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the polish of "
		"%s is taken back: it would close a credit loop among the "
		"routes the CAs' traffic takes, where the stock tables close "
		"none\n", whose);
	return 1;
}

/*
 * The polish (oo_polish()) of the tables in place (a copy of them in
 * was, their port profiles those in place), as whose in the log: the
 * leaf order, its jobs and its LID offsets steer it; the mean of random
 * orders must not drop, but of shuffles of its own (the first
 * OO_GUARD_POLISH_SEEDS of random_order): the guard judges the random
 * orders on the others, which a polish that fits its sample does not
 * sway.  At LMC > 0 the base LIDs are polished alone first
 * (polish_base_lids(); cur holds the scores of the tables in place,
 * lost their lost_ca_lids(), stock the stock tables' scores).  With
 * lead (per cell; NULL: none), the polish may spend the lead of cells
 * over their floors to raise those below theirs; part_work is the budget
 * of its third phase (0: none).  With offsets_only, only the entries
 * toward further LID offsets move (oo_polish_offsets(); no polish of the
 * base LIDs first), and every cell of base LIDs stays as it scored.
 * Returns how many
 * entries moved (their profiles moved with them) where that raised the
 * efficiency of those cells, evened the route counts or raised cells
 * below their floors (the scores then judge the tables), else 0 with the
 * tables of was back in place: moves that only thin out the busiest
 * links of rounds that stay as slow are no gain worth a change.
 */
unsigned polish_in_place(struct oo_guard *g,
			 const struct oo_guard_stages *st,
			 const char *whose, const uint8_t *was,
			 const double *lead,
			 const struct oo_eval_score *cur,
			 const struct oo_eval_score *stock, int lost,
			 uint64_t part_work, int offsets_only)
{
	struct oo_polish_cell cell[OO_GUARD_MAX_CELLS * OO_GUARD_POLISH_SEEDS];
	struct oo_polish_result res, first;
	unsigned n, steer;
	int ret;

	memset(&first, 0, sizeof(first));
	if (g->net.lids_per_port > 1 && !offsets_only)
		polish_base_lids(g, st, whose, was, lead, cur, stock, lost,
				 cell, &first);
	n = polish_cells(g, lead, 0, 0, cell, &steer);
	if (offsets_only)
		ret = oo_polish_offsets(&g->net, g->gn.lft, g->num_hosts,
					cell, n, OO_GUARD_POLISH_ENTRIES,
					OO_GUARD_POLISH_WORK, part_work, &res);
	else
		ret = oo_polish(&g->net, g->gn.lft, g->num_hosts, cell, n,
				OO_GUARD_POLISH_ENTRIES, OO_GUARD_POLISH_WORK,
				part_work, &res);
	if (ret) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: no "
			"memory for the polish of %s\n", whose);
		memset(&res, 0, sizeof(res));
	} else
		log_polish(g, whose, &res, steer);
	if ((polish_gained(&first) || polish_gained(&res)) &&
	    !polish_closes_loop(g, whose)) {
		polish_profiles(g, was);
		return first.moved + res.moved;
	}
	if (first.moved || res.moved)
		copy_lfts(g, (uint8_t *)was, 0);
	return 0;
}

/*
 * How far the polish of ours may take each cell down while some cell is
 * below stock's: a structured cell's lead over stock's figure (below 0
 * where it loses to stock: the cells to raise); none for the random
 * orders (the polish holds a sample of its own: trading it away fits
 * that sample, and the guard's shuffles lose) and none where the flows
 * lost differ.
 */
void polish_leads(const struct oo_guard *g,
		  const struct oo_eval_score *ours,
		  const struct oo_eval_score *stock, double *lead)
{
	unsigned c;

	for (c = 0; c < g->num_cells; c++)
		lead[c] = ours[c].lost == stock[c].lost &&
		    g->cell[c].num_orders == 1 ? ours[c].eff - stock[c].eff :
		    0.0;
}

/*
 * The polish of ours (lft_ours), once the stock tables (scored in stock)
 * are known: it goes on in their place where it beats them
 * (keep_if_better()).  A cell may give up its lead over stock to raise
 * one that loses to stock (polish_leads()).  Ours, or the polished
 * tables, are in place on return, lft_ours, prof_ours and ours theirs.
 */
void try_polish(struct oo_guard *g, const struct oo_guard_stages *st,
		struct oo_eval_score *ours,
		const struct oo_eval_score *stock,
		struct oo_eval_score *scratch)
{
	static const struct oo_variant polished = {
		"offsetting, polished",
		"with entries of leaves moved where that lowers a round's "
		"busiest link, evens the route counts or raises cells below "
		"the stock tables'",
		"as built",
	};
	double lead[OO_GUARD_MAX_CELLS];

	polish_leads(g, ours, stock, lead);
	copy_lfts(g, g->lft_ours, 0);
	restore_profiles(g, g->prof_ours);
	if (!polish_in_place(g, st, "port offsetting's LFTs", g->lft_ours,
			     lead, ours, stock, g->lost_ours,
			     OO_GUARD_POLISH_WORK, 0))
		return;
	score_tables(g, st, scratch);
	log_scores(g, polished.scores, scratch);
	keep_if_better(g, st, &polished, ours, stock, scratch);
}

/*
 * Whether the polished stock tables in place (scored in mine) may stay in
 * place of the stock tables (was, scored in stock): they score at least
 * as well in every cell and better on the whole (beats_ours() with the
 * stock tables as ours) and leave no more CA LIDs without a route
 * (lost_stock, counted when they first went in place; *lost, theirs).
 * whose names them in the log.
 */
static int polished_stock_beats(struct oo_guard *g,
				const struct oo_guard_stages *st,
				const char *whose,
				const struct oo_eval_score *mine,
				const struct oo_eval_score *stock, int *lost)
{
	struct oo_guard_sums sum_stock, sum_mine;

	if (!beats_ours(g, mine, stock, stock, &sum_mine, &sum_stock))
		return 0;
	*lost = lost_ca_lids(g, st);
	if (*lost < 0 || g->lost_stock < 0 || *lost > g->lost_stock)
		return 0;
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s score at "
		"least as well as the stock ones in all %u cells and better "
		"on the whole (base LIDs %.4f, all cells %.4f on average, "
		"against %.4f, %.4f)\n", whose, g->num_cells,
		sum_mine.base / g->num_base_cells,
		sum_mine.all / g->num_eff_cells,
		sum_stock.base / g->num_base_cells,
		sum_stock.all / g->num_eff_cells);
	return 1;
}

/*
 * The stock tables (was, profiles prof, scored in stock) polished, with
 * the polish's third phase or, unparted, without it: 1 where that beats
 * them (polished_stock_beats()), with the polished tables in place
 * (scored in mine, *lost their lost_ca_lids()), else 0 with the stock
 * tables back in place.
 */
static int polish_stock(struct oo_guard *g, const struct oo_guard_stages *st,
			int unparted, const uint8_t *was, const uint32_t *prof,
			const struct oo_eval_score *stock,
			struct oo_eval_score *mine, int *lost)
{
	/* the log's names: the polish's, the judgement's, the scores' */
	static const struct {
		const char *whose, *what, *scores;
	} name[2] = {
		{ "the stock LFTs",
		  "the stock LFTs with entries of leaves moved where that "
		  "lowers a round's busiest link or evens the route counts",
		  "stock, polished" },
		{ "the stock LFTs polished without parting the routes of a "
		  "random order's rounds",
		  "the stock LFTs polished without parting the routes of a "
		  "random order's rounds",
		  "stock, polished without parting" },
	};
	unsigned moved, k = unparted ? 1 : 0;

	copy_lfts(g, (uint8_t *)was, 0);
	restore_profiles(g, prof);
	moved = polish_in_place(g, st, name[k].whose, was, NULL, stock,
				stock, g->lost_stock,
				unparted ? 0 : OO_GUARD_POLISH_WORK, 0);
	if (moved) {
		score_tables(g, st, mine);
		log_scores(g, name[k].scores, mine);
		if (polished_stock_beats(g, st, name[k].what, mine, stock,
					 lost))
			return 1;
	}
	copy_lfts(g, (uint8_t *)was, 0);
	restore_profiles(g, prof);
	return 0;
}

/*
 * The polished stock tables are in place (scored in score, *lost their
 * lost_ca_lids()) and stay, but where OpenSM's whole reach pass leaves
 * CA LIDs of theirs without a route, the stock tables (was, profiles
 * prof, scored in stock) polished without the third phase take their
 * place if they beat the stock tables too and that pass leaves fewer:
 * the moves that part the flows of a random order's rounds may take
 * the loop-free turns the pass had for a CA LID (shape 295 of
 * docs/shapes.md at LMC 0: 3 CA LIDs with the phase, none without).
 */
static void fewer_lost_unparted(struct oo_guard *g,
				const struct oo_guard_stages *st,
				const uint8_t *was, const uint32_t *prof,
				const struct oo_eval_score *stock,
				struct oo_eval_score *score, int *lost)
{
	struct oo_eval_score *mine = NULL;
	uint32_t *prof_parted = NULL;
	uint8_t *parted = NULL;
	int whole, whole_unparted, lost_unparted;

	if (*lost <= 0)
		return;
	whole = lost_after_whole(g, st);
	if (whole <= 0)
		return;
	if (!(mine = calloc(g->num_cells + 1, sizeof(*mine))) ||
	    !(parted = malloc(total_lft(g) + 1)) ||
	    !(prof_parted = malloc(sizeof(uint32_t) *
				   (total_ports(g) + 1)))) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: no "
			"memory to polish the stock LFTs without parting the "
			"routes of a random order's rounds; the first go on\n");
		goto out;
	}
	copy_lfts(g, parted, 1);
	save_profiles(g, prof_parted);
	whole_unparted = -1;
	if (polish_stock(g, st, 1, was, prof, stock, mine, &lost_unparted))
		whole_unparted = lost_after_whole(g, st);
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the whole "
		"reach pass leaves %d CA LIDs of the polished stock LFTs "
		"without a route, %d of them polished without parting the "
		"routes of a random order's rounds (-1: not polished so, or "
		"they lose); %s\n", whole, whole_unparted,
		whole_unparted >= 0 && whole_unparted < whole ?
		"those go on" : "the first go on");
	if (whole_unparted >= 0 && whole_unparted < whole) {
		memcpy(score, mine, sizeof(*mine) * g->num_cells);
		*lost = lost_unparted;
		goto out;
	}
	copy_lfts(g, parted, 0);
	restore_profiles(g, prof_parted);
out:
	free(mine);
	free(parted);
	free(prof_parted);
}

/*
 * The stock tables are in place (a copy in was, profiles in prof) and
 * stay: their polish instead where it beats them (polished_stock_beats())
 * and, of the polish with and without its third phase, the one the whole
 * reach pass leaves fewer CA LIDs of without a route
 * (fewer_lost_unparted()).  Returns 1 with the polished tables in place
 * (scored in scratch, *lost their lost_ca_lids()), else 0 with the stock
 * tables back in place.
 */
int try_polish_stock(struct oo_guard *g,
		     const struct oo_guard_stages *st,
		     const uint8_t *was, const uint32_t *prof,
		     const struct oo_eval_score *stock,
		     struct oo_eval_score *scratch, int *lost)
{
	if (!polish_stock(g, st, 0, was, prof, stock, scratch, lost)) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"stock LFTs polished would not score at least as well "
			"in every cell, better on the whole, with no more CA "
			"LIDs without a route; the stock LFTs as built go "
			"on\n");
		return 0;
	}
	fewer_lost_unparted(g, st, was, prof, stock, scratch, lost);
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the stock LFTs "
		"polished stay\n");
	return 1;
}

/* The random orders of last_step()'s check: their number, 0 if none. */
static unsigned check_orders(const struct oo_guard *g, uint32_t ***orders)
{
	uint64_t sq = (uint64_t)g->num_ranks * g->num_ranks;
	unsigned n, i;

	*orders = NULL;
	if (g->num_ranks < 2)
		return 0;
	n = (unsigned)(OO_GUARD_CHECK_FLOWS / sq);
	if (n < OO_GUARD_CHECK_MIN)
		n = OO_GUARD_CHECK_MIN;
	if (n > OO_GUARD_CHECK_MAX)
		n = OO_GUARD_CHECK_MAX;
	*orders = calloc(n, sizeof(**orders));
	if (!*orders)
		return 0;
	for (i = 0; i < n; i++) {
		(*orders)[i] = shuffled_ranks(g, OO_GUARD_CHECK_SEED + i);
		if (!(*orders)[i])
			break;
	}
	return i;
}

static void free_check_orders(uint32_t **orders, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		free(orders[i]);
	free(orders);
}

/*
 * The tables in place over the n (> 0) random orders of the check: the
 * mean efficiency of base LIDs into eff[0], of striped traffic (LMC > 0)
 * into eff[1], and the flows lost into *lost.
 */
static void score_check(struct oo_guard *g, uint32_t *const *orders,
			unsigned n, double eff[2], uint64_t *lost)
{
	uint64_t budget = OO_GUARD_BUDGET * OO_GUARD_POLISH_SEEDS / n;
	struct oo_eval_score one;
	unsigned i, t;

	eff[0] = eff[1] = 0.0;
	*lost = 0;
	for (t = 0; t <= (g->net.lids_per_port > 1); t++)
		for (i = 0; i < n; i++) {
			oo_eval_shift(&g->net, orders[i], g->num_ranks,
				      t ? OO_EVAL_SPREAD : 0, budget,
				      &g->work, &one);
			eff[t] += one.eff / n;
			*lost += one.lost;
		}
}

/*
 * Why the tables in place after a last step (scored in after) may not
 * replace those before them (a copy in was, scored in before, stock the
 * stock tables' scores to beat): NULL where they may, as last_step()
 * says.  Sets *c to the cell concerned, or -1.
 */
static const char *last_step_refused(struct oo_guard *g,
				     const struct oo_guard_stages *st,
				     const struct oo_eval_score *after,
				     const struct oo_eval_score *before,
				     const struct oo_eval_score *stock,
				     uint32_t *const *check, unsigned nc,
				     const double *check_before,
				     uint64_t lost_before, int64_t pairs_before,
				     int *c)
{
	struct oo_guard_sums sum_after, sum_before;
	double check_after[2];
	uint64_t lost_after;
	int64_t pairs_after;

	*c = first_drop(g, after, before);
	if (*c >= 0)
		return "they would score lower than before them in";
	*c = first_new_loss(g, after, before, stock);
	if (*c >= 0)
		return "they would score lower than the stock ones in";
	sum_scores(g, after, &sum_after);
	sum_scores(g, before, &sum_before);
	if (!sums_better(&sum_after, &sum_before))
		return "they would score no better on the whole";
	score_check(g, check, nc, check_after, &lost_after);
	if (lost_after > lost_before ||
	    check_after[0] < check_before[0] - OO_EVAL_EPSILON ||
	    check_after[1] < check_before[1] - OO_EVAL_EPSILON)
		return "they would score lower in random orders that neither "
		    "they nor the guard's cells hold";
	if (pairs_before < 0) {
		if (lost_ca_lids(g, st) != 0)
			return "the reach pass would leave CA LIDs without a "
			    "route";
	} else {
		pairs_after = lost_pairs_after_pass(g, st);
		if (pairs_after < 0 || pairs_after > pairs_before)
			return "the reach pass would leave more host/LID pairs "
			    "without a route";
	}
	if (closes_new_loop(g))
		return "they would close a credit loop among the routes the "
		    "CAs' traffic takes, where the stock tables close none";
	return NULL;
}

static const struct last_step_words {
	int judged;		/* the polish holds the judged random orders */
	const char *what;	/* the step, for "no ..." */
	const char *scores;	/* the tables after it, scored */
	const char *done;	/* the same, going on */
	const char *undone;	/* its moves, taken back */
} last_step_words[4] = {
	{ 0, "evening of the route counts", "evened", "the evened tables",
	  "the evening of the route counts is" },
	{ 0, "evening of the cables", "cables evened",
	  "the tables with their cables evened",
	  "the evening of the cables is" },
	{ 0, "evening over the ways", "ways evened",
	  "the tables with their ways evened",
	  "the evening over the ways is" },
	{ 1, "kicks", "kicked", "the kicked tables", "the kicks are" },
};

/*
 * For the evening over the ways: the channel dependencies of the tables
 * in place (every entry's, before the reach pass), which its moves must
 * keep free of cycles.  1 with *cdg ready (oo_cdg_free() it), over rn;
 * 0 where they close a cycle already or there is no memory (logged: no
 * such step then).
 */
static int ways_cdg(struct oo_guard *g, struct oo_reach_net *rn,
		    struct oo_cdg *cdg)
{
	int ret;

	oo_glue_reach_net(rn, &g->gn, g->net.lids_per_port);
	ret = oo_cdg_init(cdg, rn);
	if (ret == 1)
		return 1;
	if (ret < 0) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: no "
			"memory for the evening over the ways\n");
		return 0;
	}
	oo_cdg_free(cdg);
	OSM_LOG(g->log, OSM_LOG_VERBOSE, "osmoffset: stock guard: no evening "
		"over the ways: the channel dependencies of the tables close "
		"a cycle\n");
	return 0;
}

/*
 * The step itself on the tables in place, over n cells (LAST_WAYS over
 * ways, ways_cdg()'s graph): 0, or -1 where there is no memory for it
 * (logged).
 */
static int run_last_step(struct oo_guard *g, const struct oo_guard_stages *st,
			 enum last_step_kind kind,
			 const struct oo_polish_cell *cell, unsigned n,
			 struct oo_cdg *ways, struct oo_polish_result *res)
{
	int ret;

	if (kind == LAST_EVEN)
		ret = oo_polish_even(&g->net, g->gn.lft, g->num_hosts, cell, n,
				     OO_GUARD_POLISH_ENTRIES,
				     OO_GUARD_POLISH_WORK, res);
	else if (kind == LAST_CABLES)
		ret = oo_polish_cables(&g->net, g->gn.lft, g->num_hosts, cell,
				       n, OO_GUARD_POLISH_ENTRIES,
				       OO_GUARD_POLISH_WORK, res);
	else if (kind == LAST_WAYS)
		ret = oo_polish_ways(&g->net, g->gn.lft, g->num_hosts, cell,
				     n, OO_GUARD_POLISH_ENTRIES,
				     OO_GUARD_POLISH_WORK, ways, res);
	else
		ret = oo_polish_kicks(&g->net, g->gn.lft, g->num_hosts, cell,
				      n, OO_GUARD_POLISH_ENTRIES,
				      OO_GUARD_POLISH_WORK, st->polish_kicks,
				      0, res);
	if (ret)
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: no "
			"memory for the %s\n", last_step_words[kind].what);
	return ret;
}

/* What the step did (res), its steer steering cells, logged. */
static void log_last_step(const struct oo_guard *g, enum last_step_kind kind,
			  const struct oo_polish_result *res, unsigned steer)
{
	const char *budget = res->status == OO_POLISH_BUDGET ?
	    " (its budget spent)" : "";

	if (kind == LAST_EVEN)
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"route counts of the tables that stay evened where no "
			"round of the leaf order and its jobs is slower: "
			"moved %u entries%s\n", res->moved, budget);
	else if (kind == LAST_WAYS)
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"route counts of the tables that stay evened over "
			"equally short ways to other neighbours, every move "
			"free of credit loops, where no round of the leaf "
			"order and its jobs is slower: moved %u entries%s\n",
			res->moved, budget);
	else if (kind == LAST_CABLES)
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"route counts of the tables that stay evened over "
			"parallel cables where no round of the leaf order and "
			"its jobs is slower: moved %u entries%s\n", res->moved,
			budget);
	else
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %u "
			"kicks of the tables that stay, %u kept, moved %u "
			"entries%s: the leaf order and its jobs %.4f on "
			"average, against %.4f\n", res->kicks, res->kicked,
			res->moved, budget,
			res->eff_after / (steer ? steer : 1),
			res->eff_before / (steer ? steer : 1));
}

/*
 * Last, the tables that stay (those of ours, a mix or the stock ones,
 * polished or not), searched further by one step over the guard's cells:
 *   LAST_EVEN (with st->polish_even): their route counts evened
 *   (oo_polish_even()) where no round of the leaf order and its jobs is
 *   slower, over the polish's sample of random orders: those the guard
 *   judges are left to the check below, which a step that fits its
 *   sample does not sway;
 *   LAST_CABLES (with st->polish_cables): the same over parallel cables
 *   to one switch, any switch's entries (oo_polish_cables());
 *   LAST_WAYS (with st->polish_ways): the same over the equally short
 *   ways to other neighbours, each move free of credit loops among every
 *   entry (oo_polish_ways(), over ways_cdg());
 *   LAST_KICKS (with st->polish_kicks): kicks (oo_polish_kicks()) over
 *   the random orders the guard judges and the polish's sample.
 * Where those do not fit in memory, the check below holds the guard's
 * cells.  The new tables go on where they score at least as well in every
 * cell, better on the whole, lose no cell to the stock tables (scored in
 * stock) that the tables before did not, score at least as well in the
 * random orders of the check (check_orders(): held by neither the step
 * nor the guard's cells, more of them the fewer the ranks), leave no CA
 * LID without a route after the reach pass and close no credit loop the
 * stock tables do not (last_step_refused()); else the tables before go
 * back.  Where the tables before leave CA LIDs without a route after the
 * pass's first stage, the step must leave no more host/LID pairs without
 * a route after the whole pass as OpenSM runs it than they do
 * (lost_pairs_after_pass(): the pass's fills may hang on the entries
 * that move, and it counts them as they fall); where that is not known,
 * no step.
 */
void last_step(struct oo_guard *g, const struct oo_guard_stages *st,
	       const struct oo_eval_score *stock,
	       enum last_step_kind kind)
{
	const struct last_step_words *w = &last_step_words[kind];
	struct oo_eval_score before[OO_GUARD_MAX_CELLS];
	struct oo_eval_score after[OO_GUARD_MAX_CELLS];
	struct oo_polish_result res;
	struct oo_polish_cell *cell;
	struct oo_reach_net rn;
	struct oo_cdg cdg, *ways = NULL;
	const char *why, *unfit;
	uint32_t **check = NULL;
	double check_before[2];
	uint64_t lost_before;
	uint8_t *was;
	unsigned n, nc = 0, steer;
	int64_t pairs_before = -1;
	int c, reach_lost;

	if (!(st->variants & OO_GUARD_POLISH) ||
	    (kind == LAST_EVEN && !st->polish_even) ||
	    (kind == LAST_CABLES && !st->polish_cables) ||
	    (kind == LAST_WAYS && !st->polish_ways) ||
	    (kind == LAST_KICKS && !st->polish_kicks))
		return;
	if (kind == LAST_CABLES && !oo_polish_has_cables(&g->net)) {
		OSM_LOG(g->log, OSM_LOG_VERBOSE, "osmoffset: stock guard: no "
			"%s: no switch has two cables to one neighbour\n",
			w->what);
		return;
	}
	reach_lost = lost_ca_lids(g, st);
	if (reach_lost > 0)
		pairs_before = lost_pairs_after_pass(g, st);
	if (reach_lost < 0 || (reach_lost > 0 && pairs_before < 0)) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: no "
			"%s: the tables that stay leave CA LIDs without a "
			"route after the reach pass, and what the whole pass "
			"leaves is not known, or there is no memory to tell\n",
			w->what);
		return;
	}
	if (reach_lost > 0)
		OSM_LOG(g->log, OSM_LOG_VERBOSE, "osmoffset: stock guard: the "
			"tables that stay leave %d CA LIDs without a route "
			"after the reach pass's first stage and %" PRId64
			" host/LID pairs after the whole pass: the %s must "
			"leave no more pairs\n", reach_lost, pairs_before,
			w->what);
	/* before the tables are scored: where they loop, nothing to do */
	if (kind == LAST_WAYS) {
		if (!ways_cdg(g, &rn, &cdg))
			return;		/* logged */
		ways = &cdg;
	}
	was = malloc(total_lft(g) + 1);
	cell = calloc((size_t)OO_GUARD_MAX_CELLS * (OO_GUARD_SEEDS +
						     OO_GUARD_POLISH_SEEDS),
		      sizeof(*cell));
	if (!was || !cell) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: no "
			"memory for the %s\n", w->what);
		goto out;
	}
	nc = check_orders(g, &check);
	if (!nc) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: no "
			"memory for the %s\n", w->what);
		goto out;
	}
	copy_lfts(g, was, 1);
	score_tables(g, st, before);
	score_check(g, check, nc, check_before, &lost_before);
	n = polish_cells(g, NULL, 0, w->judged, cell, &steer);
	if (run_last_step(g, st, kind, cell, n, ways, &res))
		goto out;
	unfit = polish_unfit(&res);
	if (unfit) {
		OSM_LOG(g->log, OSM_LOG_VERBOSE, "osmoffset: stock guard: no "
			"%s: %s\n", w->what, unfit);
		goto out;
	}
	log_last_step(g, kind, &res, steer);
	if (!res.moved)
		goto out;
	score_tables(g, st, after);
	log_scores(g, w->scores, after);
	why = last_step_refused(g, st, after, before, stock, check, nc,
				check_before, lost_before, pairs_before, &c);
	if (!why) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s go "
			"on: at least as good in every cell, better on the "
			"whole\n", w->done);
		polish_profiles(g, was);
		goto out;
	}
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: %s taken "
		"back: %s%s%s\n", w->undone, why, c >= 0 ? " " : "",
		c >= 0 ? g->cell[c].name : "");
	copy_lfts(g, was, 0);
out:
	if (ways)
		oo_cdg_free(ways);
	free_check_orders(check, nc);
	free(cell);
	free(was);
}
