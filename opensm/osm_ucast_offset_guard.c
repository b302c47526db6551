/*
 * osmoffset - the stock guard: never route worse than the stock engine
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * OpenSM glue.  Port offsetting builds its LFTs (and variants of them:
 * each level's lanes by its design where that is narrower than its
 * widest trunk, the live slots of plans that miss few kept, the level-1
 * digits of the CAs below one switch apart, further LID offsets apart
 * around the slots; the best goes on); they are scored with
 * oo_eval_shift() (osm_offset_eval.c) in the rank orders a job meets:
 * the compute nodes (the hosts of the leaves; option spine_cas: the CAs
 * on spines or cores too) grouped by leaf, each quarter and each half of
 * that order, and seeded random orders, with base-LID and (LMC > 0)
 * striped traffic.
 * OpenSM's own LFT stage (the one updn and minhop use) runs too, on the
 * same hop tables, and its tables are scored the same way.  Ours stay
 * where they score at least as well in every cell (and, where the stock
 * tables leave every CA LID a route, leave every one a route too); else
 * a mix where the
 * host LIDs ours leave without a route, then the flows of the job blocks
 * ours lost take the stock routes, if that scores at least as well
 * everywhere; else ours built again with their lanes shared
 * (st->ours_with), or a mix of those; else the stock tables, byte for
 * byte what the engine would have built without the plugin.  The log says
 * which and why.
 * This file builds the stock tables and ours and chooses; the rank orders,
 * cells and scores are in osm_ucast_offset_guard_score.c, the mixes with
 * the stock tables in _mix.c, the variants of ours in _variants.c, the
 * polish and the last steps in _polish.c, their shared state in
 * osmoffset_guard.h.
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

static void free_guard(struct oo_guard *g)
{
	unsigned i;

	oo_glue_net_free(&g->gn);
	oo_ca_ports_free(&g->ca);
	oo_ca_ports_free(&g->all_ca);
	free(g->leaf_order);
	free(g->job_sw);
	for (i = 0; i < OO_GUARD_SEEDS + OO_GUARD_POLISH_SEEDS; i++)
		free(g->random_order[i]);
	for (i = 0; i < OO_GUARD_LEAF_SEEDS + OO_GUARD_POLISH_LEAF_SEEDS; i++)
		free(g->leaf_shuffled[i]);
	free(g->prof_before);
	free(g->prof_ours);
	free(g->prof_stock);
	free(g->lft_ours);
	free(g->lft_stock);
	free(g->stock_row);
	free(g->own_row);
	free(g->stock_lost);
	free(g->own_lost);
	free(g->prof_own);
	free(g->lft_own);
	free(g->lft_unfilled);
	free(g->lft_mix);
	free(g->mix_score);
	oo_eval_work_free(&g->work);
}

/*
 * The switches (each with its index in sw->priv while the guard runs),
 * their links and tables, and the hosts: CA ports with a LID, cabled to a
 * switch, that run jobs (SHARP aggregation nodes do not).
 */
static int index_subnet(struct oo_guard *g)
{
	if (oo_glue_net_build(&g->gn, g->osm) ||
	    oo_ca_ports_alloc(&g->ca, g->osm, 1) ||
	    oo_ca_ports_alloc(&g->all_ca, g->osm, 1))
		return -1;
	g->sw = g->gn.sw;
	g->num_sw = g->gn.num_sw;
	g->net.stride = g->gn.stride;
	g->next = g->gn.next;
	g->lft = (const uint8_t **)g->gn.lft;
	g->lft_len = g->gn.lft_len;
	g->num_hosts = oo_glue_ca_ports(g->osm, 0, &g->ca);
	g->num_all_ca = oo_glue_ca_ports(g->osm, 1, &g->all_ca);
	g->host_sw = g->ca.sw;
	g->host_port = g->ca.port;
	g->host_lid = g->ca.lid;
	g->host_key = g->ca.desc;
	return 0;
}

