/*
 * osmoffset - the channel dependencies of LFTs, and a topological order of
 * them kept as dependencies are added
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * A channel is a link into a switch: (switch, in port).  A packet that
 * enters switch t through port in and leaves it through out toward another
 * switch holds the first channel while it waits for the second: one
 * dependency per (t, in, out), whatever the LID.  A cycle of them is a
 * credit loop.  oo_cdg_init() orders the channels so that every
 * dependency points forward (Kahn); oo_cdg_add_lid() then adds the
 * dependencies of one more LID's routes, keeping the order with the
 * Pearce-Kelly rule: a dependency that points backward reorders only the
 * channels between its two ends, and one that would close a cycle is
 * found in that window.  The reach pass checks each destination's fills
 * this way instead of rebuilding the whole graph.  Free of OpenSM types.
 */

#include <stdlib.h>
#include <string.h>

#include "osmoffset.h"

static int valid_port(const struct oo_reach_net *net, uint8_t port)
{
	return port && port != OO_LFT_NONE && port < net->stride;
}

static uint8_t entry(const struct oo_reach_net *net, uint32_t s,
		     unsigned lid)
{
	return lid < net->lft_len[s] ? net->lft[s][lid] : OO_LFT_NONE;
}

static size_t dep_bit(const struct oo_cdg *g, size_t node, unsigned out)
{
	return node * g->stride + out;
}

static int dep_set(const struct oo_cdg *g, size_t b)
{
	return g->bits[b / 8] >> (b % 8) & 1;
}

static void dep_flip(struct oo_cdg *g, size_t b)
{
	g->bits[b / 8] ^= (uint8_t)(1U << (b % 8));
}

/* The channel a packet leaving switch t through port out enters. */
static size_t channel_out(const struct oo_cdg *g, uint32_t t, unsigned out)
{
	size_t at = (size_t)t * g->stride + out;

	return (size_t)g->net->next[at] * g->stride + g->net->rport[at];
}

/*
 * The dependency the LID's entry at switch s makes: the channel its
 * packets enter the next switch t through, waiting for t's way out.
 * Returns 0 (none: no entry, or the packet leaves the switches there) or
 * 1 with the dependency's bit in *bit.
 */
static int lid_dependency(const struct oo_cdg *g, uint32_t s, unsigned lid,
			  size_t *bit)
{
	const struct oo_reach_net *net = g->net;
	uint8_t p = entry(net, s, lid), q;
	size_t at = (size_t)s * net->stride + p;
	uint32_t t;

	if (!valid_port(net, p) || (t = net->next[at]) == OO_EVAL_NONE)
		return 0;
	q = entry(net, t, lid);
	if (!valid_port(net, q) ||
	    net->next[(size_t)t * net->stride + q] == OO_EVAL_NONE)
		return 0;
	*bit = dep_bit(g, (size_t)t * g->stride + net->rport[at], q);
	return 1;
}

static void mark_dependencies(struct oo_cdg *g)
{
	const struct oo_reach_net *net = g->net;
	uint32_t s;

	for (s = 0; s < net->num_sw; s++) {
		unsigned lid;

		for (lid = 1; lid < net->lft_len[s]; lid++) {
			size_t b;

			if (lid_dependency(g, s, lid, &b) && !dep_set(g, b))
				dep_flip(g, b);
		}
	}
}

