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
 * take the leaves in the order of their host names, and tables that fit
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

static const struct oo_guard *sort_guard;

/*
 * Hosts grouped by switch, switches by their first host name; the hosts
 * that run jobs (those of the leaves) first, those cabled to spines or
 * cores (management HCAs) after them, whatever their names.
 */
static int cmp_leaf_order(const void *a, const void *b)
{
	const struct oo_guard *g = sort_guard;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t sx = g->host_sw[x], sy = g->host_sw[y];
	int r;

	if (sx != sy) {
		if (g->job_sw[sx] != g->job_sw[sy])
			return g->job_sw[sx] ? -1 : 1;
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
static uint32_t *shuffled_ranks(const struct oo_guard *g, uint64_t seed)
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
 * runs a rank.
 */
static int make_orders(struct oo_guard *g)
{
	unsigned h, i;

	g->leaf_order = calloc(g->num_hosts + 1, sizeof(*g->leaf_order));
	if (!g->spine_cas)
		g->job_sw = find_job_switches(g);
	else if ((g->job_sw = malloc(g->num_sw + 1)))
		memset(g->job_sw, 1, g->num_sw + 1);
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
		g->num_ranks += g->job_sw[g->host_sw[h]];
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
static void make_cells(struct oo_guard *g)
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

static size_t total_ports(const struct oo_guard *g)
{
	size_t n = 0;
	unsigned s;

	for (s = 0; s < g->num_sw; s++)
		n += g->sw[s]->num_ports;
	return n;
}

static void save_profiles(const struct oo_guard *g, uint32_t *to)
{
	unsigned s, p;

	for (s = 0; s < g->num_sw; s++)
		for (p = 0; p < g->sw[s]->num_ports; p++)
			*to++ = g->sw[s]->p_prof[p].num_paths;
}

static void restore_profiles(const struct oo_guard *g, const uint32_t *from)
{
	unsigned s, p;

	for (s = 0; s < g->num_sw; s++)
		for (p = 0; p < g->sw[s]->num_ports; p++)
			g->sw[s]->p_prof[p].num_paths = *from++;
}

static size_t total_lft(const struct oo_guard *g)
{
	size_t n = 0;
	unsigned s;

	for (s = 0; s < g->num_sw; s++)
		n += g->lft_len[s];
	return n;
}

/* Copy every switch's new LFT out (out = 1) or back in (out = 0). */
static void copy_lfts(const struct oo_guard *g, uint8_t *buf, int out)
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

/*
 * The tables in place and their route counts, kept to put back where a
 * try of other tables fails (take_snapshot(), put_back_snapshot()).
 */
struct oo_guard_snapshot {
	uint8_t *lft;
	uint32_t *prof;
};

/* A copy of the tables in place into s: 0, or -1 with no memory. */
static int take_snapshot(const struct oo_guard *g,
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

static void put_back_snapshot(const struct oo_guard *g,
			      const struct oo_guard_snapshot *s)
{
	copy_lfts(g, s->lft, 0);
	restore_profiles(g, s->prof);
}

static void free_snapshot(struct oo_guard_snapshot *s)
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
static void score_tables(struct oo_guard *g, const struct oo_guard_stages *st,
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
static int lost_after_fill(struct oo_guard *g,
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
static struct oo_eval_net all_ca_net(const struct oo_guard *g)
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
static int lost_ca_lids_scored(struct oo_guard *g,
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

static int lost_ca_lids(struct oo_guard *g, const struct oo_guard_stages *st)
{
	return lost_ca_lids_scored(g, st, NULL);
}

/*
 * The lost_ca_lids() of the tables in place after the reach pass fill
 * (a stage of st); -1 where that pass is not known or lanes beyond VL0
 * fill what it leaves (or no memory).  The tables in place stay as they
 * are.
 */
static int lost_after_stage(struct oo_guard *g,
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
 * lost_after_stage() of the whole reach pass (st->fill_whole, its retry
 * round too), as OpenSM's reach pass will leave the tables but for the
 * routes LIDs may borrow.
 */
static int lost_after_whole(struct oo_guard *g,
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
static int lost_after_whole_pass(struct oo_guard *g,
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
static int lost_in_place(struct oo_guard *g, const struct oo_guard_stages *st)
{
	return lost_after_whole_pass(g, st, NULL, lost_ca_lids(g, st));
}

static void log_scores(const struct oo_guard *g, const char *who,
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
static int cell_lost(const struct oo_guard *g, unsigned c,
		     const struct oo_eval_score *a,
		     const struct oo_eval_score *stock)
{
	struct oo_eval_score b = *stock;

	b.eff *= 1.0 - g->cell[c].slack;
	return oo_eval_worse(a, &b);
}

/* The first cell in which ours score lower than stock, or -1. */
static int first_loss(const struct oo_guard *g,
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
static int first_drop(const struct oo_guard *g,
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

/*
 * The port profiles of tables put together here: the paths routed out of
 * each port, as OpenSM's LFT stage counts them.
 */
static void count_profiles(const struct oo_guard *g)
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

/* Per switch, its row in buf, laid out as copy_lfts() does; or NULL. */
static const uint8_t **index_rows(const struct oo_guard *g,
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

/*
 * Whether the tables in place close a credit loop among the routes the
 * CAs' traffic takes where the stock tables close none
 * (g->stock_loop_free): minhop's routes may turn down and up, and a
 * polish or a mix of two loop-free tables may close one.  Where that
 * cannot be told (no memory), it is taken for a loop.
 */
static int closes_new_loop(const struct oo_guard *g)
{
	return g->stock_loop_free && oo_reach_ca_routes_acyclic(g->osm) != 1;
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

static void log_loss(const struct oo_guard *g, const char *what,
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

/* What keep_or_mix() settles on. */
#define OO_GUARD_NEITHER 0
#define OO_GUARD_MIX 1		/* a mix of them and stock, in place */
#define OO_GUARD_KEEP 2		/* the tables of lft_ours */

/*
 * Port offsetting's tables (lft_ours), scored in ours and named what in
 * the log: kept where they score at least as well as stock in every
 * cell, else a mix (try_mix(), mix_what naming it in the log should it
 * lose too), else neither (the tables in place are then undefined).
 */
static int keep_or_mix(struct oo_guard *g, const struct oo_guard_stages *st,
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
static int build_scored(struct oo_guard *g, const struct oo_guard_stages *st,
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
static int try_shared(struct oo_guard *g, const struct oo_guard_stages *st,
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

/*
 * A candidate's sums over the cells: the flows lost, the efficiencies of
 * the base-LID cells (all an MPI that ignores LMC sends), of all cells.
 */
struct oo_guard_sums {
	uint64_t lost;
	double base;
	double all;
};

static void sum_scores(const struct oo_guard *g,
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
static int sums_better(const struct oo_guard_sums *a,
		       const struct oo_guard_sums *b)
{
	if (a->lost != b->lost)
		return a->lost < b->lost;
	if (a->base != b->base)
		return a->base > b->base;
	return a->all > b->all;
}

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
static int beats_ours(const struct oo_guard *g,
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
 * The tables in place, scored into scratch, against ours (lft_ours,
 * prof_ours and the scores in ours), as variant v names them: they
 * replace ours where they beat them (beats_ours(), stock NULL where the
 * stock tables are not built yet) and leave no more CA LIDs without a
 * route (lost_ours); else ours go back in place.  Returns 1 where they
 * replaced ours, else 0.
 */
static int keep_if_better(struct oo_guard *g, const struct oo_guard_stages *st,
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
	if (better && (lost < 0 || lost > g->lost_ours)) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: port "
			"offsetting's LFTs %s would score better, but leave "
			"%d CA LIDs (SHARP nodes among them) without a route "
			"from some CA after the reach pass, against %d; those "
			"%s go on\n", v->what_new, lost, g->lost_ours,
			v->what_old);
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
 * The first cell that the tables in place, scored in after, lose to
 * stock's where those scored in cur did not (cell_lost()), or -1.
 */
static int first_new_loss(const struct oo_guard *g,
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

/*
 * Whether the moves of polish_base_lids() must be taken back (logged):
 * the reach pass would leave more CA LIDs without a route from some CA
 * after them than the lost_before before (lost_ca_lids()), or a cell the
 * tables did not lose to stock's (scored in cur, stock's in stock) now
 * loses: the striped traffic and the further LID offsets, which that
 * polish does not hold, may drop.  With no memory to tell, they are.
 */
static int take_back_base_polish(struct oo_guard *g,
				 const struct oo_guard_stages *st,
				 const char *whose, int lost_before,
				 const struct oo_eval_score *cur,
				 const struct oo_eval_score *stock)
{
	struct oo_eval_score *after = calloc(g->num_cells + 1, sizeof(*after));
	int lost, c;

	if (!after)
		return 1;
	lost = lost_ca_lids_scored(g, st, after);
	if (lost < 0 || lost > lost_before) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: the "
			"polish of the base LIDs of %s is taken back: the "
			"reach pass would leave %d CA LIDs without a route "
			"from some CA after it, against %d\n", whose, lost,
			lost_before);
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
	    !take_back_base_polish(g, st, whose, before, cur, stock))
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
static unsigned polish_in_place(struct oo_guard *g,
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
static void polish_leads(const struct oo_guard *g,
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
static void try_polish(struct oo_guard *g, const struct oo_guard_stages *st,
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
static int try_polish_stock(struct oo_guard *g,
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
static int try_polish_base_hops(struct oo_guard *g,
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
static int try_offsets_of_ours(struct oo_guard *g,
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
static void try_variants(struct oo_guard *g, const struct oo_guard_stages *st,
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
				     uint64_t lost_before, int *c)
{
	struct oo_guard_sums sum_after, sum_before;
	double check_after[2];
	uint64_t lost_after;

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
	if (lost_ca_lids(g, st) != 0)
		return "the reach pass would leave CA LIDs without a route";
	if (closes_new_loop(g))
		return "they would close a credit loop among the routes the "
		    "CAs' traffic takes, where the stock tables close none";
	return NULL;
}

/* The two last steps on the tables that stay (see last_step()). */
enum last_step_kind { LAST_EVEN, LAST_KICKS };

static const struct last_step_words {
	int judged;		/* the polish holds the judged random orders */
	const char *what;	/* the step, for "no ..." */
	const char *scores;	/* the tables after it, scored */
	const char *done;	/* the same, going on */
	const char *undone;	/* its moves, taken back */
} last_step_words[2] = {
	{ 0, "evening of the route counts", "evened", "the evened tables",
	  "the evening of the route counts is" },
	{ 1, "kicks", "kicked", "the kicked tables", "the kicks are" },
};

/*
 * The step itself on the tables in place, over n cells: 0, or -1 where
 * there is no memory for it (logged).
 */
static int run_last_step(struct oo_guard *g, const struct oo_guard_stages *st,
			 enum last_step_kind kind,
			 const struct oo_polish_cell *cell, unsigned n,
			 struct oo_polish_result *res)
{
	int ret;

	if (kind == LAST_EVEN)
		ret = oo_polish_even(&g->net, g->gn.lft, g->num_hosts, cell, n,
				     OO_GUARD_POLISH_ENTRIES,
				     OO_GUARD_POLISH_WORK, res);
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
 * back.  Only where those leave none: the reach pass's fills may hang on
 * the entries that move.
 */
static void last_step(struct oo_guard *g, const struct oo_guard_stages *st,
		      const struct oo_eval_score *stock,
		      enum last_step_kind kind)
{
	const struct last_step_words *w = &last_step_words[kind];
	struct oo_eval_score before[OO_GUARD_MAX_CELLS];
	struct oo_eval_score after[OO_GUARD_MAX_CELLS];
	struct oo_polish_result res;
	struct oo_polish_cell *cell;
	const char *why, *unfit;
	uint32_t **check = NULL;
	double check_before[2];
	uint64_t lost_before;
	uint8_t *was;
	unsigned n, nc = 0, steer;
	int c;

	if (!(st->variants & OO_GUARD_POLISH) ||
	    (kind == LAST_EVEN && !st->polish_even) ||
	    (kind == LAST_KICKS && !st->polish_kicks))
		return;
	if (lost_ca_lids(g, st) != 0) {
		OSM_LOG(g->log, OSM_LOG_INFO, "osmoffset: stock guard: no "
			"%s: the tables that stay leave CA LIDs without a "
			"route after the reach pass, or there is no memory to "
			"tell\n", w->what);
		return;
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
	if (run_last_step(g, st, kind, cell, n, &res))
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
				check_before, lost_before, &c);
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
	free_check_orders(check, nc);
	free(cell);
	free(was);
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
