/*
 * osmoffset - what the tree looks like: hosts, levels, ranks and up slots
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Free of OpenSM types, so that the Check tests drive it on the shapes of
 * real fabrics directly.
 */

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "osmoffset.h"

int oo_is_aggregation_node(const char *desc)
{
	static const char word[] = "aggregation node";
	size_t len = sizeof(word) - 1, i;

	if (!desc)
		return 0;
	for (; *desc; desc++) {
		for (i = 0; i < len && desc[i] &&
		     tolower((unsigned char)desc[i]) == word[i]; i++)
			;
		if (i == len)
			return 1;
	}
	return 0;
}

/*
 * The tree.  Leaves are the switches with hosts, less those that look like
 * spines with a few hosts (management HCAs) on them: more cables to other
 * host switches than hosts, or (a core switch of a three-level tree) a
 * quarter of a typical leaf's hosts or fewer on a switch whose neighbours
 * lead down to several groups of leaves.  A switch's level is its distance
 * from the nearest leaf.  Going top down, the switches of a level are
 * ranked by the set of ranks of their parents, so switches wired to the
 * same switches above sit together and number their up links alike; the
 * caller's order (names, GUIDs) only breaks ties.
 */

static void free_work(struct oo_rank_tree *t)
{
	free(t->parents);
	free(t->parent_first);
	free(t->num_parents_of);
	free(t->seen);
	free(t->nominal);
	free(t->peer);
	t->parents = t->parent_first = t->num_parents_of = NULL;
	t->seen = t->nominal = t->peer = NULL;
}