/* Kahn's algorithm: 1 with every channel in g->at in a dependency order. */
static int order_channels(struct oo_cdg *g)
{
	uint32_t *indeg = g->seen;	/* free until the first search */
	size_t node, head = 0, tail = 0;
	unsigned q;

	memset(indeg, 0, sizeof(*indeg) * g->nodes);
	for (node = 0; node < g->nodes; node++)
		for (q = 0; q < g->stride; q++)
			if (dep_set(g, dep_bit(g, node, q)))
				indeg[channel_out(g, (uint32_t)(node /
							   g->stride), q)]++;
	for (node = 0; node < g->nodes; node++)
		if (!indeg[node])
			g->at[tail++] = (uint32_t)node;
	while (head < tail) {
		node = g->at[head++];
		for (q = 0; q < g->stride; q++) {
			size_t v;

			if (!dep_set(g, dep_bit(g, node, q)))
				continue;
			v = channel_out(g, (uint32_t)(node / g->stride), q);
			if (!--indeg[v])
				g->at[tail++] = (uint32_t)v;
		}
	}
	memset(indeg, 0, sizeof(*indeg) * g->nodes);
	if (tail != g->nodes)
		return 0;
	for (node = 0; node < g->nodes; node++)
		g->ord[g->at[node]] = (uint32_t)node;
	return 1;
}

void oo_cdg_free(struct oo_cdg *g)
{
	free(g->bits);
	free(g->ord);
	free(g->at);
	free(g->seen);
	free(g->fwd);
	free(g->bwd);
	free(g->stack);
	free(g->added);
	memset(g, 0, sizeof(*g));
}

/* Room for the channels of net and their dependencies: 0, or -1. */
static int cdg_alloc(struct oo_cdg *g, const struct oo_reach_net *net)
{
	size_t n;

	memset(g, 0, sizeof(*g));
	g->net = net;
	g->stride = net->stride;
	g->nodes = n = (size_t)net->num_sw * net->stride;
	g->bits = calloc(n * net->stride / 8 + 1, 1);
	g->ord = calloc(n + 1, sizeof(*g->ord));
	g->at = calloc(n + 1, sizeof(*g->at));
	g->seen = calloc(n + 1, sizeof(*g->seen));
	g->fwd = calloc(n + 1, sizeof(*g->fwd));
	g->bwd = calloc(n + 1, sizeof(*g->bwd));
	g->stack = calloc(n + 1, sizeof(*g->stack));
	if (!g->bits || !g->ord || !g->at || !g->seen || !g->fwd ||
	    !g->bwd || !g->stack) {
		oo_cdg_free(g);
		return -1;
	}
	return 0;
}

int oo_cdg_init(struct oo_cdg *g, const struct oo_reach_net *net)
{
	if (cdg_alloc(g, net))
		return -1;
	mark_dependencies(g);
	return order_channels(g);
}

/*
 * The dependencies of the routes toward lid from the switches in *from
 * (num of them) and from every switch those routes pass; on[] marks the
 * switches met (stamp), so that each is walked once per LID and a
 * forwarding loop of the tables ends the walk.
 */
static void mark_routes_of_lid(struct oo_cdg *g, const uint32_t *from,
			       size_t num, unsigned lid, uint32_t *on,
			       uint32_t stamp)
{
	const struct oo_reach_net *net = g->net;
	size_t i;

	for (i = 0; i < num; i++) {
		uint32_t s = from[i];

		while (s != OO_EVAL_NONE && on[s] != stamp) {
			uint8_t p = entry(net, s, lid);
			size_t b;

			on[s] = stamp;
			if (lid_dependency(g, s, lid, &b) && !dep_set(g, b))
				dep_flip(g, b);
			if (!valid_port(net, p))
				break;
			s = net->next[(size_t)s * net->stride + p];
		}
	}
}

/*
 * The switches CA ports hang off, each once, into from: how many, or
 * (size_t)-1 with no memory (*from NULL).
 */
static size_t ca_switches(const struct oo_reach_net *net, uint32_t **from)
{
	uint8_t *seen = calloc(net->num_sw + 1, 1);
	size_t n = 0;
	unsigned d;

	*from = calloc(net->num_sw + 1, sizeof(**from));
	if (!seen || !*from) {
		free(seen);
		free(*from);
		*from = NULL;
		return (size_t)-1;
	}
	for (d = 0; d < net->num_dests; d++) {
		uint32_t s = net->dest_sw[d];

		if (s < net->num_sw && !seen[s]) {
			seen[s] = 1;
			(*from)[n++] = s;
		}
	}
	free(seen);
	return n;
}

