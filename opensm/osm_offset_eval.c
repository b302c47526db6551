/*
 * osmoffset - shift-alltoall quality of a set of forwarding tables
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * The stock guard scores the LFTs port offsetting built against the ones
 * the stock engine builds, on the same measure as lft-analyze: in a shift
 * alltoall over a rank order, round k sends rank i to rank i + k; a round
 * runs at 1 / (most flows on one link) and the efficiency is the mean over
 * the rounds.  Free of OpenSM types: the glue hands in plain arrays.
 */

#include <stdlib.h>
#include <string.h>

#include "osmoffset.h"

/* Add w to the load of link at, noting it for the round's reset. */
static void load_link(struct oo_eval_work *wk, uint32_t at, uint32_t w)
{
	if (!wk->load[at])
		wk->touched[wk->num_touched++] = at;
	wk->load[at] += w;
	if (wk->load[at] > wk->max_load)
		wk->max_load = wk->load[at];
}

/*
 * Follow one LID from switch s to host to's port; add w to every link it
 * crosses (wk NULL: only follow).  0 when it arrives, -1 at a dead end, a
 * missing entry or a loop.
 */
static int walk_lid(const struct oo_eval_net *net, uint32_t s,
		    uint32_t to, unsigned lid, uint32_t w,
		    struct oo_eval_work *wk)
{
	unsigned hops;

	for (hops = 0; hops <= net->num_sw; hops++) {
		size_t at;
		int ret = oo_eval_hop(net, s, 0, lid, to, &at);

		if (ret)
			return ret > 0 ? 0 : -1;
		s = net->next[at];
		if (wk)
			load_link(wk, (uint32_t)at, w);
	}
	return -1;		/* a loop */
}

/* The LIDs a round walks at once, one memory fetch of each in flight. */
#define BATCH 16
/* Room for the LIDs of one flow: 2^LMC, LMC at most 7. */
#define MAX_WALKS 128
/*
 * The links a batched walk keeps (a 5-level tree's longest minimal path
 * crosses 8); a longer one is walked again alone.
 */
#define MAX_PATH 12

enum { WALKING, ARRIVED, LOST, TOO_LONG };

/* One LID of one flow on its way: where it is and the links it crossed. */
struct walk {
	uint32_t start;
	uint32_t s;
	uint32_t to;
	unsigned lid;
	uint32_t w;
	uint8_t state;
	uint8_t len;
	uint32_t link[MAX_PATH];
};

/* Fetch the entry the walk reads at its next switch ahead of time. */
static void prefetch_entry(const struct oo_eval_net *net, const struct walk *x)
{
	if (x->lid < net->lft_len[x->s])
		__builtin_prefetch(&net->lft[x->s][x->lid]);
}

/*
 * One hop of walk x, as walk_lid() takes it: the same end after as many
 * hops (a loop after num_sw + 1), the links in x->link; TOO_LONG where
 * they would not fit.
 */
static void walk_step(const struct oo_eval_net *net, struct walk *x)
{
	size_t at;
	int ret;

	if (x->len > net->num_sw) {
		x->state = LOST;	/* a loop */
		return;
	}
	if (x->len == MAX_PATH) {
		x->state = TOO_LONG;
		return;
	}
	ret = oo_eval_hop(net, x->s, 0, x->lid, x->to, &at);
	if (ret) {
		x->state = ret > 0 ? ARRIVED : LOST;
		return;
	}
	x->link[x->len++] = (uint32_t)at;
	x->s = net->next[at];
	prefetch_entry(net, x);
}

/*
 * Walk the n walks of x a hop at a time, all of them at each step, so
 * that the entries they read next are fetched together.
 */
static void walk_batch(const struct oo_eval_net *net, struct walk *x,
		       unsigned n)
{
	unsigned i, walking = n;

	for (i = 0; i < n; i++)
		prefetch_entry(net, &x[i]);
	while (walking) {
		walking = 0;
		for (i = 0; i < n; i++) {
			if (x[i].state != WALKING)
				continue;
			walk_step(net, &x[i]);
			walking += x[i].state == WALKING;
		}
	}
}

/* Add w to every link of x's path, as walk_lid() does on its way. */
static void load_walk(const struct walk *x, struct oo_eval_work *wk)
{
	unsigned i;

	for (i = 0; i < x->len; i++)
		load_link(wk, x->link[i], x->w);
}

/*
 * Load the walks of one flow (its LIDs, walked), in order, as
 * shift_round() would have walked them one by one: the links before a
 * dead end are loaded, and the LIDs after a lost one not walked.
 * Returns 1 where the flow was lost.
 */
static int load_flow(const struct oo_eval_net *net, const struct walk *x,
		     unsigned lids, struct oo_eval_work *wk)
{
	unsigned o;

	for (o = 0; o < lids; o++) {
		const struct walk *y = &x[o];

		if (y->state == TOO_LONG) {
			if (walk_lid(net, y->start, y->to, y->lid, y->w, wk))
				return 1;
			continue;
		}
		load_walk(y, wk);
		if (y->state == LOST)
			return 1;
	}
	return 0;
}