static int prepare_guard(struct oo_guard *g)
{
	g->net.lids_per_port = 1U << g->osm->subn.opt.lmc;
	if (index_subnet(g) || make_orders(g))
		return -1;
	g->net.num_sw = g->num_sw;
	g->net.next = g->next;
	g->net.lft = g->lft;
	g->net.lft_len = g->lft_len;
	g->net.host_sw = g->host_sw;
	g->net.host_port = g->host_port;
	g->net.host_lid = g->host_lid;
	make_cells(g);
	return oo_eval_work_init(&g->work, (size_t)g->num_sw * g->net.stride);
}

/*
 * OpenSM's own LFT stage, as on a fresh start: it ignores the entries the
 * switches hold.  Left to itself it keeps each entry that is still on a
 * shortest path, and those are the tables of the routing before (ours, a
 * mix or stock's), so that two sweeps of the same fabric would score
 * against different stock tables and could keep different ones.
 * Returns what the stage returns.
 */
static int build_stock(const struct oo_guard *g,
		       const struct oo_guard_stages *st)
{
	boolean_t ignore = g->osm->subn.ignore_existing_lfts;
	int ret;

	g->osm->subn.ignore_existing_lfts = TRUE;
	ret = st->stock(st->stock_ctx);
	g->osm->subn.ignore_existing_lfts = ignore;
	return ret;
}

/* Our hop tables back, after the stock engine's: 0, or -1 (logged). */
static int our_hops_back(struct oo_guard *g, const struct oo_guard_stages *st)
{
	if (!st->our_hops(st->ctx))
		return 0;
	OSM_LOG(g->log, OSM_LOG_ERROR, "ERR 9F0A: stock guard: the hop "
		"tables over the completed roots could not be built again "
		"(no memory); the LFTs stay, the hop tables are as the "
		"routing engine leaves them\n");
	return -1;
}

/*
 * The stock engine's hop tables by hops (st->stock_hops or
 * st->checked_hops), then its LFT stage: 0 with those tables in place,
 * else -1 (the hop tables are as the failed stage left them).
 */
static int build_over(struct oo_guard *g, const struct oo_guard_stages *st,
		      oo_lft_builder hops)
{
	if (hops(st->ctx))
		return -1;
	restore_profiles(g, g->prof_before);
	return build_stock(g, st);
}

/*
 * Ours and lft_stock are over hop tables whose roots port offsetting
 * changed; the stock engine routes over its own roots.  Build its hop
 * tables and LFTs into lft_own and score them into own.  Where updn finds
 * no root or its tables have a credit loop, they are nothing to fall back
 * to: those over the roots port offsetting checked take their place
 * (st->checked_hops, when it completed them), else none (lft_stock's).
 * Returns 1 with the stock engine's hop tables in place (the caller
 * brings ours back if ours or a mix stays), 0 with ours in place and
 * lft_stock's tables (own is theirs then), or -1 (a stage failed; our hop
 * tables are back, the LFTs in place are undefined).
 */
static int build_own(struct oo_guard *g, const struct oo_guard_stages *st,
		     const struct oo_eval_score *theirs,
		     struct oo_eval_score *own)
{
	const char *why = "updn finds no root switch";
	const char *whose = "stock over its own roots";
	int acyclic;

	if (!build_over(g, st, st->stock_hops)) {
		acyclic = oo_reach_tables_acyclic(g->osm);
		if (acyclic == 1) {
			OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock "
				"guard: the roots are changed; the stock "
				"tables to beat are updn's own, over its "
				"own roots\n");
			goto built;
		}
		why = acyclic ? "no memory to check them" :
		    "its tables have a credit loop";
	}
	if (st->checked_hops && !build_over(g, st, st->checked_hops)) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: "
			"updn's own roots are no fallback (%s); the stock "
			"tables to beat are over the roots port offsetting "
			"checked\n", why);
		whose = "stock over the checked roots";
		goto built;
	}
	if (our_hops_back(g, st))
		return -1;
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: updn's own "
		"roots are no fallback (%s); the stock tables to beat are "
		"over port offsetting's roots\n", why);
	copy_lfts(g, g->lft_stock, 0);
	restore_profiles(g, g->prof_stock);
	free(g->lft_own);
	g->lft_own = NULL;
	memcpy(own, theirs, sizeof(*own) * g->num_cells);
	return 0;