int oo_cdg_ca_routes_acyclic(const struct oo_reach_net *net)
{
	struct oo_cdg g;
	uint32_t *from, *on, stamp = 0;
	size_t num = ca_switches(net, &from);
	unsigned d, k;
	int ret = -1;

	if (num == (size_t)-1)
		return -1;
	on = calloc(net->num_sw + 1, sizeof(*on));
	if (on && !cdg_alloc(&g, net)) {
		for (d = 0; d < net->num_dests; d++)
			for (k = 0; k < net->lids_per_port; k++)
				mark_routes_of_lid(&g, from, num,
						   net->dest_lid[d] + k, on,
						   ++stamp);
		ret = order_channels(&g);
		oo_cdg_free(&g);
	}
	free(on);
	free(from);
	return ret;
}

int oo_cdg_init_empty(struct oo_cdg *g, const struct oo_reach_net *net)
{
	if (cdg_alloc(g, net))
		return -1;
	return order_channels(g) ? 0 : -1;
}

/*
 * The channels reachable from start whose position lies strictly inside
 * (lo, hi) -- start itself included -- forward (along dependencies) or
 * backward, into list.  Forward, 0 when u is met (a cycle); else 1.
 */
static int search(struct oo_cdg *g, size_t start, int forward, uint32_t lo,
		  uint32_t hi, size_t u, uint32_t *list, size_t *num)
{
	uint32_t stamp = ++g->stamp;
	size_t top = 0, n = 0;

	g->seen[start] = stamp;
	g->stack[top++] = (uint32_t)start;
	while (top) {
		size_t w = g->stack[--top];
		uint32_t t = (uint32_t)(w / g->stride);
		unsigned q;

		list[n++] = (uint32_t)w;
		if (forward) {
			for (q = 0; q < g->stride; q++) {
				size_t x;

				if (!dep_set(g, dep_bit(g, w, q)))
					continue;
				x = channel_out(g, t, q);
				if (x == u) {
					*num = n;
					return 0;
				}
				if (g->seen[x] != stamp && g->ord[x] < hi) {
					g->seen[x] = stamp;
					g->stack[top++] = (uint32_t)x;
				}
			}
		} else {
			/* the link into t through port w % stride comes from
			   switch s out of its port q: every (s, in) that
			   depends on it */
			uint32_t s = g->net->next[w];
			unsigned in;

			if (s == OO_EVAL_NONE)
				continue;
			q = g->net->rport[w];
			for (in = 0; in < g->stride; in++) {
				size_t x = (size_t)s * g->stride + in;

				if (!dep_set(g, dep_bit(g, x, q)) ||
				    g->seen[x] == stamp || g->ord[x] <= lo)
					continue;
				g->seen[x] = stamp;
				g->stack[top++] = (uint32_t)x;
			}
		}
	}
	*num = n;
	return 1;
}

static const uint32_t *sort_ord;