void oo_rank_tree_free(struct oo_rank_tree *t)
{
	free_work(t);
	free(t->level);
	free(t->rank);
	free(t->slots);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static int alloc_tree(const struct oo_rank_graph *g, struct oo_rank_tree *t)
{
	size_t n = g->num_sw + 1;

	memset(t, 0, sizeof(*t));
	t->level = calloc(n, sizeof(*t->level));
	t->rank = calloc(n, sizeof(*t->rank));
	t->slots = calloc(n, sizeof(*t->slots));
	t->slot = malloc(sizeof(*t->slot) * n * g->stride);
	t->parents = calloc(g->first[g->num_sw] + 1, sizeof(*t->parents));
	t->parent_first = calloc(n + 1, sizeof(*t->parent_first));
	t->num_parents_of = calloc(n, sizeof(*t->num_parents_of));
	t->seen = calloc(2 * n, sizeof(*t->seen));
	t->nominal = calloc(n, sizeof(*t->nominal));
	if (!t->level || !t->rank || !t->slots || !t->slot || !t->parents ||
	    !t->parent_first || !t->num_parents_of || !t->seen || !t->nominal)
		return -1;
	memset(t->slot, 0xff, sizeof(*t->slot) * n * g->stride);
	return 0;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* More cables to host switches than hosts: a spine with a few hosts. */
static int looks_like_spine(const struct oo_rank_graph *g, unsigned s)
{
	unsigned i, to_hosts = 0;

	for (i = g->first[s]; i < g->first[s + 1]; i++)
		if (g->hosts[g->link[i].to])
			to_hosts++;
	return to_hosts > g->hosts[s];
}

/* The median host count of the switches with hosts (0 if none). */
static unsigned typical_hosts(const struct oo_rank_graph *g, unsigned *buf)
{
	unsigned s, n = 0;

	for (s = 0; s < g->num_sw; s++)
		if (g->hosts[s])
			buf[n++] = g->hosts[s];
	if (!n)
		return 0;
	qsort(buf, n, sizeof(*buf), cmp_unsigned);
	return buf[n / 2];
}

/* A host switch with a full share of hosts that is no spine. */
static int is_full_leaf(const struct oo_rank_graph *g, unsigned s,
			unsigned typical)
{
	return g->hosts[s] && g->hosts[s] * 4 > typical &&
	    !looks_like_spine(g, s);
}

/*
 * Whether the switches cabled to s lead down to different groups of full
 * leaves: more full leaves two hops away, all neighbours together, than
 * behind the best-connected neighbour.  A sparse leaf shares its spines
 * with its peers (one group); a core switch of a three-level tree reaches
 * the leaves of several pods through their own pod spines.
 */
static int spans_groups(const struct oo_rank_graph *g,
			struct oo_rank_tree *t, unsigned s, unsigned typical)
{
	unsigned *seen = t->seen, stamp = ++t->stamp, most = 0, all = 0;
	unsigned i, j;

	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		unsigned p = g->link[i].to, own = 0;

		for (j = g->first[p]; j < g->first[p + 1]; j++) {
			unsigned c = g->link[j].to;

			if (c == s || !is_full_leaf(g, c, typical))
				continue;
			own++;
			if (seen[c] != stamp) {
				seen[c] = stamp;
				all++;
			}
		}
		if (own > most)
			most = own;
	}
	return all > most;
}

/*
 * Management HCAs on a core switch: a quarter of a typical leaf's hosts
 * or fewer, fewer hosts than switch cables, and above several groups of
 * leaves.
 */
static int is_core_with_hosts(const struct oo_rank_graph *g,
			      struct oo_rank_tree *t, unsigned s,
			      unsigned typical)
{
	unsigned cables = g->first[s + 1] - g->first[s];

	return g->hosts[s] * 4 <= typical && g->hosts[s] < cables &&
	    spans_groups(g, t, s, typical);
}

/*
 * Management HCAs on a spine over as few leaves as it has hosts (a line
 * ASIC of a small director chassis, one edge below it and one HCA on it),
 * which looks_like_spine() leaves a leaf on the tie: a quarter of a
 * typical leaf's hosts or fewer, and at least as many cables to switches
 * with more than that as hosts.  A leaf is cabled to no such switch.
 */
static int is_spine_with_hosts(const struct oo_rank_graph *g, unsigned s,
			       unsigned typical)
{
	unsigned i, to_leaves = 0;

	if (g->hosts[s] * 4 > typical)
		return 0;
	for (i = g->first[s]; i < g->first[s + 1]; i++)
		if (g->hosts[g->link[i].to] * 4 > typical)
			to_leaves++;
	return to_leaves >= g->hosts[s];
}

static int is_leaf_switch(const struct oo_rank_graph *g,
			  struct oo_rank_tree *t, unsigned s, unsigned typical)
{
	return g->hosts[s] && !looks_like_spine(g, s) &&
	    !is_spine_with_hosts(g, s, typical) &&
	    !is_core_with_hosts(g, t, s, typical);
}

int oo_rank_leaves(const struct oo_rank_graph *g, uint8_t *leaf)
{
	struct oo_rank_tree t;
	unsigned s, typical;

	memset(&t, 0, sizeof(t));
	t.seen = calloc(g->num_sw + 1, sizeof(*t.seen));
	t.nominal = calloc(g->num_sw + 1, sizeof(*t.nominal));
	if (!t.seen || !t.nominal) {
		free_work(&t);
		return -1;
	}
	typical = typical_hosts(g, t.nominal);
	for (s = 0; s < g->num_sw; s++)
		leaf[s] = (uint8_t)is_leaf_switch(g, &t, s, typical);
	free_work(&t);
	return 0;
}

int oo_rank_job_switches(const struct oo_rank_graph *g, uint8_t *job)
{
	unsigned s, n = 0;

	if (oo_rank_leaves(g, job))
		return -1;
	for (s = 0; s < g->num_sw; s++)
		n += job[s] && g->hosts[s];
	if (n < 2)
		for (s = 0; s < g->num_sw; s++)
			job[s] = g->hosts[s] > 0;
	return 0;
}

/* Leaves get level 0; returns how many. */
static unsigned find_leaves(const struct oo_rank_graph *g,
			    struct oo_rank_tree *t)
{
	unsigned s, n = 0, typical = typical_hosts(g, t->nominal);

	for (s = 0; s < g->num_sw; s++) {
		t->level[s] = OO_NO_LEVEL;
		if (is_leaf_switch(g, t, s, typical)) {
			t->level[s] = 0;
			n++;
		}
	}
	if (n)
		return n;
	/* only spine-like host switches: take them all */
	for (s = 0; s < g->num_sw; s++)
		if (g->hosts[s]) {
			t->level[s] = 0;
			n++;
		}
	return n;
}

/* Breadth-first from the leaves: level = hops to the nearest leaf. */
static int assign_levels(const struct oo_rank_graph *g,
			 struct oo_rank_tree *t)
{
	unsigned *queue, head = 0, tail = 0, s, i;

	queue = malloc(sizeof(*queue) * (g->num_sw + 1));
	if (!queue)
		return -1;
	for (s = 0; s < g->num_sw; s++)
		if (t->level[s] == 0)
			queue[tail++] = s;
	t->num_levels = tail ? 1 : 0;
	while (head < tail) {
		s = queue[head++];
		for (i = g->first[s]; i < g->first[s + 1]; i++) {
			unsigned r = g->link[i].to;

			if (t->level[r] != OO_NO_LEVEL)
				continue;
			t->level[r] = t->level[s] + 1;
			if (t->level[r] >= OO_MAX_LEVELS) {
				free(queue);
				return -1;
			}
			if (t->level[r] + 1 > t->num_levels)
				t->num_levels = t->level[r] + 1;
			queue[tail++] = r;
		}
	}
	free(queue);
	return 0;
}

static int is_up(const struct oo_rank_tree *t, unsigned s, unsigned r)
{
	return t->level[s] != OO_NO_LEVEL &&
	    t->level[r] == t->level[s] + 1;
}


/* Sorted, distinct ranks of the parents of s (all ranked already). */
static void collect_parents(const struct oo_rank_graph *g,
			    struct oo_rank_tree *t, unsigned s)
{
	unsigned *p = t->parents + t->parent_first[s], n = 0, i, m = 0;

	for (i = g->first[s]; i < g->first[s + 1]; i++)
		if (is_up(t, s, g->link[i].to))
			p[n++] = t->rank[g->link[i].to];
	qsort(p, n, sizeof(*p), cmp_unsigned);
	for (i = 0; i < n; i++)
		if (!m || p[m - 1] != p[i])
			p[m++] = p[i];
	t->num_parents_of[s] = m;
}

static const struct oo_rank_graph *sort_graph;
static const struct oo_rank_tree *sort_tree;

static int cmp_rank_order(const void *a, const void *b)
{
	const struct oo_rank_tree *t = sort_tree;
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	const unsigned *px = t->parents + t->parent_first[x];
	const unsigned *py = t->parents + t->parent_first[y];
	unsigned nx = t->num_parents_of[x], ny = t->num_parents_of[y], i;

	for (i = 0; i < nx && i < ny; i++)
		if (px[i] != py[i])
			return px[i] < py[i] ? -1 : 1;
	if (nx != ny)
		return nx < ny ? -1 : 1;
	return cmp_unsigned(&sort_graph->order[x], &sort_graph->order[y]);
}

/* Rank the switches of each level, top level first. */
static int assign_ranks(const struct oo_rank_graph *g,
			struct oo_rank_tree *t)
{
	unsigned *lv, l, s, n, i;

	lv = malloc(sizeof(*lv) * (g->num_sw + 1));
	if (!lv)
		return -1;
	for (s = 0; s < g->num_sw; s++)
		t->parent_first[s + 1] = g->first[s + 1];
	for (l = t->num_levels; l-- > 0;) {
		for (s = 0, n = 0; s < g->num_sw; s++)
			if (t->level[s] == l) {
				collect_parents(g, t, s);
				lv[n++] = s;
			}
		sort_graph = g;
		sort_tree = t;
		qsort(lv, n, sizeof(*lv), cmp_rank_order);
		sort_graph = NULL;
		sort_tree = NULL;
		for (i = 0; i < n; i++)
			t->rank[lv[i]] = i;
	}
	free(lv);
	return 0;
}

/* Links from s to the switch behind link i, itself included. */
static unsigned trunk_width(const struct oo_rank_graph *g, unsigned s,
			    unsigned i)
{
	unsigned j, w = 0;

	for (j = g->first[s]; j < g->first[s + 1]; j++)
		if (g->link[j].to == g->link[i].to)
			w++;
	return w;
}

/* The rank of link i's parallel link among those before it. */
static unsigned lane_of(const struct oo_rank_graph *g, unsigned s,
			unsigned i)
{
	unsigned j, lane = 0;

	for (j = g->first[s]; j < i; j++)
		if (g->link[j].to == g->link[i].to)
			lane++;
	return lane;
}

unsigned oo_design_lanes(const unsigned *trunks, unsigned widest)
{
	uint64_t all = 0, wide = 0;
	unsigned w;

	for (w = 0; w <= widest; w++)
		all += trunks[w];
	if (!all)
		return 0;
	for (w = widest; w > 0; w--) {
		wide += trunks[w];
		if (wide * 3 >= all * 2)
			return w;
	}
	return 0;
}

/*
 * Each level's lanes, from the trunks up from it (the links of a switch to
 * one parent, counted once, at the first): level_widest the most links of
 * one, level_trunks that or, with g->design_lanes, its design
 * (oo_design_lanes()).  Returns 0, or -1 with no memory.
 */
static int choose_lanes(const struct oo_rank_graph *g,
			struct oo_rank_tree *t)
{
	unsigned l, s, i, w, levels = t->num_levels, *trunks;

	if (levels > OO_MAX_LEVELS)
		levels = OO_MAX_LEVELS;
	/* trunks[l * stride + w]: trunks of exactly w links up from level l */
	trunks = calloc((size_t)levels * g->stride + 1, sizeof(*trunks));
	if (!trunks)
		return -1;
	for (s = 0; s < g->num_sw; s++)
		for (i = g->first[s]; i < g->first[s + 1]; i++) {
			if (!is_up(t, s, g->link[i].to) || lane_of(g, s, i))
				continue;
			w = trunk_width(g, s, i);
			l = t->level[s];
			trunks[(size_t)l * g->stride + w]++;
			if (w > t->level_widest[l])
				t->level_widest[l] = w;
		}
	for (l = 0; l < levels; l++) {
		unsigned lanes = g->design_lanes ?
		    oo_design_lanes(trunks + (size_t)l * g->stride,
				    t->level_widest[l]) : 0;

		t->level_trunks[l] = lanes ? lanes : t->level_widest[l];
	}
	free(trunks);
	return 0;
}

/*
 * The nominal parents of s: the parents of every switch of its level that
 * shares a parent with it, as sorted ranks in nominal (num_sw entries).
 * A link lost in a degraded tree then leaves a hole in the numbering
 * instead of shifting every slot after it.  Returns their number.
 */
static unsigned nominal_parents(const struct oo_rank_graph *g,
				struct oo_rank_tree *t, unsigned s,
				unsigned *nominal)
{
	unsigned *seen_child = t->seen, *seen_parent = t->seen + g->num_sw;
	unsigned stamp = ++t->stamp, i, j, k, n = 0;

	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		unsigned p = g->link[i].to;

		if (!is_up(t, s, p))
			continue;
		for (j = g->first[p]; j < g->first[p + 1]; j++) {
			unsigned c = g->link[j].to;

			if (seen_child[c] == stamp || t->level[c] != t->level[s])
				continue;
			seen_child[c] = stamp;
			for (k = g->first[c]; k < g->first[c + 1]; k++) {
				unsigned q = g->link[k].to;

				if (!is_up(t, c, q) || seen_parent[q] == stamp)
					continue;
				seen_parent[q] = stamp;
				nominal[n++] = t->rank[q];
			}
		}
	}
	qsort(nominal, n, sizeof(*nominal), cmp_unsigned);
	return n;
}