/*
 * The flow from rank from to rank to, walked alone LID by LID and loaded
 * as it goes (more LIDs than a batch holds).  Returns 1 where lost.
 */
static int walk_flow_alone(const struct oo_eval_net *net, uint32_t from,
			   uint32_t to, int traffic, struct oo_eval_work *wk)
{
	unsigned lids = net->lids_per_port, base = net->host_lid[to], o;

	if (traffic != OO_EVAL_SPREAD)
		return walk_lid(net, net->host_sw[from], to,
				base + (unsigned)traffic, lids, wk) ? 1 : 0;
	for (o = 0; o < lids; o++)
		if (walk_lid(net, net->host_sw[from], to, base + o, 1, wk))
			return 1;
	return 0;
}

/*
 * Set up the walks of the flow from rank from to rank to in x: its LID of
 * the traffic's offset, weighing lids units, or (spread) each of its LIDs
 * weighing one.  Returns how many.
 */
static unsigned start_flow(const struct oo_eval_net *net, uint32_t from,
			   uint32_t to, int traffic, struct walk *x)
{
	unsigned lids = net->lids_per_port, o;
	unsigned per = traffic == OO_EVAL_SPREAD ? lids : 1;

	for (o = 0; o < per; o++) {
		x[o].start = x[o].s = net->host_sw[from];
		x[o].to = to;
		x[o].lid = net->host_lid[to] +
		    (traffic == OO_EVAL_SPREAD ? o : (unsigned)traffic);
		x[o].w = traffic == OO_EVAL_SPREAD ? 1 : lids;
		x[o].state = WALKING;
		x[o].len = 0;
	}
	return per;
}

/*
 * One round: every rank sends to the rank k places on.  Traffic to one
 * LID offset weighs lids units on that LID, spread traffic one unit on
 * each LID.  The flows' LIDs are walked a batch at a time, all of them a
 * hop at each step (walk_batch()), so that the switches' entries they
 * read next are fetched together, and loaded in the order of the ranks:
 * the same loads, the same lost flows as walking them one by one.
 * Returns the round's efficiency; lost flows are counted.
 */
static double shift_round(const struct oo_eval_net *net,
			  const uint32_t *order, unsigned n, unsigned k,
			  int traffic, struct oo_eval_work *wk, uint64_t *lost)
{
	unsigned lids = net->lids_per_port, i = 0, m, b, t;
	unsigned per = traffic == OO_EVAL_SPREAD ? lids : 1;
	unsigned room = per > BATCH ? per : BATCH;
	struct walk x[MAX_WALKS];	/* at least BATCH */

	wk->num_touched = 0;
	/* a host's own link always carries its one flow */
	wk->max_load = lids;
	while (i < n) {
		for (m = 0; i < n && m + per <= room; i++) {
			uint32_t from = order[i], to = order[(i + k) % n];

			if (net->host_sw[from] == net->host_sw[to])
				continue;
			if (per > MAX_WALKS)
				*lost += (uint64_t)walk_flow_alone(net, from,
								   to, traffic,
								   wk);
			else
				m += start_flow(net, from, to, traffic, &x[m]);
		}
		walk_batch(net, x, m);
		for (b = 0; b < m; b += per)
			*lost += (uint64_t)load_flow(net, &x[b], per, wk);
	}
	for (t = 0; t < wk->num_touched; t++)
		wk->load[wk->touched[t]] = 0;
	return (double)lids / (double)wk->max_load;
}

/*
 * The rounds a score looks at: all of them while n * (n - 1) LIDs fit
 * the budget, else evenly spaced ones, so that the cost stays bounded on
 * big fabrics (both sets of tables see the same rounds).
 */
static unsigned round_step(unsigned n, unsigned lids, int traffic,
			   uint64_t budget)
{
	uint64_t per_round = (uint64_t)n *
	    (traffic == OO_EVAL_SPREAD ? lids : 1);
	uint64_t rounds = budget / (per_round ? per_round : 1);

	if (!rounds)
		rounds = 1;
	if (rounds >= n - 1)
		return 1;
	return (unsigned)((n - 1 + rounds - 1) / rounds);
}

void oo_eval_shift(const struct oo_eval_net *net, const uint32_t *order,
		   unsigned n, int traffic, uint64_t budget,
		   struct oo_eval_work *wk, struct oo_eval_score *score)
{
	unsigned k, step, rounds = 0;
	double sum = 0.0;

	score->eff = 1.0;
	score->lost = 0;
	score->rounds = 0;
	if (n < 2)
		return;
	step = round_step(n, net->lids_per_port, traffic, budget);
	for (k = 1; k < n; k += step, rounds++)
		sum += shift_round(net, order, n, k, traffic, wk,
				   &score->lost);
	score->eff = sum / rounds;
	score->rounds = rounds;
}

