/*
 * osmoffset - up/down ranks and hop tables on flat arrays
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * OpenSM's updn engine computes its hop tables with one breadth-first
 * search per destination switch that walks OpenSM's node and port objects
 * and sets each hop count through a function call.  The searches here
 * follow exactly the same steps, in the same order, with the same
 * one-direction-per-switch bookkeeping, so they give the same tables;
 * they just run on a compact link list and a dense scratch matrix.
 */

#include <stdlib.h>
#include <string.h>

#include "osmoffset.h"

unsigned oo_updn_rank(struct oo_updn_graph *g, unsigned *queue)
{
	unsigned head = 0, tail = 0, s, i, max_rank = 0;

	for (s = 0; s < g->num_sw; s++)
		if (!g->rank[s])
			queue[tail++] = s;
	while (head < tail) {
		unsigned u = queue[head++];

		for (i = g->first[u]; i < g->first[u + 1]; i++) {
			const struct oo_updn_link *l = &g->link[i];

			if (!(l->flags & OO_LINK_RANKS) ||
			    g->rank[l->to] <= g->rank[u] + 1)
				continue;
			g->rank[l->to] = g->rank[u] + 1;
			max_rank = g->rank[l->to];
			/* a rank only ever drops once: tail < num_sw */
			queue[tail++] = l->to;
		}
	}
	return max_rank;
}

/*
 * A step from u to v goes down when v is further from the roots; between
 * two switches of one rank the larger id is up.  Between two roots both
 * ways are up, as OpenSM's updn takes them (routes over such cables can
 * close a credit loop), unless g->root_dist is set: then a step away from
 * the centre of the roots goes down.
 */
static int step_goes_down(const struct oo_updn_graph *g, unsigned u,
			  unsigned v)
{
	if (!g->rank[u] && !g->rank[v]) {
		if (!g->root_dist)
			return 0;
		if (g->root_dist[u] != g->root_dist[v])
			return g->root_dist[u] < g->root_dist[v];
	} else if (g->rank[u] != g->rank[v])
		return g->rank[u] < g->rank[v];
	return !(g->id[u] > g->id[v]);
}

void oo_updn_directions(struct oo_updn_graph *g)
{
	unsigned u, i;

	for (u = 0; u < g->num_sw; u++)
		for (i = g->first[u]; i < g->first[u + 1]; i++)
			g->link[i].down = (uint8_t)step_goes_down(g, u,
								  g->link[i].to);
}

/*
 * Searching backward from the destination, a switch first met going up
 * may go on up or down; one met going down may only go on down (a path
 * never turns from down to up).  A switch is queued again whenever one of
 * its ports gets a better count while it is not queued, and takes the
 * direction of that latest step, so it is never queued twice at once and
 * the queue (num_sw + 1 entries, used as a ring) never overflows.  Row s
 * of hops holds switch s's counts by port; entry 0 is its least count.
 */
void oo_updn_hops(const struct oo_updn_graph *g, unsigned dest,
		  struct oo_updn_work *w)
{
	unsigned head = 0, tail = 0, i;
	const unsigned n = g->num_sw, stride = g->stride, cap = n + 1;

	memset(w->hops, OO_HOPS_NONE, (size_t)n * stride);
	memset(w->queued, 0, n);
	w->hops[(size_t)dest * stride] = 0;
	w->down[dest] = 0;
	w->queued[dest] = 1;
	w->queue[tail++] = dest;

	while (head != tail) {
		unsigned u = w->queue[head];
		unsigned cur;

		head = head + 1 == cap ? 0 : head + 1;
		w->queued[u] = 0;
		for (i = g->first[u]; i < g->first[u + 1]; i++) {
			const struct oo_updn_link *l = &g->link[i];
			uint8_t *row, *least;

			if (!(l->flags & OO_LINK_ROUTES) ||
			    (w->down[u] && !l->down))
				continue;
			cur = w->hops[(size_t)u * stride] + 1U;
			row = &w->hops[(size_t)l->to * stride];
			if (cur >= row[l->rport])
				continue;
			row[l->rport] = (uint8_t)cur;
			least = row;
			if (cur < *least)
				*least = (uint8_t)cur;
			if (w->queued[l->to])
				continue;
			w->down[l->to] = l->down;
			w->queued[l->to] = 1;
			w->queue[tail] = l->to;
			tail = tail + 1 == cap ? 0 : tail + 1;
		}
	}
}