static unsigned find_sorted(const unsigned *v, unsigned n, unsigned key)
{
	const unsigned *hit = bsearch(&key, v, n, sizeof(*v), cmp_unsigned);

	return hit ? (unsigned)(hit - v) : n;
}

/* The up links of s that have a slot by lane * P + position. */
static unsigned own_links(const struct oo_rank_graph *g,
			  const struct oo_rank_tree *t, unsigned s,
			  const unsigned *nominal, unsigned n)
{
	unsigned l = t->level[s], i, own = 0;

	for (i = g->first[s]; i < g->first[s + 1]; i++)
		if (is_up(t, s, g->link[i].to) &&
		    find_sorted(nominal, n, t->rank[g->link[i].to]) < n &&
		    lane_of(g, s, i) < t->level_trunks[l])
			own++;
	return own;
}

/* Parents a and b share (t->parents: each switch's sorted parent ranks). */
static unsigned common_parents(const struct oo_rank_tree *t, unsigned a,
			       unsigned b)
{
	const unsigned *pa = t->parents + t->parent_first[a];
	const unsigned *pb = t->parents + t->parent_first[b];
	unsigned na = t->num_parents_of[a], nb = t->num_parents_of[b];
	unsigned i = 0, j = 0, both = 0;

	while (i < na && j < nb)
		if (pa[i] < pb[j])
			i++;
		else if (pb[j] < pa[i])
			j++;
		else {
			both++;
			i++;
			j++;
		}
	return both;
}