static int cmp_by_ord(const void *a, const void *b)
{
	uint32_t x = sort_ord[*(const uint32_t *)a];
	uint32_t y = sort_ord[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The channels that reach u (bwd) go before those v reaches (fwd), each
 * group in its old order, over the positions they held between them.
 * g->stack holds the positions while they are dealt out.
 */
static void reorder(struct oo_cdg *g, size_t nf, size_t nb)
{
	uint32_t *pos = g->stack;
	size_t i;

	sort_ord = g->ord;
	qsort(g->fwd, nf, sizeof(*g->fwd), cmp_by_ord);
	qsort(g->bwd, nb, sizeof(*g->bwd), cmp_by_ord);
	sort_ord = NULL;
	for (i = 0; i < nb; i++)
		pos[i] = g->ord[g->bwd[i]];
	for (i = 0; i < nf; i++)
		pos[nb + i] = g->ord[g->fwd[i]];
	qsort(pos, nb + nf, sizeof(*pos), cmp_u32);
	for (i = 0; i < nb; i++) {
		g->ord[g->bwd[i]] = pos[i];
		g->at[pos[i]] = g->bwd[i];
	}
	for (i = 0; i < nf; i++) {
		g->ord[g->fwd[i]] = pos[nb + i];
		g->at[pos[nb + i]] = g->fwd[i];
	}
}

/*
 * Add the dependency of bit b (channel u waits for channel v): 1 with the
 * order kept, 0 if it would close a cycle (nothing changed).
 */
static int add_dependency(struct oo_cdg *g, size_t b)
{
	size_t u = b / g->stride, nf, nb;
	size_t v = channel_out(g, (uint32_t)(u / g->stride), b % g->stride);
	uint32_t lo = g->ord[v], hi = g->ord[u];

	if (u == v)
		return 0;
	if (lo > hi) {
		dep_flip(g, b);
		return 1;
	}
	if (!search(g, v, 1, 0, hi, u, g->fwd, &nf))
		return 0;
	search(g, u, 0, lo, 0, (size_t)-1, g->bwd, &nb);
	reorder(g, nf, nb);
	dep_flip(g, b);
	return 1;
}

static int remember(struct oo_cdg *g, size_t b)
{
	if (g->num_added == g->max_added) {
		size_t max = 2 * g->max_added + 16;
		size_t *more = realloc(g->added, sizeof(*more) * max);

		if (!more)
			return -1;
		g->added = more;
		g->max_added = max;
	}
	g->added[g->num_added++] = b;
	return 0;
}

/*
 * Add dependency b unless it is there: 1 (added or there), 0 it would
 * close a cycle, -1 no memory; what is added is remembered in g->added.
 */
static int add_new_dependency(struct oo_cdg *g, size_t b)
{
	if (dep_set(g, b))
		return 1;
	if (remember(g, b))
		return -1;
	if (!add_dependency(g, b)) {
		g->num_added--;
		return 0;
	}
	return 1;
}

/* Take back the dependencies remembered since position from. */
static void take_back(struct oo_cdg *g, size_t from)
{
	/* taking dependencies away keeps the order */
	while (g->num_added > from)
		dep_flip(g, g->added[--g->num_added]);
}

int oo_cdg_add_lid(struct oo_cdg *g, unsigned lid)
{
	uint32_t s;
	int ok = 1;

	g->num_added = 0;
	for (s = 0; s < g->net->num_sw && ok > 0; s++) {
		size_t b;

		if (lid_dependency(g, s, lid, &b))
			ok = add_new_dependency(g, b);
	}
	if (ok <= 0)
		take_back(g, 0);
	return ok;
}

void oo_cdg_begin(struct oo_cdg *g)
{
	g->num_added = 0;
}

int oo_cdg_add_route(struct oo_cdg *g, uint32_t s, unsigned lid)
{
	size_t from = g->num_added;
	unsigned hops;
	int ok = 1;

	for (hops = 0; hops <= g->net->num_sw && ok > 0; hops++) {
		const struct oo_reach_net *net = g->net;
		uint8_t p = entry(net, s, lid);
		size_t b;

		if (!valid_port(net, p))
			break;
		if (lid_dependency(g, s, lid, &b))
			ok = add_new_dependency(g, b);
		s = net->next[(size_t)s * net->stride + p];
		if (s == OO_EVAL_NONE)
			break;
	}
	if (ok <= 0)
		take_back(g, from);
	return ok;
}

void oo_cdg_rollback(struct oo_cdg *g)
{
	take_back(g, 0);
}

int oo_reach_acyclic(const struct oo_reach_net *net)
{
	struct oo_cdg g;
	int ret = oo_cdg_init(&g, net);

	if (ret >= 0)
		oo_cdg_free(&g);
	return ret;
}
