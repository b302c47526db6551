/*
 * osmoffset - the stock guard's rank orders, cells and scores
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * The rank orders a job meets (the compute nodes grouped by leaf, its
 * quarter and half jobs, seeded shuffles), the cells the tables are scored
 * in, the scoring of the tables in place (oo_eval_shift(),
 * osm_offset_eval.c), their copies saved and put back, and the CA LIDs they
 * leave without a route after the reach pass.
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

static const struct oo_guard *sort_guard;

/* A switch's node description, "" where OpenSM has none. */
static const char *switch_name(const struct oo_guard *g, uint32_t s)
{
	const char *desc = g->sw[s]->p_node->print_desc;

	return desc ? desc : "";
}

/*
 * Hosts grouped by switch, the leaves by their names, then by their first
 * host name (the LFT build's routing order); the hosts that run jobs
 * (those of the leaves) first, those cabled to spines or cores
 * (management HCAs) after them, by their first host name.  With the
 * option spine_cas those rank too, and come first, as in the routing
 * order.
 */
static int cmp_leaf_order(const void *a, const void *b)
{
	const struct oo_guard *g = sort_guard;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t sx = g->host_sw[x], sy = g->host_sw[y];
	int r;

	if (sx != sy) {
		if (g->job_sw[sx] != g->job_sw[sy]) {
			int first = g->spine_cas ? !g->job_sw[sx] :
			    g->job_sw[sx];

			return first ? -1 : 1;
		}
		if (g->job_sw[sx]) {
			r = oo_natural_cmp(switch_name(g, sx),
					   switch_name(g, sy));
			if (r)
				return r;
		}
		r = oo_natural_cmp(g->host_key[x], g->host_key[y]);
		if (r)
			return r;
		return sx < sy ? -1 : 1;
	}
	if (g->host_port[x] != g->host_port[y])
		return g->host_port[x] < g->host_port[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Whether the hosts of each switch run jobs (oo_rank_job_switches(), over
 * the cables between switches and the hosts of each): those of the
 * leaves, not management HCAs on spines or cores.  NULL with no memory.
 */
static uint8_t *find_job_switches(const struct oo_guard *g)
{
	unsigned stride = g->net.stride, s, p, h, n = 0;
	unsigned *first = calloc(g->num_sw + 1, sizeof(*first));
	unsigned *hosts = calloc(g->num_sw + 1, sizeof(*hosts));
	struct oo_rank_link *link = calloc((size_t)g->num_sw * stride + 1,
					   sizeof(*link));
	uint8_t *leaf = calloc(g->num_sw + 1, 1);
	struct oo_rank_graph rg;

	if (first && hosts && link && leaf) {
		for (s = 0; s < g->num_sw; s++) {
			first[s] = n;
			for (p = 1; p < stride; p++) {
				uint32_t to = g->next[(size_t)s * stride + p];

				if (to == OO_EVAL_NONE || to == s)
					continue;
				link[n].to = to;
				link[n++].port = (uint8_t)p;
			}
		}
		first[g->num_sw] = n;
		for (h = 0; h < g->num_hosts; h++)
			hosts[g->host_sw[h]]++;
		memset(&rg, 0, sizeof(rg));
		rg.num_sw = g->num_sw;
		rg.stride = stride;
		rg.first = first;
		rg.link = link;
		rg.hosts = hosts;
		rg.order = NULL;	/* nothing is ranked */
		if (oo_rank_job_switches(&rg, leaf)) {
			free(leaf);
			leaf = NULL;
		}
	} else {
		free(leaf);
		leaf = NULL;
	}
	free(first);
	free(hosts);
	free(link);
	return leaf;
}

/* Give every host the smallest host name found on its switch. */
static void assign_switch_keys(struct oo_guard *g)
{
	const char **first = calloc(g->num_sw + 1, sizeof(*first));
	unsigned h;

	if (!first)
		return;		/* names then order within a switch only */
	for (h = 0; h < g->num_hosts; h++) {
		const char **k = &first[g->host_sw[h]];

		if (!*k || oo_natural_cmp(g->host_key[h], *k) < 0)
			*k = g->host_key[h];
	}
	for (h = 0; h < g->num_hosts; h++)
		g->host_key[h] = first[g->host_sw[h]];
	free(first);
}

/*
 * The ranks of leaf_order shuffled with seed (oo_eval_shuffle()), in a
 * new array (room for every host), or NULL where there is no memory.
 */
uint32_t *shuffled_ranks(const struct oo_guard *g, uint64_t seed)
{
	uint32_t *order = malloc(sizeof(uint32_t) * (g->num_hosts + 1));

	if (!order)
		return NULL;
	memcpy(order, g->leaf_order, sizeof(uint32_t) * g->num_ranks);
	oo_eval_shuffle(order, g->num_ranks, seed);
	return order;
}

/*
 * The ranks of leaf_order with the leaves shuffled (leaf_shuffled, seeds
 * 101 on for the guard, 201 on for the polish), where at least two leaves
 * have ranks.  Returns 0, or -1 with no memory.
 */
static int shuffle_leaves(struct oo_guard *g)
{
	uint32_t *run = malloc(sizeof(uint32_t) * (g->num_ranks + 1));
	unsigned i, runs = 0;

	if (!run)
		return -1;
	for (i = 0; i < OO_GUARD_LEAF_SEEDS + OO_GUARD_POLISH_LEAF_SEEDS;
	     i++) {
		uint64_t seed = i < OO_GUARD_LEAF_SEEDS ? 101 + i :
		    201 + i - OO_GUARD_LEAF_SEEDS;

		g->leaf_shuffled[i] = malloc(sizeof(uint32_t) *
					     (g->num_ranks + 1));
		if (!g->leaf_shuffled[i]) {
			free(run);
			return -1;
		}
		runs = oo_eval_shuffle_runs(g->leaf_order, g->host_sw,
					    g->num_ranks, seed, run,
					    g->leaf_shuffled[i]);
	}
	free(run);
	if (runs < 2)
		for (i = 0; i < OO_GUARD_LEAF_SEEDS +
		     OO_GUARD_POLISH_LEAF_SEEDS; i++) {
			free(g->leaf_shuffled[i]);
			g->leaf_shuffled[i] = NULL;
		}
	return 0;
}

/*
 * The rank orders: the hosts of the leaves (num_ranks of them) in leaf
 * order, and shuffles of it (of its hosts; with the option leaf_shuffles,
 * of its leaves too).  A job runs on those: the CAs cabled to spines or
 * cores (management HCAs) run none, and they would shift every job block
 * after them by as many ranks where their names sort first ("mgmt01"
 * before "node001").  Their LIDs are still routed and checked
 * (lost_ca_lids()).  Where fewer than two leaves have hosts
 * (oo_rank_job_switches()), or with the option spine_cas, every host
 * runs a rank (with spine_cas those CAs first, cmp_leaf_order()).
 */
int make_orders(struct oo_guard *g)
{
	unsigned h, i;

	g->leaf_order = calloc(g->num_hosts + 1, sizeof(*g->leaf_order));
	g->job_sw = find_job_switches(g);
	if (!g->leaf_order || !g->job_sw)
		return -1;
	for (h = 0; h < g->num_hosts; h++)
		g->leaf_order[h] = h;
	assign_switch_keys(g);
	sort_guard = g;
	qsort(g->leaf_order, g->num_hosts, sizeof(*g->leaf_order),
	      cmp_leaf_order);
	sort_guard = NULL;
	for (h = 0; h < g->num_hosts; h++)
		g->num_ranks += g->spine_cas || g->job_sw[g->host_sw[h]];
	for (i = 0; i < OO_GUARD_SEEDS + OO_GUARD_POLISH_SEEDS; i++) {
		g->random_order[i] = shuffled_ranks(g, i + 1);
		if (!g->random_order[i])
			return -1;
	}
	return g->leaf_shuffles ? shuffle_leaves(g) : 0;
}

static void add_cell(struct oo_guard *g, const char *name, unsigned part,
		     uint32_t *const *order, unsigned num_orders, unsigned n)
{
	int spread;

	for (spread = 0; spread <= (g->net.lids_per_port > 1); spread++) {
		struct oo_cell *c = &g->cell[g->num_cells++];

		snprintf(c->name, sizeof(c->name), "%s%.0u %s", name, part,
			 spread ? "spread" : "base");
		memcpy(c->order, order, sizeof(*order) * num_orders);
		c->num_orders = num_orders;
		c->num_sample = 0;
		c->n = n;
		c->traffic = spread ? OO_EVAL_SPREAD : 0;
		c->slack = num_orders > 1 ? OO_GUARD_RANDOM_SLACK : 0.0;
		c->lost_only = 0;
		g->num_base_cells += !spread;
		g->num_eff_cells++;
	}
}

/*
 * Where some hosts run no rank (CAs cabled to spines or cores), the leaf
 * order of every host, scored for the flows lost only: their LIDs must
 * stay routed from every host as well as the stock tables route them
 * (their efficiency is management traffic's, and steers nothing).
 */
static void add_lost_only_cells(struct oo_guard *g)
{
	unsigned c = g->num_cells;

	if (g->num_ranks == g->num_hosts)
		return;
	add_cell(g, "every host, flows lost", 0, &g->leaf_order, 1,
		 g->num_hosts);
	for (; c < g->num_cells; c++) {
		g->cell[c].lost_only = 1;
		g->cell[c].slack = 1.0;
		g->num_base_cells -= !g->cell[c].traffic;
		g->num_eff_cells--;
	}
}

/*
 * Leaf order with the traffic of each further LID offset alone (what an
 * MPI that takes one path per offset sends over base + k): the last cells.
 */
static void add_offset_cells(struct oo_guard *g)
{
	unsigned k;

	g->first_offset_cell = g->num_cells;
	for (k = 1; k < g->net.lids_per_port; k++) {
		struct oo_cell *c = &g->cell[g->num_cells++];

		snprintf(c->name, sizeof(c->name), "leaf order base+%u", k);
		c->order[0] = g->leaf_order;
		c->num_orders = 1;
		c->n = g->num_ranks;
		c->traffic = (int)k;
		c->slack = 0.0;
		c->lost_only = 0;
		g->num_eff_cells++;
	}
}

/*
 * The polish's own orders (num of order) of the cells add_cell() added
 * last, one of each traffic.
 */
static void set_sample(struct oo_guard *g, uint32_t *const *order,
		       unsigned num)
{
	unsigned traffics = g->net.lids_per_port > 1 ? 2 : 1, c;

	for (c = g->num_cells - traffics; c < g->num_cells; c++) {
		memcpy(g->cell[c].sample, order, sizeof(*order) * num);
		g->cell[c].num_sample = num;
	}
}

/*
 * One cell of the leaf order with its leaves shuffled (leaf_shuffled):
 * its parts-th parts (1, 4 or 2: the whole order, its quarter or its half
 * jobs) in each of the guard's shuffles, and in the polish's first
 * shuffle (every shuffle of it for the whole order).  Blocks are those of
 * lft-analyze --job: n / parts ranks each.
 */
static void add_shuffled_leaf_cell(struct oo_guard *g, const char *name,
				   unsigned parts)
{
	uint32_t *order[OO_GUARD_SEEDS], *sample[OO_GUARD_POLISH_SEEDS];
	unsigned size = g->num_ranks / parts, s, q, n = 0, m = 0;

	for (s = 0; s < OO_GUARD_LEAF_SEEDS; s++)
		for (q = 0; q < parts; q++)
			order[n++] = g->leaf_shuffled[s] + q * size;
	if (parts == 1)
		for (s = 0; s < OO_GUARD_POLISH_LEAF_SEEDS; s++)
			sample[m++] = g->leaf_shuffled[OO_GUARD_LEAF_SEEDS + s];
	else
		for (q = 0; q < parts; q++)
			sample[m++] = g->leaf_shuffled[OO_GUARD_LEAF_SEEDS] +
			    q * size;
	add_cell(g, name, 0, order, n, size);
	set_sample(g, sample, m);
}

/*
 * The leaf order, its quarter and its half jobs with the leaves shuffled,
 * each as the mean over the guard's shuffles, where two leaves or more
 * have ranks: tables must not beat stock in the one leaf order alone.
 */
static void add_shuffled_leaf_cells(struct oo_guard *g)
{
	unsigned n = g->num_ranks;

	if (!g->leaf_shuffled[0])
		return;
	add_shuffled_leaf_cell(g, "leaves shuffled", 1);
	if (n >= 8)
		add_shuffled_leaf_cell(g, "quarter jobs, leaves shuffled", 4);
	if (n >= 4)
		add_shuffled_leaf_cell(g, "half jobs, leaves shuffled", 2);
}

/* The rank orders and traffic the two sets of tables are scored on. */
void make_cells(struct oo_guard *g)
{
	unsigned n = g->num_ranks, q;
	uint32_t *block;

	add_cell(g, "leaf order", 0, &g->leaf_order, 1, n);
	for (q = 0; n >= 8 && q < 4; q++) {
		block = g->leaf_order + q * n / 4;
		add_cell(g, "quarter job ", q + 1, &block, 1,
			 (q + 1) * n / 4 - q * n / 4);
	}
	for (q = 0; n >= 4 && q < 2; q++) {
		block = g->leaf_order + q * n / 2;
		add_cell(g, "half job ", q + 1, &block, 1,
			 (q + 1) * n / 2 - q * n / 2);
	}
	add_lost_only_cells(g);
	add_cell(g, "random orders", 0, g->random_order + OO_GUARD_POLISH_SEEDS,
		 OO_GUARD_SEEDS, n);
	set_sample(g, g->random_order, OO_GUARD_POLISH_SEEDS);
	add_shuffled_leaf_cells(g);
	add_offset_cells(g);
}

static void score_cell(struct oo_guard *g, const struct oo_cell *c,
		       struct oo_eval_score *score)
{
	uint64_t budget = c->num_orders > 1 ? OO_GUARD_BUDGET *
	    OO_GUARD_POLISH_SEEDS / c->num_orders : OO_GUARD_BUDGET;
	struct oo_eval_score one;
	unsigned i;

	memset(score, 0, sizeof(*score));
	for (i = 0; i < c->num_orders; i++) {
		oo_eval_shift(&g->net, c->order[i], c->n, c->traffic, budget,
			      &g->work, &one);
		score->eff += one.eff / c->num_orders;
		score->lost += one.lost;
		score->rounds += one.rounds;
	}
}

static void score_cells(struct oo_guard *g, struct oo_eval_score *score)
{
	unsigned c;

	for (c = 0; c < g->num_cells; c++)
		score_cell(g, &g->cell[c], &score[c]);
}

size_t total_ports(const struct oo_guard *g)
{
	size_t n = 0;
	unsigned s;

	for (s = 0; s < g->num_sw; s++)
		n += g->sw[s]->num_ports;
	return n;
}

void save_profiles(const struct oo_guard *g, uint32_t *to)
{
	unsigned s, p;

	for (s = 0; s < g->num_sw; s++)
		for (p = 0; p < g->sw[s]->num_ports; p++)
			*to++ = g->sw[s]->p_prof[p].num_paths;
}

void restore_profiles(const struct oo_guard *g, const uint32_t *from)
{
	unsigned s, p;

	for (s = 0; s < g->num_sw; s++)
		for (p = 0; p < g->sw[s]->num_ports; p++)
			g->sw[s]->p_prof[p].num_paths = *from++;
}

size_t total_lft(const struct oo_guard *g)
{
	size_t n = 0;
	unsigned s;

	for (s = 0; s < g->num_sw; s++)
		n += g->lft_len[s];
	return n;
}

/* Copy every switch's new LFT out (out = 1) or back in (out = 0). */
void copy_lfts(const struct oo_guard *g, uint8_t *buf, int out)
{
	unsigned s;

	for (s = 0; s < g->num_sw; s++) {
		if (out)
			memcpy(buf, g->sw[s]->new_lft, g->lft_len[s]);
		else
			memcpy(g->sw[s]->new_lft, buf, g->lft_len[s]);
		buf += g->lft_len[s];
	}
}

/* A copy of the tables in place into s: 0, or -1 with no memory. */
int take_snapshot(const struct oo_guard *g,
		  struct oo_guard_snapshot *s)
{
	s->lft = malloc(total_lft(g) + 1);
	s->prof = malloc(sizeof(uint32_t) * (total_ports(g) + 1));
	if (!s->lft || !s->prof)
		return -1;
	copy_lfts(g, s->lft, 1);
	save_profiles(g, s->prof);
	return 0;
}

void put_back_snapshot(const struct oo_guard *g,
		       const struct oo_guard_snapshot *s)
{
	copy_lfts(g, s->lft, 0);
	restore_profiles(g, s->prof);
}

void free_snapshot(struct oo_guard_snapshot *s)
{
	free(s->lft);
	free(s->prof);
}

/*
 * Fill the tables in place as the reach pass would (st->fill), keeping
 * them as they were in lft_unfilled: 1 where it filled, else 0.
 */
static int fill_in_place(struct oo_guard *g, const struct oo_guard_stages *st)
{
	if (!g->lft_unfilled)
		return 0;
	copy_lfts(g, g->lft_unfilled, 1);
	return !st->fill(st->ctx);
}

/* The tables in place as before fill_in_place(), where it filled. */
static void unfill(struct oo_guard *g, int filled)
{
	if (filled)
		copy_lfts(g, g->lft_unfilled, 0);
}

/*
 * Score the tables in place as the reach pass will leave them (st->fill):
 * both stages leave holes where up/down routing cannot go, and the pass
 * fills what it can of them whichever tables stay, so a candidate is
 * judged by the flows that stay lost after it and by the load its fills
 * add.  The tables in place are as before on return.
 */
void score_tables(struct oo_guard *g, const struct oo_guard_stages *st,
		  struct oo_eval_score *score)
{
	int filled = fill_in_place(g, st);

	score_cells(g, score);
	unfill(g, filled);
}

/*
 * The LIDs of the num_hosts CA ports of net (lost[h * 2^LMC + o]) that
 * the tables in place leave without a route from some switch a CA of
 * net hangs off, after the reach pass.  With score, the cells are scored
 * on the same filled tables too (score_tables() without a fill of its
 * own).  Returns how many, or -1 (no memory).
 */
int lost_after_fill(struct oo_guard *g,
		    const struct oo_guard_stages *st,
		    const struct oo_eval_net *net, unsigned num_hosts,
		    uint8_t *lost, struct oo_eval_score *score)
{
	int filled = fill_in_place(g, st), n;

	n = oo_eval_lost_lids(net, num_hosts, lost);
	if (score)
		score_cells(g, score);
	unfill(g, filled);
	return n;
}

/* The net of the tables in place with every CA port as a host. */
struct oo_eval_net all_ca_net(const struct oo_guard *g)
{
	struct oo_eval_net net = g->net;

	net.host_sw = g->all_ca.sw;
	net.host_port = g->all_ca.port;
	net.host_lid = g->all_ca.lid;
	return net;
}

/*
 * The same over every CA port, SHARP aggregation nodes among them (which
 * the cells do not score).  A variant must not lose more: the pass fills
 * loop-free only, and what it can fill depends on the tables.  With
 * score, the tables' scores too (lost_after_fill()).  Returns how many,
 * or -1 (no memory).
 */
int lost_ca_lids_scored(struct oo_guard *g,
			const struct oo_guard_stages *st,
			struct oo_eval_score *score)
{
	struct oo_eval_net net = all_ca_net(g);
	uint8_t *lost;
	int ret;

	lost = calloc((size_t)g->num_all_ca * g->net.lids_per_port + 1, 1);
	if (!lost)
		return -1;
	ret = lost_after_fill(g, st, &net, g->num_all_ca, lost, score);
	free(lost);
	return ret;
}

int lost_ca_lids(struct oo_guard *g, const struct oo_guard_stages *st)
{
	return lost_ca_lids_scored(g, st, NULL);
}

/*
 * The lost_ca_lids() of the tables in place after the reach pass fill
 * (a stage of st); -1 where that pass is not known or lanes beyond VL0
 * fill what it leaves (or no memory).  The tables in place stay as they
 * are.
 */
int lost_after_stage(struct oo_guard *g,
		     const struct oo_guard_stages *st,
		     oo_lft_builder fill)
{
	struct oo_guard_stages with = *st;

	if (!fill || st->lanes_beyond_vl0)
		return -1;
	with.fill = fill;
	return lost_ca_lids(g, &with);
}

/*
 * The host/LID pairs (every CA port a host, SHARP nodes too) that the
 * tables in place leave without a route after the reach pass as OpenSM
 * runs it on VL0 (st->fill_final: its last fills by port, and LIDs that
 * stay out of reach may take another LID's routes of their port), counted
 * by oo_eval_lost_pairs(); -1 where that pass is not known, lanes beyond
 * VL0 fill what it leaves, or it or the count has no memory.  The tables
 * in place stay as they are.
 */
int64_t lost_pairs_after_pass(struct oo_guard *g,
			      const struct oo_guard_stages *st)
{
	struct oo_guard_stages with = *st;
	struct oo_eval_net net = all_ca_net(g);
	int64_t n;
	int filled;

	with.fill = st->fill_final;
	if (!with.fill || st->lanes_beyond_vl0)
		return -1;
	if (!g->lft_unfilled)
		return -1;
	/* a pass that failed (no memory) counts nothing */
	filled = fill_in_place(g, &with);
	n = filled ? oo_eval_lost_pairs(&net, g->num_all_ca) : -1;
	unfill(g, 1);		/* lft_unfilled holds the tables before */
	return n;
}

/*
 * lost_pairs_after_pass() of the tables in buf (with the port profiles in
 * prof; NULL: those in place); the tables in place stay as they are.
 */
int64_t lost_pairs_of(struct oo_guard *g, const struct oo_guard_stages *st,
		      const uint8_t *buf, const uint32_t *prof)
{
	struct oo_guard_snapshot was = { NULL, NULL };
	int64_t n = -1;

	if (!take_snapshot(g, &was)) {
		copy_lfts(g, (uint8_t *)buf, 0);
		if (prof)
			restore_profiles(g, prof);
		n = lost_pairs_after_pass(g, st);
		put_back_snapshot(g, &was);
	}
	free_snapshot(&was);
	return n;
}

/*
 * Whether the tables in place leave no more host/LID pairs without a
 * route after the reach pass as OpenSM runs it than those in buf (prof as
 * in lost_pairs_of()): 1, 0, or -1 where either count is not known.  The
 * counts go to *mine and *theirs.
 */
int pairs_no_more(struct oo_guard *g, const struct oo_guard_stages *st,
		  const uint8_t *buf, const uint32_t *prof, int64_t *mine,
		  int64_t *theirs)
{
	*theirs = -1;
	*mine = lost_pairs_after_pass(g, st);
	if (*mine >= 0)
		*theirs = lost_pairs_of(g, st, buf, prof);
	if (*mine < 0 || *theirs < 0)
		return -1;
	return *mine <= *theirs;
}

/*
 * lost_after_stage() of the whole reach pass (st->fill_whole, its retry
 * round too), as OpenSM's reach pass will leave the tables but for the
 * routes LIDs may borrow.
 */
int lost_after_whole(struct oo_guard *g,
		     const struct oo_guard_stages *st)
{
	return lost_after_stage(g, st, st->fill_whole);
}

/*
 * lost, the lost_ca_lids() of the tables in buf (or, with NULL, of those
 * in place), counted again after the whole reach pass (st->fill_whole,
 * its retry round too) where that can decide: they lose some and the
 * stock tables to beat none.  Leaves buf's tables in place.
 */
int lost_after_whole_pass(struct oo_guard *g,
			  const struct oo_guard_stages *st,
			  uint8_t *buf, int lost)
{
	if (lost <= 0 || g->lost_stock || !st->fill_whole ||
	    st->lanes_beyond_vl0)
		return lost;
	if (buf)
		copy_lfts(g, buf, 0);
	return lost_after_whole(g, st);
}

/*
 * The lost_ca_lids() of the tables in place, counted again after the
 * whole reach pass where that can decide (lost_after_whole_pass()).  The
 * tables in place stay as they are.
 */
int lost_in_place(struct oo_guard *g, const struct oo_guard_stages *st)
{
	return lost_after_whole_pass(g, st, NULL, lost_ca_lids(g, st));
}

void log_scores(const struct oo_guard *g, const char *who,
		const struct oo_eval_score *score)
{
	unsigned c;

	for (c = 0; c < g->num_cells; c++)
		OSM_LOG(g->log, OSM_LOG_VERBOSE, "osmoffset: stock guard: "
			"%s, %s: %.4f (%u rounds, %" PRIu64 " flows lost)\n",
			who, g->cell[c].name, score[c].eff, score[c].rounds,
			score[c].lost);
}

/* Whether a scores lower than stock in cell c, beyond the cell's slack. */
int cell_lost(const struct oo_guard *g, unsigned c,
	      const struct oo_eval_score *a,
	      const struct oo_eval_score *stock)
{
	struct oo_eval_score b = *stock;

	b.eff *= 1.0 - g->cell[c].slack;
	return oo_eval_worse(a, &b);
}

/* The first cell in which ours score lower than stock, or -1. */
int first_loss(const struct oo_guard *g,
	       const struct oo_eval_score *ours,
	       const struct oo_eval_score *stock)
{
	unsigned c;

	for (c = 0; c < g->num_cells; c++)
		if (cell_lost(g, c, &ours[c], &stock[c]))
			return (int)c;
	return -1;
}

/*
 * The first cell in which tables scored in after lose more flows than,
 * or score lower than, the same tables scored in before; -1 if none.
 * The cells that count lost flows only (add_lost_only_cells()) drop by
 * their flows alone: their efficiency, management traffic's, is held by
 * no polish and judged nowhere else.
 */
int first_drop(const struct oo_guard *g,
	       const struct oo_eval_score *after,
	       const struct oo_eval_score *before)
{
	unsigned c;

	for (c = 0; c < g->num_cells; c++)
		if (after[c].lost > before[c].lost ||
		    (!g->cell[c].lost_only &&
		     after[c].eff < before[c].eff - OO_EVAL_EPSILON))
			return (int)c;
	return -1;
}

/*
 * The port profiles of tables put together here: the paths routed out of
 * each port, as OpenSM's LFT stage counts them.
 */
void count_profiles(const struct oo_guard *g)
{
	cl_qmap_t *tbl = &g->osm->subn.port_guid_tbl;
	int switches = g->osm->subn.opt.port_profile_switch_nodes;
	cl_map_item_t *item;
	unsigned s;

	restore_profiles(g, g->prof_before);
	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item)) {
		osm_port_t *port = (osm_port_t *)item;
		uint16_t min_lid, max_lid, lid;

		if (port->p_node->sw && !switches)
			continue;
		osm_port_get_lid_range_ho(port, &min_lid, &max_lid);
		if (!min_lid)
			continue;
		for (s = 0; s < g->num_sw; s++) {
			osm_switch_t *sw = g->sw[s];

			for (lid = min_lid; lid <= max_lid &&
			     lid <= sw->max_lid_ho; lid++) {
				uint8_t out = sw->new_lft[lid];
				osm_physp_t *p;

				if (out >= sw->num_ports)
					continue;
				p = osm_node_get_physp_ptr(sw->p_node, out);
				if (p && !p->is_prof_ignored)
					sw->p_prof[out].num_paths++;
			}
		}
	}
}