/*
 * Scratch of peer_lanes(), per parent rank r and lane: count[r * T +
 * lane] how many peers have the link (T the most lanes of any level);
 * touched[r] == stamp once r is reset.
 */
#define PEER_TOUCHED(g, t) ((t)->peer)
#define PEER_COUNT(g, t) ((t)->peer + (g)->num_sw)

/* Count the links c has in each lane to each parent. */
static void count_lanes(const struct oo_rank_graph *g, struct oo_rank_tree *t,
			unsigned c, unsigned stamp)
{
	unsigned *touched = PEER_TOUCHED(g, t), T = t->peer_lanes, i;
	unsigned *count = PEER_COUNT(g, t);

	for (i = g->first[c]; i < g->first[c + 1]; i++) {
		unsigned q = g->link[i].to, r, lane;

		if (!is_up(t, c, q) || (lane = lane_of(g, c, i)) >= T)
			continue;
		r = t->rank[q];
		if (touched[r] != stamp) {
			touched[r] = stamp;
			memset(count + (size_t)r * T, 0, sizeof(*count) * T);
		}
		count[(size_t)r * T + lane]++;
	}
}

/*
 * The lanes the peers of s (itself included) have to each parent: the
 * switches of its level that share more than half of the parents of the
 * two of them and have at most half the level's slots too (a tapered
 * edge's peers are the other tapered edges, not the full ones).  Returns
 * the stamp of this call; *peers is how many there are.
 */