built:
	save_profiles(g, g->prof_own);
	copy_lfts(g, g->lft_own, 1);
	score_tables(g, st, own);
	log_scores(g, whose, own);
	return 1;
}

/*
 * What ours_reach_more() counts of the tables in place (lost_after_stage()):
 * with the option leaf_shuffles, the CA LIDs the pass as OpenSM runs it on
 * VL0 leaves without a route (st->fill_final: LIDs that stay out of reach
 * may take another LID's routes of their port), else those of the whole
 * pass without such routes (st->fill_whole), as before the option.
 */
static int reach_count(struct oo_guard *g, const struct oo_guard_stages *st)
{
	return lost_after_stage(g, st, g->leaf_shuffles ? st->fill_final :
				st->fill_whole);
}

/*
 * What ours_reach_more() tells an admin whose tables lose a cell for
 * reach: with lanes above VL0 the guard keeps the tables that won
 * (lanes_beyond_vl0) and the pass may take their turns there.
 */
#define OO_REACH_LANES_HINT " (" OO_LANES_REMEDY ", and the tables that " \
	"won stay)"

/* What ours_reach_more() settles on. */
#define OO_REACH_KEEP 0		/* the tables in place */
#define OO_REACH_OURS 1		/* port offsetting's (lft_ours) */
#define OO_REACH_MIX 2		/* the mix that lost a cell (lft_mix) */

/* How many cells a scores lower than stock in (cell_lost()). */
static unsigned count_losses(const struct oo_guard *g,
			     const struct oo_eval_score *a,
			     const struct oo_eval_score *stock)
{
	unsigned c, n = 0;

	for (c = 0; c < g->num_cells; c++)
		n += cell_lost(g, c, &a[c], &stock[c]);
	return n;
}

/*
 * The stock tables stay (polished, or with port offsetting's further LID
 * offsets), though they lose no cell and port offsetting's do.  Where
 * OpenSM's whole reach pass would leave more CA LIDs of them without a
 * route from some CA (reach_count()) than of ours (lft_ours) or, with the
 * option leaf_shuffles, of the mix of ours and stock that lost a cell
 * (lft_mix, keep_or_mix(); only where its tables have no credit loop),
 * the one of those two that leaves the fewest goes on instead (on a tie,
 * the one that loses fewer cells to stock, scored in stock; else ours):
 * reaching every LID comes first.  Most often those are the LIDs of
 * management HCAs on spines, which no cell scores (they run no rank), and
 * whose turns the pass cannot take loop-free beside the stock routes; at
 * LMC > 0 the pass may also lend such a LID the routes of another LID of
 * its port (oo_reach_fill_vls()), which only the count of the option
 * leaf_shuffles takes.  Returns what goes on (OO_REACH_*), the tables in
 * place as they were.
 */