void oo_minhop_distances(const struct oo_updn_graph *g, unsigned target,
			 uint8_t *dist, unsigned *queue)
{
	unsigned head = 0, tail = 0, i;

	memset(dist, OO_HOPS_NONE, g->num_sw);
	dist[target] = 0;
	for (i = g->first[target]; i < g->first[target + 1]; i++) {
		unsigned s = g->link[i].to;

		if ((g->link[i].flags & OO_LINK_DIRECT) && dist[s] > 1) {
			dist[s] = 1;
			queue[tail++] = s;
		}
	}
	while (head < tail) {
		unsigned u = queue[head++];

		if (dist[u] + 1U >= OO_HOPS_NONE)
			continue;
		for (i = g->first[u]; i < g->first[u + 1]; i++) {
			unsigned s = g->link[i].to;

			if (!(g->link[i].flags & OO_LINK_HEALTHY) ||
			    dist[s] <= dist[u] + 1U)
				continue;
			dist[s] = (uint8_t)(dist[u] + 1U);
			queue[tail++] = s;
		}
	}
}

void oo_minhop_rows(const struct oo_updn_graph *g, unsigned target,
		    const uint8_t *dist, uint8_t *hops)
{
	unsigned s, i;

	memset(hops, OO_HOPS_NONE, (size_t)g->num_sw * g->stride);
	for (s = 0; s < g->num_sw; s++) {
		uint8_t *row = &hops[(size_t)s * g->stride];

		if (s == target)
			row[0] = 0;
		for (i = g->first[s]; i < g->first[s + 1]; i++) {
			const struct oo_updn_link *l = &g->link[i];
			unsigned val = OO_HOPS_NONE;

			if ((l->flags & OO_LINK_DIRECT) && l->to == target)
				val = 1;
			if ((l->flags & OO_LINK_HEALTHY) &&
			    dist[l->to] != OO_HOPS_NONE &&
			    dist[l->to] + 1U < val)
				val = dist[l->to] + 1U;
			if (val >= row[l->port])
				continue;
			row[l->port] = (uint8_t)val;
			if (val < row[0])
				row[0] = (uint8_t)val;
		}
	}
}

/* A switch that is no leaf and is cabled to leaves only: a spine. */
static int is_spine_over_leaves(const struct oo_updn_graph *g,
				const uint8_t *leaf, unsigned s)
{
	unsigned i, n = 0;

	if (leaf[s])
		return 0;
	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		const struct oo_updn_link *l = &g->link[i];

		if (!(l->flags & OO_LINK_DIRECT))
			continue;
		if (!leaf[l->to])
			return 0;
		n++;
	}
	return n > 0;
}

unsigned oo_updn_drop_leaf_roots(const struct oo_updn_graph *g,
				 const uint8_t *leaf, unsigned *rank)
{
	unsigned s, spines = 0, dropped = 0;

	for (s = 0; s < g->num_sw; s++)
		if (!rank[s] && !leaf[s])
			spines++;
	if (!spines)
		return 0;
	for (s = 0; s < g->num_sw; s++)
		if (!rank[s] && leaf[s]) {
			rank[s] = OO_UPDN_NO_RANK;
			dropped++;
		}
	/* the other spines of a two-level tree join the ones left */
	if (dropped)
		for (s = 0; s < g->num_sw; s++)
			if (rank[s] && is_spine_over_leaves(g, leaf, s))
				rank[s] = 0;
	return dropped;
}

/* Whether switch s is cabled to a root. */
static int cabled_to_root(const struct oo_updn_graph *g, const unsigned *rank,
			  unsigned s)
{
	unsigned i;

	for (i = g->first[s]; i < g->first[s + 1]; i++)
		if ((g->link[i].flags & OO_LINK_DIRECT) &&
		    !rank[g->link[i].to])
			return 1;
	return 0;
}

/* Whether some switch with end ports is cabled to another that has some. */
static int hosts_cabled_to_hosts(const struct oo_updn_graph *g,
				 const unsigned *cas)
{
	unsigned s, i;

	for (s = 0; s < g->num_sw; s++)
		for (i = g->first[s]; cas[s] && i < g->first[s + 1]; i++)
			if (cas[g->link[i].to])
				return 1;
	return 0;
}