static unsigned peer_lanes(const struct oo_rank_graph *g,
			   struct oo_rank_tree *t, unsigned s,
			   const unsigned *nominal, unsigned n, unsigned full,
			   unsigned *peers)
{
	unsigned *seen_child = t->seen, stamp = ++t->stamp, i, j;
	unsigned ns = t->num_parents_of[s];

	count_lanes(g, t, s, stamp);
	*peers = 1;
	seen_child[s] = stamp;
	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		unsigned p = g->link[i].to;

		if (!is_up(t, s, p))
			continue;
		for (j = g->first[p]; j < g->first[p + 1]; j++) {
			unsigned c = g->link[j].to, both;

			if (seen_child[c] == stamp ||
			    t->level[c] != t->level[s])
				continue;
			seen_child[c] = stamp;
			both = common_parents(t, s, c);
			if (both * 2 > ns + t->num_parents_of[c] - both &&
			    own_links(g, t, c, nominal, n) * 2 <= full) {
				count_lanes(g, t, c, stamp);
				++*peers;
			}
		}
	}
	return stamp;
}

/*
 * Whether the design of s has a link in this lane to the parent of this
 * rank: most of its peers (s among them) do.  The design is then the same
 * at every peer, so a slot leads to the same parent at each of them.
 */
static int designed(const struct oo_rank_graph *g,
		    const struct oo_rank_tree *t, unsigned stamp,
		    unsigned peers, unsigned r, unsigned lane)
{
	size_t k = (size_t)r * t->peer_lanes + lane;

	if (PEER_TOUCHED(g, t)[r] != stamp)
		return 0;
	return PEER_COUNT(g, t)[k] * 2 > peers;
}