static int ours_reach_more(struct oo_guard *g,
			   const struct oo_guard_stages *st,
			   const struct oo_eval_score *ours,
			   const struct oo_eval_score *stock)
{
	struct oo_guard_snapshot was = { NULL, NULL };
	int kept, lost_ours = -1, lost_mix = -1, pick = OO_REACH_KEEP;
	unsigned mix_losses = 0;

	/* -1 where the pass is not known: nothing to weigh */
	kept = reach_count(g, st);
	if (kept <= 0 || take_snapshot(g, &was))
		goto out;
	copy_lfts(g, g->lft_ours, 0);
	lost_ours = reach_count(g, st);
	if (g->lft_mix) {
		copy_lfts(g, g->lft_mix, 0);
		lost_mix = reach_count(g, st);
		/* it may hold updn's own routes, over its own roots */
		if (lost_mix >= 0 && oo_reach_tables_acyclic(g->osm) != 1)
			lost_mix = -1;
	}
	put_back_snapshot(g, &was);
	if (lost_ours >= 0 && lost_ours < kept)
		pick = OO_REACH_OURS;
	if (lost_mix >= 0)
		mix_losses = count_losses(g, g->mix_score, stock);
	if (lost_mix >= 0 && lost_mix < kept &&
	    (pick == OO_REACH_KEEP || lost_mix < lost_ours ||
	     (lost_mix == lost_ours &&
	      mix_losses < count_losses(g, ours, stock))))
		pick = OO_REACH_MIX;
	if (pick == OO_REACH_OURS)
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"tables that won leave %d CA LIDs without a route from "
			"some CA after the reach pass, port offsetting's %d: "
			"port offsetting's go on, though they score lower in a "
			"cell%s\n", kept, lost_ours, OO_REACH_LANES_HINT);
	else if (pick == OO_REACH_MIX)
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"tables that won leave %d CA LIDs without a route from "
			"some CA after the reach pass, the mix of port "
			"offsetting's and the stock ones %d (port offsetting's "
			"%d): the mix goes on, though it scores lower in %u "
			"cells%s\n", kept, lost_mix, lost_ours, mix_losses,
			OO_REACH_LANES_HINT);
out:
	free_snapshot(&was);
	return pick;
}

/*
 * Under minhop, whether the stock tables in place (lft_stock, scored in
 * theirs) close no credit loop among the routes the CAs' traffic takes.
 * The guard builds them as on a first sweep, ignoring the tables the
 * switches hold (build_stock()); on a sweep after a change a stock SM
 * keeps the entries its switches hold where they are still shortest, and
 * its tables may close no loop where those of a fresh build close one.
 * So where the fresh tables close one and the switches hold tables
 * (OpenSM does not ignore them on this sweep), the stage runs again as
 * OpenSM would run it, keeping the entries the switches hold (of the
 * tables that went on last); where those close none they become the
 * stock tables to beat and to fall back to (lft_stock, prof_stock, their
 * scores in theirs and lost_stock; logged).
 */
static int stock_free_of_loops(struct oo_guard *g,
			       const struct oo_guard_stages *st,
			       struct oo_eval_score *theirs)
{
	int acyclic = oo_reach_ca_routes_acyclic(g->osm) == 1;

	if (acyclic || g->osm->subn.ignore_existing_lfts)
		return acyclic;
	restore_profiles(g, g->prof_before);
	if (st->stock(st->stock_ctx) ||
	    oo_reach_ca_routes_acyclic(g->osm) != 1) {
		copy_lfts(g, g->lft_stock, 0);
		restore_profiles(g, g->prof_stock);
		return 0;
	}
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the stock "
		"LFTs close a credit loop among the routes the CAs' traffic "
		"takes; the stock LFT stage as OpenSM runs it on this sweep, "
		"keeping the entries the switches hold where they are still "
		"shortest, closes none: those are the stock tables to beat\n");
	save_profiles(g, g->prof_stock);
	copy_lfts(g, g->lft_stock, 1);
	score_tables(g, st, theirs);
	log_scores(g, "stock, the switches' entries kept", theirs);
	g->lost_stock = lost_ca_lids(g, st);
	return 1;
}

/*
 * Whichever tables the guard picked, they must not close a credit loop
 * among the routes the CAs' traffic takes where the stock tables close
 * none (closes_new_loop()): else the stock tables go on, as the LFT stage
 * built them (logged).  Every candidate that may close one is checked
 * before it goes on; this holds for any that is not.
 */
static void stock_if_loop_closed(struct oo_guard *g)
{
	if (!closes_new_loop(g))
		return;
	OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the tables "
		"that won close a credit loop among the routes the CAs' "
		"traffic takes, where the stock tables close none: the stock "
		"LFTs go on, as routing engine's own stage built them\n");
	copy_lfts(g, g->lft_stock, 0);
	restore_profiles(g, g->prof_stock);
}

