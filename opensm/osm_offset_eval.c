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
		if (!wk)
			continue;
		if (!wk->load[at])
			wk->touched[wk->num_touched++] = (uint32_t)at;
		wk->load[at] += w;
		if (wk->load[at] > wk->max_load)
			wk->max_load = wk->load[at];
	}
	return -1;		/* a loop */
}

/*
 * One round: every rank sends to the rank k places on.  Traffic to one
 * LID offset weighs lids units on that LID, spread traffic one unit on
 * each LID.  Returns the round's efficiency; lost flows are counted.
 */
static double shift_round(const struct oo_eval_net *net,
			  const uint32_t *order, unsigned n, unsigned k,
			  int traffic, struct oo_eval_work *wk, uint64_t *lost)
{
	unsigned lids = net->lids_per_port, i, o, t;

	wk->num_touched = 0;
	/* a host's own link always carries its one flow */
	wk->max_load = lids;
	for (i = 0; i < n; i++) {
		uint32_t from = order[i], to = order[(i + k) % n];
		unsigned base = net->host_lid[to];

		if (net->host_sw[from] == net->host_sw[to])
			continue;
		if (traffic != OO_EVAL_SPREAD) {
			if (walk_lid(net, net->host_sw[from], to,
				     base + (unsigned)traffic, lids, wk))
				(*lost)++;
			continue;
		}
		for (o = 0; o < lids; o++)
			if (walk_lid(net, net->host_sw[from], to, base + o,
				     1, wk)) {
				(*lost)++;
				break;
			}
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

int oo_eval_lost_lids(const struct oo_eval_net *net, unsigned num_hosts,
		      uint8_t *lost)
{
	unsigned lids = net->lids_per_port, h, o, s, found = 0;
	uint8_t *holds = calloc(net->num_sw + 1, 1);

	if (!holds)
		return -1;
	for (h = 0; h < num_hosts; h++)
		holds[net->host_sw[h]] = 1;
	for (h = 0; h < num_hosts; h++)
		for (o = 0; o < lids; o++)
			for (s = 0; s < net->num_sw; s++) {
				if (!holds[s] || s == net->host_sw[h] ||
				    !walk_lid(net, s, h, net->host_lid[h] + o,
					      0, NULL))
					continue;
				lost[(size_t)h * lids + o] = 1;
				found++;
				break;
			}
	free(holds);
	return (int)found;
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