/*
 * Where the link of s in this lane to the parent at this position goes in
 * its design: designed (lane, position) pairs numbered lane by lane,
 * parents in nominal order within a lane.
 */
static unsigned design_slot(const struct oo_rank_graph *g,
			    const struct oo_rank_tree *t,
			    const unsigned *nominal, unsigned n,
			    unsigned stamp, unsigned peers, unsigned lane,
			    unsigned pos)
{
	unsigned l, i, slot = 0;

	for (l = 0; l <= lane && l < t->peer_lanes; l++)
		for (i = 0; i < n && (l < lane || i < pos); i++)
			slot += (unsigned)designed(g, t, stamp, peers,
						   nominal[i], l);
	return slot;
}

/* Renumber the slots of s 0, 1, ... in slot order; returns how many. */
static unsigned compact_slots(const struct oo_rank_graph *g,
			      const struct oo_rank_tree *t, unsigned s)
{
	int16_t *slot = t->slot + (size_t)s * g->stride;
	unsigned p, n = 0;
	int16_t last = -1;

	for (;;) {
		unsigned best = 0;

		for (p = 1; p < g->stride; p++)
			if (slot[p] > last && (!best || slot[p] < slot[best]))
				best = p;
		if (!best)
			break;
		last = slot[best];
		slot[best] = (int16_t)-2 - (int16_t)n++;
	}
	for (p = 1; p < g->stride; p++)
		if (slot[p] <= -2)
			slot[p] = (int16_t)(-2 - slot[p]);
	return n;
}

/*
 * Number the up links of s: slot = lane * P + position of the parent among
 * the nominal parents, P the most nominal parents of its level, so that
 * consecutive slots lead to different switches.  A switch with at most
 * half the level's slots by design (a tapered edge, or spines cabled to a
 * window of the cores where the nominal parents of the level span more
 * windows) numbers the links most of its peers have instead, lane by lane
 * (design_slot()): no slot of it is dead by design, a cable it misses
 * leaves a hole where its peers have the link, and a cable most of its
 * peers lack takes no slot, so that the peers have the same slots and a
 * slot leads to the same parent at each of them.
 */
static void number_slots(const struct oo_rank_graph *g,
			 struct oo_rank_tree *t, unsigned s, unsigned *nominal)
{
	unsigned l = t->level[s], P = t->level_parents[l], i, n, own = 0;
	unsigned full = P * t->level_trunks[l], stamp, peers;
	int16_t *slot = t->slot + (size_t)s * g->stride;

	n = nominal_parents(g, t, s, nominal);
	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		unsigned pos, lane;

		if (!is_up(t, s, g->link[i].to))
			continue;
		pos = find_sorted(nominal, n, t->rank[g->link[i].to]);
		lane = lane_of(g, s, i);
		if (pos < n && lane < t->level_trunks[l]) {
			slot[g->link[i].port] = (int16_t)(lane * P + pos);
			own++;
		}
	}
	t->slots[s] = full;
	if (!own || own * 2 > full)
		return;
	stamp = peer_lanes(g, t, s, nominal, n, full, &peers);
	if (own * 2 <= design_slot(g, t, nominal, n, stamp, peers,
				   t->level_trunks[l], 0)) {
		/* tapered against its peers too */
		t->slots[s] = compact_slots(g, t, s);
		return;
	}
	for (i = g->first[s]; i < g->first[s + 1]; i++) {
		uint8_t port = g->link[i].port;

		if (slot[port] < 0)
			continue;
		if (!designed(g, t, stamp, peers, nominal[slot[port] % P],
			      (unsigned)slot[port] / P))
			slot[port] = -1;	/* a cable most peers lack */
		else
			slot[port] = (int16_t)design_slot(g, t, nominal, n,
							  stamp, peers,
							  slot[port] / P,
							  slot[port] % P);
	}
	t->slots[s] = design_slot(g, t, nominal, n, stamp, peers,
				  t->level_trunks[l], 0);
}