/*
 * Whether the tables in place close a credit loop among the routes the
 * CAs' traffic takes where the stock tables close none
 * (g->stock_loop_free): minhop's routes may turn down and up, and a
 * polish or a mix of two loop-free tables may close one.  Where that
 * cannot be told (no memory), it is taken for a loop.
 */
int closes_new_loop(const struct oo_guard *g)
{
	return g->stock_loop_free && oo_reach_ca_routes_acyclic(g->osm) != 1;
}

void sum_scores(const struct oo_guard *g,
		const struct oo_eval_score *score,
		struct oo_guard_sums *sum)
{
	unsigned c;

	memset(sum, 0, sizeof(*sum));
	for (c = 0; c < g->num_cells; c++) {
		sum->lost += score[c].lost;
		if (g->cell[c].lost_only)
			continue;
		sum->all += score[c].eff;
		if (!g->cell[c].traffic)
			sum->base += score[c].eff;
	}
}

/* Fewer flows lost, else more base-LID efficiency, else more in all. */
int sums_better(const struct oo_guard_sums *a,
		const struct oo_guard_sums *b)
{
	if (a->lost != b->lost)
		return a->lost < b->lost;
	if (a->base != b->base)
		return a->base > b->base;
	return a->all > b->all;
}

/*
 * The first cell that the tables in place, scored in after, lose to
 * stock's where those scored in cur did not (cell_lost()), or -1.
 */
int first_new_loss(const struct oo_guard *g,
		   const struct oo_eval_score *after,
		   const struct oo_eval_score *cur,
		   const struct oo_eval_score *stock)
{
	unsigned c;

	for (c = 0; c < g->num_cells; c++)
		if (cell_lost(g, c, &after[c], &stock[c]) &&
		    !cell_lost(g, c, &cur[c], &stock[c]))
			return (int)c;
	return -1;
}