unsigned oo_updn_bare_roots(const struct oo_updn_graph *g,
			    const unsigned *cas, unsigned *rank)
{
	unsigned s, n = 0;

	if (hosts_cabled_to_hosts(g, cas))
		return 0;
	for (s = 0; s < g->num_sw; s++)
		if (!cas[s] && g->first[s + 1] > g->first[s]) {
			rank[s] = 0;
			n++;
		}
	return n;
}

/* Cables from root s to other roots. */
static unsigned root_cables(const struct oo_updn_graph *g,
			    const unsigned *rank, unsigned s)
{
	unsigned i, n = 0;

	for (i = g->first[s]; i < g->first[s + 1]; i++)
		n += !rank[g->link[i].to] && g->link[i].to != s;
	return n;
}

/*
 * Hops of every root of start's set from start, breadth-first over the
 * cables between roots (dist[] must be OO_UPDN_NO_RANK for them): the set
 * is queue[0] to queue[return - 1].
 */
static unsigned spread_over_roots(const struct oo_updn_graph *g,
				  const unsigned *rank, unsigned start,
				  unsigned *dist, unsigned *queue)
{
	unsigned head = 0, tail = 0, u, i;

	dist[start] = 0;
	queue[tail++] = start;
	while (head < tail) {
		u = queue[head++];
		for (i = g->first[u]; i < g->first[u + 1]; i++) {
			unsigned v = g->link[i].to;

			if (rank[v] || dist[v] != OO_UPDN_NO_RANK)
				continue;
			dist[v] = dist[u] + 1;
			queue[tail++] = v;
		}
	}
	return tail;
}

/* The root with the most cables to roots of s's set, the first on a tie. */
static unsigned set_centre(const struct oo_updn_graph *g,
			   const unsigned *rank, unsigned s, unsigned *dist,
			   unsigned *queue)
{
	unsigned size = spread_over_roots(g, rank, s, dist, queue);
	unsigned i, n, best = s, most = root_cables(g, rank, s);

	for (i = 0; i < size; i++) {
		n = root_cables(g, rank, queue[i]);
		if (n > most || (n == most && queue[i] < best)) {
			best = queue[i];
			most = n;
		}
	}
	for (i = 0; i < size; i++)
		dist[queue[i]] = OO_UPDN_NO_RANK;
	return best;
}

unsigned oo_updn_root_centres(const struct oo_updn_graph *g,
			      const unsigned *rank, unsigned *dist,
			      unsigned *queue)
{
	unsigned s, n = 0;

	for (s = 0; s < g->num_sw; s++)
		dist[s] = OO_UPDN_NO_RANK;
	for (s = 0; s < g->num_sw; s++) {
		if (rank[s] || dist[s] != OO_UPDN_NO_RANK)
			continue;
		spread_over_roots(g, rank, set_centre(g, rank, s, dist, queue),
				  dist, queue);
		n++;
	}
	return n;
}

int oo_updn_reach_all(const struct oo_updn_graph *g, const unsigned *cas,
		      struct oo_updn_work *w)
{
	unsigned d, s;

	for (d = 0; d < g->num_sw; d++) {
		if (!cas[d])
			continue;
		oo_updn_hops(g, d, w);
		for (s = 0; s < g->num_sw; s++)
			if (cas[s] && w->hops[(size_t)s * g->stride] ==
			    OO_HOPS_NONE)
				return 0;
	}
	return 1;
}

unsigned oo_updn_count_roots(const struct oo_updn_graph *g,
			     const unsigned *rank)
{
	unsigned s, n = 0;

	for (s = 0; s < g->num_sw; s++)
		n += !rank[s];
	return n;
}

/* Hops from the nearest leaf over switch cables (OO_UPDN_NO_RANK: none). */
static void leaf_levels(const struct oo_updn_graph *g, const uint8_t *leaf,
			unsigned *lvl, unsigned *queue)
{
	unsigned head = 0, tail = 0, s, i;

	for (s = 0; s < g->num_sw; s++) {
		lvl[s] = leaf[s] ? 0 : OO_UPDN_NO_RANK;
		if (leaf[s])
			queue[tail++] = s;
	}
	while (head < tail) {
		unsigned u = queue[head++];

		for (i = g->first[u]; i < g->first[u + 1]; i++) {
			const struct oo_updn_link *l = &g->link[i];

			if (!(l->flags & OO_LINK_DIRECT) ||
			    lvl[l->to] != OO_UPDN_NO_RANK)
				continue;
			lvl[l->to] = lvl[u] + 1;
			queue[tail++] = l->to;
		}
	}
}