/* The scratch of peer_lanes(): 1 + T words per switch. */
static int alloc_peer_lanes(const struct oo_rank_graph *g,
			    struct oo_rank_tree *t)
{
	unsigned l;

	t->peer_lanes = 1;
	for (l = 0; l < t->num_levels && l < OO_MAX_LEVELS; l++)
		if (t->level_trunks[l] > t->peer_lanes)
			t->peer_lanes = t->level_trunks[l];
	t->peer = calloc(((size_t)g->num_sw + 1) * (1 + t->peer_lanes),
			 sizeof(*t->peer));
	return t->peer ? 0 : -1;
}

static int number_all_slots(const struct oo_rank_graph *g,
			    struct oo_rank_tree *t, unsigned *nominal)
{
	unsigned s, l;

	if (alloc_peer_lanes(g, t))
		return -1;
	for (s = 0; s < g->num_sw; s++) {
		unsigned n;

		if (t->level[s] == OO_NO_LEVEL || !t->num_parents_of[s])
			continue;
		n = nominal_parents(g, t, s, nominal);
		if (n > t->level_parents[t->level[s]])
			t->level_parents[t->level[s]] = n;
	}
	for (s = 0; s < g->num_sw; s++)
		if (t->level[s] != OO_NO_LEVEL && t->num_parents_of[s])
			number_slots(g, t, s, nominal);
	for (s = 0; s < g->num_sw; s++) {
		l = t->level[s];
		if (l != OO_NO_LEVEL && t->slots[s] > t->level_slots[l])
			t->level_slots[l] = t->slots[s];
	}
	/* a leaf's design short of the level's slots is its own (above the
	   leaves it stays the peers': the cores' down links follow it) */
	for (s = 0; s < g->num_sw; s++) {
		l = t->level[s];
		if (!l && t->num_parents_of[s] &&
		    t->slots[s] < t->level_slots[l] &&
		    t->slots[s] != t->level_parents[l] * t->level_trunks[l])
			t->slots[s] = compact_slots(g, t, s);
	}
	return 0;
}

/*
 * The divisors of the coordinated rule: each level counts its up slots
 * without their parallel lanes (the parents they lead to; a level of
 * tapered edges that number their own links counts those).  A parent
 * receives from one child the destinations whose slot there differs in
 * the lane only, and they must differ in the digit above.
 */
static void level_divisors(struct oo_rank_tree *t)
{
	unsigned step[OO_MAX_LEVELS], l;

	for (l = 0; l < t->num_levels && l < OO_MAX_LEVELS; l++) {
		unsigned lanes = t->level_trunks[l] ? t->level_trunks[l] : 1;

		step[l] = t->level_slots[l] / lanes;
		if (!step[l])
			step[l] = t->level_slots[l];
	}
	oo_level_divisors(step, l, t->divisor);
}

int oo_rank_tree(const struct oo_rank_graph *g, struct oo_rank_tree *t)
{
	if (alloc_tree(g, t))
		goto fail;
	find_leaves(g, t);
	if (assign_levels(g, t) || assign_ranks(g, t))
		goto fail;
	if (choose_lanes(g, t) || number_all_slots(g, t, t->nominal))
		goto fail;
	level_divisors(t);
	free_work(t);
	return 0;
fail:
	oo_rank_tree_free(t);
	return -1;
}