/*
 * Mark (s, host_sw[to]) for every switch s the LIDs of one flow visit,
 * the base LID's path with OO_EVAL_MARK_BASE and the others' with
 * OO_EVAL_MARK_MORE, where which asks for that kind.
 */
static void mark_flow(const struct oo_eval_net *net, uint32_t from,
		      uint32_t to, uint8_t which, uint8_t *mark)
{
	uint32_t dest = net->host_sw[to];
	unsigned o;

	for (o = 0; o < net->lids_per_port; o++) {
		unsigned lid = net->host_lid[to] + o, hops;
		uint8_t kind = o ? OO_EVAL_MARK_MORE : OO_EVAL_MARK_BASE;
		uint32_t s = net->host_sw[from];

		if (!(which & kind))
			continue;
		for (hops = 0; hops <= net->num_sw; hops++) {
			size_t at = (size_t)s * net->stride;
			uint8_t port;

			mark[(size_t)s * net->num_sw + dest] |= kind;
			if (lid >= net->lft_len[s])
				break;
			port = net->lft[s][lid];
			if (!port || port >= net->stride ||
			    net->next[at + port] == OO_EVAL_NONE)
				break;
			s = net->next[at + port];
		}
	}
}

void oo_eval_mark_paths(const struct oo_eval_net *net, const uint32_t *order,
			unsigned n, uint8_t which, uint8_t *mark)
{
	unsigned i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (net->host_sw[order[i]] != net->host_sw[order[j]])
				mark_flow(net, order[i], order[j], which,
					  mark);
}

/*
 * For every LID of the num_hosts hosts, the switches holding hosts it is
 * lost from (walk_lid()): with lost, it is marked there and counted once,
 * at the first such switch; without, each host on every such switch
 * counts.  Returns the count, or -1 (no memory).
 */
static int64_t walk_lost(const struct oo_eval_net *net, unsigned num_hosts,
			 uint8_t *lost)
{
	unsigned lids = net->lids_per_port, h, o, s;
	unsigned *on = calloc(net->num_sw + 1, sizeof(*on));
	int64_t found = 0;

	if (!on)
		return -1;
	for (h = 0; h < num_hosts; h++)
		on[net->host_sw[h]]++;
	for (h = 0; h < num_hosts; h++)
		for (o = 0; o < lids; o++)
			for (s = 0; s < net->num_sw; s++) {
				if (!on[s] || s == net->host_sw[h] ||
				    !walk_lid(net, s, h, net->host_lid[h] + o,
					      0, NULL))
					continue;
				if (!lost) {
					found += on[s];
					continue;
				}
				lost[(size_t)h * lids + o] = 1;
				found++;
				break;
			}
	free(on);
	return found;
}

int oo_eval_lost_lids(const struct oo_eval_net *net, unsigned num_hosts,
		      uint8_t *lost)
{
	return (int)walk_lost(net, num_hosts, lost);
}

int64_t oo_eval_lost_pairs(const struct oo_eval_net *net, unsigned num_hosts)
{
	return walk_lost(net, num_hosts, NULL);
}

int oo_eval_worse(const struct oo_eval_score *a,
		  const struct oo_eval_score *b)
{
	if (a->lost != b->lost)
		return a->lost > b->lost;
	return a->eff < b->eff - OO_EVAL_EPSILON;
}

void oo_eval_shuffle(uint32_t *order, unsigned n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	unsigned i;

	for (i = n; i > 1; i--) {
		unsigned j;
		uint32_t tmp;

		/* xorshift64*: the same shuffle on every platform */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		j = (unsigned)((x * 0x2545f4914f6cdd1dULL >> 32) % i);
		tmp = order[i - 1];
		order[i - 1] = order[j];
		order[j] = tmp;
	}
}

unsigned oo_eval_shuffle_runs(const uint32_t *order, const uint32_t *key,
			      unsigned n, uint64_t seed, uint32_t *run,
			      uint32_t *out)
{
	unsigned r = 0, i, k = 0;

	for (i = 0; i < n; i++)
		if (!i || key[order[i]] != key[order[i - 1]])
			run[r++] = i;
	oo_eval_shuffle(run, r, seed);
	for (i = 0; i < r; i++) {
		unsigned j = run[i];

		do
			out[k++] = order[j++];
		while (j < n && key[order[j]] == key[order[j - 1]]);
	}
	return r;
}

int oo_eval_work_init(struct oo_eval_work *wk, size_t entries)
{
	memset(wk, 0, sizeof(*wk));
	wk->load = calloc(entries + 1, sizeof(*wk->load));
	wk->touched = calloc(entries + 1, sizeof(*wk->touched));
	if (!wk->load || !wk->touched) {
		oo_eval_work_free(wk);
		return -1;
	}
	return 0;
}

void oo_eval_work_free(struct oo_eval_work *wk)
{
	free(wk->load);
	free(wk->touched);
	memset(wk, 0, sizeof(*wk));
}