/*
 * Whether s has cables to two switches or more that are not dead[] (a
 * doubled cable leads to one switch).
 */
static int branches(const struct oo_updn_graph *g, const uint8_t *dead,
		    unsigned s)
{
	unsigned i, first = OO_UPDN_NO_RANK;

	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		unsigned t = g->link[i].to;

		if (!(g->link[i].flags & OO_LINK_DIRECT) || dead[t])
			continue;
		if (first == OO_UPDN_NO_RANK)
			first = t;
		else if (t != first)
			return 1;
	}
	return 0;
}

/*
 * Dead ends: switches that are no leaf and are cabled to one other
 * switch at most, pruned until none is left, so that a chain of them
 * hanging off the fabric is dead end to end.  A route into a dead end ends
 * there: none crosses it.
 */
static void mark_dead_ends(const struct oo_updn_graph *g,
			   const uint8_t *leaf, uint8_t *dead)
{
	unsigned s, pruned;

	do {
		pruned = 0;
		for (s = 0; s < g->num_sw; s++)
			if (!leaf[s] && !dead[s] && !branches(g, dead, s)) {
				dead[s] = 1;
				pruned++;
			}
	} while (pruned);
}

/*
 * For the root rules below: each switch's hops from the nearest leaf
 * (leaf_levels(); *lvl has room for num_sw more entries, the BFS queue,
 * free after) and the dead ends (mark_dead_ends()), in arrays the caller
 * frees.  Returns 0, or -1 out of memory (both NULL).
 */
static int levels_and_dead_ends(const struct oo_updn_graph *g,
				const uint8_t *leaf, unsigned **lvl,
				uint8_t **dead)
{
	*lvl = calloc(2 * (size_t)g->num_sw + 1, sizeof(**lvl));
	*dead = calloc((size_t)g->num_sw + 1, 1);
	if (!*lvl || !*dead) {
		free(*lvl);
		free(*dead);
		*lvl = NULL;
		*dead = NULL;
		return -1;
	}
	leaf_levels(g, leaf, *lvl, *lvl + g->num_sw);
	mark_dead_ends(g, leaf, *dead);
	return 0;
}

/* Whether t is a root further from the leaves than s, and no dead end. */
static int root_above(const unsigned *rank, const unsigned *lvl,
		      const uint8_t *dead, unsigned s,
		      const struct oo_updn_link *l)
{
	unsigned t = l->to;

	return (l->flags & OO_LINK_DIRECT) && !rank[t] && !dead[t] &&
	    lvl[t] != OO_UPDN_NO_RANK && lvl[t] > lvl[s];
}

/*
 * Whether root s stands under a core: its cables to roots further from
 * the leaves (root_above()) are at least half as many as its cables to
 * switches nearer the leaves.  A director's line ASIC sends about as many
 * cables up to its fabric ASICs as down to the edges; a spine sends one
 * of many to an edge switch without hosts, which is no core over it.
 */
static int under_a_core(const struct oo_updn_graph *g, const unsigned *rank,
			const unsigned *lvl, const uint8_t *dead, unsigned s)
{
	unsigned i, up = 0, down = 0;

	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		const struct oo_updn_link *l = &g->link[i];

		if (root_above(rank, lvl, dead, s, l))
			up++;
		else if ((l->flags & OO_LINK_DIRECT) &&
			 lvl[l->to] < lvl[s])
			down++;
	}
	return up && 2 * up >= down;
}

unsigned oo_updn_drop_edge_tops(const struct oo_updn_graph *g,
				const uint8_t *leaf, unsigned *rank)
{
	uint8_t *top = calloc((size_t)g->num_sw + 1, 1), *dead;
	unsigned *lvl, s, i, n = 0;

	if (levels_and_dead_ends(g, leaf, &lvl, &dead) || !top)
		goto out;
	/* top: a root above another, 1 no core over any, 2 a core over
	   some */
	for (s = 0; s < g->num_sw; s++) {
		uint8_t core;

		if (rank[s] || lvl[s] == OO_UPDN_NO_RANK)
			continue;
		core = (uint8_t)(1 + under_a_core(g, rank, lvl, dead, s));
		for (i = g->first[s]; i < g->first[s + 1]; i++) {
			unsigned t = g->link[i].to;

			if (root_above(rank, lvl, dead, s, &g->link[i]) &&
			    top[t] < core)
				top[t] = core;
		}
	}
	for (s = 0; s < g->num_sw; s++)
		if (top[s] == 1) {
			rank[s] = OO_UPDN_NO_RANK;
			n++;
		}
out:
	free(top);
	free(dead);
	free(lvl);
	return n;
}