/*
 * Ours are built and in place.  Variants of them replace them if they
 * score better (try_variants()).  Build the stock tables too and keep
 * ours, else a mix, else stock, whichever first scores at least as well as
 * stock in every cell.  When our hop tables are over changed roots
 * (st->stock_hops), the scores to beat and the fallback are the stock
 * engine's own tables over its own roots (build_own()), while the mix
 * takes its entries from the stock LFT stage over our hop tables (entries
 * of two up/down rankings could close a credit loop together).
 * Returns 0 with one of them in place, -1 when the guard could not
 * decide (ours stay).
 */
static int compare_with_stock(struct oo_guard *g,
			      const struct oo_guard_stages *st,
			      struct oo_eval_score *ours)
{
	struct oo_eval_score *theirs, *mixed, *own, *scratch;
	size_t ports = total_ports(g) + 1, lfts = total_lft(g) + 1;
	int ret = -1, own_hops = 0, polished, kept_lost;

	theirs = calloc(g->num_cells + 1, sizeof(*theirs));
	mixed = calloc(g->num_cells + 1, sizeof(*mixed));
	scratch = calloc(g->num_cells + 1, sizeof(*scratch));
	own = st->stock_hops ? calloc(g->num_cells + 1, sizeof(*own)) : theirs;
	g->prof_ours = malloc(sizeof(uint32_t) * ports);
	g->prof_stock = malloc(sizeof(uint32_t) * ports);
	g->lft_ours = malloc(lfts);
	g->lft_stock = malloc(lfts);
	if (st->stock_hops) {
		g->prof_own = malloc(sizeof(uint32_t) * ports);
		g->lft_own = malloc(lfts);
	}
	if (!theirs || !mixed || !scratch || !own || !g->prof_ours ||
	    !g->prof_stock || !g->lft_ours || !g->lft_stock ||
	    (st->stock_hops && (!g->prof_own || !g->lft_own)))
		goto out;
	save_profiles(g, g->prof_ours);
	copy_lfts(g, g->lft_ours, 1);
	g->lost_ours = lost_ca_lids(g, st);
	if (st->ours_with)
		try_variants(g, st, ours, scratch);
	restore_profiles(g, g->prof_before);
	g->stock_cpu = oo_thread_cpu_seconds();
	if (build_stock(g, st))
		goto ours_back;
	g->stock_cpu = oo_thread_cpu_seconds() - g->stock_cpu;
	save_profiles(g, g->prof_stock);
	copy_lfts(g, g->lft_stock, 1);
	score_tables(g, st, theirs);
	log_scores(g, st->stock_hops ? "stock over the changed roots" :
		   "stock", theirs);
	if (st->stock_hops) {
		own_hops = build_own(g, st, theirs, own);
		if (own_hops < 0) {
			own_hops = 0;
			goto ours_back;
		}
	}
	/* the stock tables to beat are in place */
	g->lost_stock = lost_ca_lids(g, st);
	g->stock_loop_free = st->routes_may_loop && !own_hops &&
	    stock_free_of_loops(g, st, theirs);
	ret = 0;
	if (st->ours_with && (st->variants & OO_GUARD_POLISH))
		try_polish(g, st, ours, own, scratch);
	switch (keep_or_mix(g, st, "port offsetting's LFTs",
			    "a mix of both would", ours, own, mixed)) {
	case OO_GUARD_KEEP:
		goto ours_back;
	case OO_GUARD_MIX:
		goto our_hops;
	}
	/* not over completed roots: our hop tables are still in place */
	if (!own_hops && st->ours_with &&
	    try_shared(g, st, own, scratch, mixed))
		goto our_hops;
	/* the stock engine's own tables; its hop tables are in place */
	copy_lfts(g, own_hops ? g->lft_own : g->lft_stock, 0);
	restore_profiles(g, own_hops ? g->prof_own : g->prof_stock);
	polished = (st->variants & OO_GUARD_POLISH) &&
	    try_polish_stock(g, st, own_hops ? g->lft_own : g->lft_stock,
			     own_hops ? g->prof_own : g->prof_stock, own,
			     scratch, &kept_lost);
	if (!polished) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"stock LFTs stay, as routing engine's own stage built "
			"them%s\n", own_hops ? ", over its own roots" : "");
		kept_lost = g->lost_stock;
	}
	/* kept_lost, the lost_ca_lids() of the tables that stay, is their
	   lost_in_place() too: they lose no more CA LIDs than the stock
	   tables to beat, so none where those lose none, and the whole
	   reach pass counts again only there (lost_after_whole_pass()) */
	if (g->net.lids_per_port > 1)
		try_offsets_of_ours(g, st, polished ? scratch : own,
				    kept_lost, own, mixed);
	else if (st->variants & OO_GUARD_POLISH)
		try_polish_base_hops(g, st, polished ? scratch : own,
				     kept_lost, own, mixed);
	switch (ours_reach_more(g, st, ours, own)) {
	case OO_REACH_OURS:
		goto ours_back;
	case OO_REACH_MIX:
		copy_lfts(g, g->lft_mix, 0);
		count_profiles(g);
		goto our_hops;
	}
	goto out;