unsigned oo_updn_drop_roots_under_roots(const struct oo_updn_graph *g,
					const uint8_t *leaf, unsigned *rank)
{
	unsigned *lvl, *drop, s, i, n = 0;
	uint8_t *dead;

	if (levels_and_dead_ends(g, leaf, &lvl, &dead))
		return 0;
	drop = lvl + g->num_sw;	/* the BFS queue is spent */
	for (s = 0; s < g->num_sw; s++) {
		if (rank[s] || lvl[s] == OO_UPDN_NO_RANK)
			continue;
		for (i = g->first[s]; i < g->first[s + 1]; i++)
			if (root_above(rank, lvl, dead, s, &g->link[i])) {
				drop[n++] = s;
				break;
			}
	}
	/* all found first: a dropped root still counts as one above */
	for (i = 0; i < n; i++)
		rank[drop[i]] = OO_UPDN_NO_RANK;
	free(dead);
	free(lvl);
	return n;
}

/*
 * How many of s's cables lead one level down, where they are most of
 * them and at least two; else 0.
 */
static unsigned cables_down(const struct oo_updn_graph *g,
			    const unsigned *lvl, unsigned s)
{
	unsigned i, below = 0, cables = 0;

	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		if (!(g->link[i].flags & OO_LINK_DIRECT))
			continue;
		cables++;
		below += lvl[g->link[i].to] + 1 == lvl[s];
	}
	return below >= 2 && 2 * below > cables ? below : 0;
}

/*
 * The level of the roots, where they all stand at one level over the one
 * below (most of their cables down to it), and in *fewest the fewest
 * cables down a root has; 0 where they do not.
 */
static unsigned roots_level(const struct oo_updn_graph *g,
			    const unsigned *lvl, const unsigned *rank,
			    unsigned *fewest)
{
	unsigned s, level = 0, down;

	*fewest = 0;
	for (s = 0; s < g->num_sw; s++) {
		if (rank[s])
			continue;
		if (!lvl[s] || lvl[s] == OO_UPDN_NO_RANK ||
		    (level && lvl[s] != level) ||
		    !(down = cables_down(g, lvl, s)))
			return 0;
		level = lvl[s];
		if (!*fewest || down < *fewest)
			*fewest = down;
	}
	return level;
}

/*
 * Whether s stands beside the roots: at their level, cabled to none of
 * them, most of its cables one level down; above the spines, also as
 * wide as the narrowest root less one lost cable (an edge switch without
 * hosts is at the level of a director's fabric ASICs too, but over a few
 * of its line ASICs only).
 */
static int beside_roots(const struct oo_updn_graph *g, const unsigned *lvl,
			const unsigned *rank, unsigned level,
			unsigned fewest, unsigned s)
{
	unsigned down;

	if (!rank[s] || lvl[s] != level || cabled_to_root(g, rank, s))
		return 0;
	down = cables_down(g, lvl, s);
	return down && (level == 1 || down + 1 >= fewest);
}

unsigned oo_updn_add_sibling_roots(const struct oo_updn_graph *g,
				   const uint8_t *leaf, unsigned *rank)
{
	unsigned *lvl = calloc(2 * (size_t)g->num_sw + 1, sizeof(*lvl));
	unsigned s, added = 0, level, fewest;

	if (!lvl)
		return 0;
	leaf_levels(g, leaf, lvl, lvl + g->num_sw);
	level = roots_level(g, lvl, rank, &fewest);
	for (s = 0; level && s < g->num_sw; s++)
		if (beside_roots(g, lvl, rank, level, fewest, s))
			/* the BFS queue is spent: it lists them now, so that
			   none joins before all are found */
			lvl[g->num_sw + added++] = s;
	for (s = 0; s < added; s++)
		rank[lvl[g->num_sw + s]] = 0;
	free(lvl);
	return added;
}