ours_back:
	copy_lfts(g, g->lft_ours, 0);
	restore_profiles(g, g->prof_ours);
our_hops:
	if (own_hops)
		our_hops_back(g, st);
out:
	if (!ret) {
		last_step(g, st, own, LAST_EVEN);
		last_step(g, st, own, LAST_CABLES);
		last_step(g, st, own, LAST_WAYS);
		last_step(g, st, own, LAST_KICKS);
		stock_if_loop_closed(g);
	}
	if (own != theirs)
		free(own);
	free(theirs);
	free(mixed);
	free(scratch);
	return ret;
}

int oo_guard_lfts(struct osm_opensm *osm, const struct oo_guard_stages *st)
{
	struct oo_guard g;
	struct oo_eval_score *ours = NULL;
	double cpu;
	int ret = -1;

	memset(&g, 0, sizeof(g));
	g.osm = osm;
	g.log = &osm->log;
	g.spine_cas = !!(st->variants & OO_GUARD_SPINE_CAS);
	g.leaf_shuffles = !!(st->variants & OO_GUARD_LEAF_SHUFFLES);
	if (prepare_guard(&g) ||
	    !(g.prof_before = malloc(sizeof(uint32_t) *
				     (total_ports(&g) + 1))) ||
	    !(ours = calloc(g.num_cells + 1, sizeof(*ours))) ||
	    (st->fill && !(g.lft_unfilled = malloc(total_lft(&g) + 1)))) {
		OSM_LOG(g.log, OSM_LOG_ERROR, "ERR 9F08: stock guard: no "
			"memory; port offsetting's LFTs are used unchecked\n");
		free_guard(&g);
		free(ours);
		return st->ours(st->ctx);
	}
	save_profiles(&g, g.prof_before);
	if (st->ours(st->ctx)) {
		restore_profiles(&g, g.prof_before);
		goto out;
	}
	ret = 0;
	cpu = oo_thread_cpu_seconds();
	score_tables(&g, st, ours);
	log_scores(&g, "offsetting", ours);
	if (!st->stock)
		OSM_LOG(g.log, OSM_LOG_INFO, "osmoffset: stock guard: "
			"OpenSM's LFT stage is not known; port offsetting's "
			"LFTs are used unchecked\n");
	else if (compare_with_stock(&g, st, ours))
		OSM_LOG(g.log, OSM_LOG_ERROR, "ERR 9F08: stock guard: no "
			"memory or the stock stage failed; port offsetting's "
			"LFTs are used unchecked\n");
	OSM_LOG(g.log, OSM_LOG_VERBOSE, "osmoffset: stock guard: %u hosts "
		"(%u off the leaves, no ranks), %u cells (%.3f s CPU, of "
		"which %.3f s the stock LFT stage)\n", g.num_hosts,
		g.num_hosts - g.num_ranks, g.num_cells,
		oo_thread_cpu_seconds() - cpu, g.stock_cpu);
out:
	free(ours);
	free_guard(&g);
	return ret;
}
