/*
 * osmoffset - reach every LID: fill the holes up/down routing leaves
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Up/down routing forbids a down link followed by an up link.  A CA cabled
 * to a switch near the roots (a management HCA on a spine, a SHARP
 * aggregation node on a spine ASIC) is then out of reach of the switches
 * that can only get to it down and up again: updn leaves their LFT entry
 * empty.  Here each such LID gets one turn switch T, a switch that reaches
 * it; every switch without an entry sends the LID the way it sends T's own
 * LID, so the packet takes the down/up turn at T or at a switch on the way
 * that reaches the LID.  The fills stay only if the channel dependencies
 * of all LFTs together have no cycle (no credit loop can form), else they
 * are taken back.  Free of OpenSM types: the glue hands in plain arrays.
 */

#include <stdlib.h>
#include <string.h>

#include "osmoffset.h"

/* Whose traffic a pass fills the holes for (see oo_reach_fill()). */
enum fill_from {
	FROM_ANY = 0,		/* every hole */
	FROM_CAS,		/* the holes traffic from any CA runs into */
	FROM_HCAS,		/* those traffic from an HCA runs into */
};

enum walk_state {
	WALK_UNKNOWN = 0,
	WALK_OK,		/* the LID gets delivered from here */
	WALK_BAD,		/* dead end or loop */
	WALK_ACTIVE,		/* on the path being followed */
};

struct reach_work {
	uint8_t *state;		/* per switch, for the LID at hand */
	uint32_t *path;		/* switches of the walk being followed */
	uint32_t *holes;	/* switches without an entry */
	uint32_t *cas;		/* per switch: CA ports cabled to it */
	uint32_t *hcas;		/* per switch: of them, not SHARP nodes */
	uint32_t *order;	/* the destinations, HCAs first */
	uint32_t num_minor;	/* SHARP nodes among them */
	uint8_t *need;		/* per switch, for the LID at hand: a hole
				   that traffic from a CA runs into */
	uint8_t *was_ok;	/* per switch: reached the LID before its
				   layered fills */
	uint8_t *holes_at;	/* per LID: some switch has no entry */
	unsigned max_lid;	/* LIDs in holes_at */
	int from;		/* enum fill_from of the pass */
	int sticky;		/* keep to the first turn switch chosen */
	uint32_t turn;		/* that switch, or OO_EVAL_NONE */
	uint32_t last_turn;	/* the turn switch fill_lid() last took */
	uint8_t *tried;		/* per switch: a turn switch whose fills
				   closed a loop for the LID at hand */
	uint8_t *in_use;	/* per switch: a turn switch kept fills of
				   the LID at hand lead to */
	int reuse;		/* only such switches may be the turn */
	int retry;		/* try other turn switches for every LID */
	uint32_t only_hole;	/* fill_lid() fills this hole alone, or
				   every hole (OO_EVAL_NONE) */
	uint32_t *fills;	/* (switch, LID) of every fill, in pairs */
	size_t num_fills;
	size_t max_fills;
};

static int valid_port(const struct oo_reach_net *net, uint8_t port)
{
	return port && port != OO_LFT_NONE && port < net->stride;
}

static uint8_t entry(const struct oo_reach_net *net, uint32_t s,
		     unsigned lid)
{
	return lid < net->lft_len[s] ? net->lft[s][lid] : OO_LFT_NONE;
}

/* Whether dest is a SHARP aggregation node (filled after the HCAs). */
static int is_minor(const struct oo_reach_net *net, uint32_t d)
{
	return net->dest_minor && net->dest_minor[d];
}

/* Whether the LID leaves switch s out of port to the CA that owns it. */
static int delivers(const struct oo_reach_net *net, uint32_t s,
		    uint8_t port, uint32_t dest)
{
	return s == net->dest_sw[dest] && port == net->dest_port[dest];
}

/*
 * Follow the LID of dest from s until a switch whose state is known, a
 * delivery, a dead end or a loop; every switch met gets the outcome.
 */
static void walk_from(const struct oo_reach_net *net, struct reach_work *w,
		      uint32_t dest, unsigned lid, uint32_t s)
{
	unsigned n = 0, i;
	uint8_t outcome = WALK_BAD;

	while (w->state[s] == WALK_UNKNOWN) {
		uint8_t port = entry(net, s, lid);
		uint32_t t;

		w->state[s] = WALK_ACTIVE;
		w->path[n++] = s;
		if (!valid_port(net, port))
			break;
		if (delivers(net, s, port, dest)) {
			outcome = WALK_OK;
			break;
		}
		t = net->next[(size_t)s * net->stride + port];
		if (t == OO_EVAL_NONE)
			break;
		s = t;
	}
	/* stopped at a switch met before this walk: its outcome */
	if (n && w->state[s] == WALK_OK && w->path[n - 1] != s)
		outcome = WALK_OK;
	for (i = 0; i < n; i++)
		w->state[w->path[i]] = outcome;
}

/* The state of every switch toward one LID. */
static void walk_all(const struct oo_reach_net *net, struct reach_work *w,
		     uint32_t dest, unsigned lid)
{
	uint32_t s;

	memset(w->state, WALK_UNKNOWN, net->num_sw);
	for (s = 0; s < net->num_sw; s++)
		walk_from(net, w, dest, lid, s);
}

/*
 * Hops from s along the LFT entries of lid until switch to (to_dest 0) or
 * the delivery of dest's LID (to_dest 1), or -1 when they do not get
 * there.
 */
static int hops_along(const struct oo_reach_net *net, uint32_t s,
		      unsigned lid, uint32_t to, int to_dest)
{
	unsigned hops;

	for (hops = 0; hops <= net->num_sw; hops++) {
		uint8_t port;

		if (!to_dest && s == to)
			return (int)hops;
		port = entry(net, s, lid);
		if (!valid_port(net, port))
			return -1;
		if (to_dest && delivers(net, s, port, to))
			return (int)hops;
		s = net->next[(size_t)s * net->stride + port];
		if (s == OO_EVAL_NONE)
			return -1;
	}
	return -1;
}

/*
 * The cost of turning a LID at t: hops in all from the num_holes switches
 * to t and on to the LID; UINT64_MAX when some hole does not get to t or
 * t does not deliver the LID.
 */
static uint64_t turn_cost(const struct oo_reach_net *net,
			  const struct reach_work *w, unsigned num_holes,
			  uint32_t dest, unsigned lid, uint32_t t)
{
	uint64_t cost;
	unsigned h;
	int d;

	if (w->state[t] != WALK_OK || !net->sw_lid[t] || w->tried[t] ||
	    (w->reuse && !w->in_use[t]))
		return UINT64_MAX;
	d = hops_along(net, t, lid, dest, 1);
	if (d < 0)
		return UINT64_MAX;
	cost = (uint64_t)d * num_holes;
	for (h = 0; h < num_holes; h++) {
		int x = hops_along(net, w->holes[h], net->sw_lid[t], t, 0);

		if (x < 0)
			return UINT64_MAX;
		cost += (uint64_t)x;
	}
	return cost;
}

/*
 * The turn switch for a LID that num_holes switches have no entry for:
 * among the switches that reach it, one with the fewest hops in all from
 * the holes to it and on to the LID; of these the one with the fewest CA
 * ports (its links carry the least traffic of their own: an empty edge
 * switch is best), then the lowest index.  The LIDs of a CA then turn at
 * one switch.  Returns the switch, or OO_EVAL_NONE when no switch will do.
 */
static uint32_t pick_turn(const struct oo_reach_net *net,
			  struct reach_work *w, unsigned num_holes,
			  uint32_t dest, unsigned lid)
{
	uint64_t best_cost = UINT64_MAX;
	uint32_t best = OO_EVAL_NONE, t;

	if (w->sticky && w->turn != OO_EVAL_NONE &&
	    turn_cost(net, w, num_holes, dest, lid, w->turn) != UINT64_MAX)
		return w->turn;
	for (t = 0; t < net->num_sw; t++) {
		uint64_t cost = turn_cost(net, w, num_holes, dest, lid, t);

		if (cost == UINT64_MAX)
			continue;
		if (cost < best_cost || (cost == best_cost &&
					 w->cas[t] < w->cas[best])) {
			best_cost = cost;
			best = t;
		}
	}
	if (w->sticky && w->turn == OO_EVAL_NONE)
		w->turn = best;
	return best;
}

static void undo_fills(const struct oo_reach_net *net, struct reach_work *w,
		       size_t from)
{
	while (w->num_fills > from) {
		w->num_fills--;
		net->lft[w->fills[2 * w->num_fills]]
		    [w->fills[2 * w->num_fills + 1]] = OO_LFT_NONE;
	}
}

/* Room for n more fills; -1 when there is no memory for it. */
static int reserve_fills(struct reach_work *w, size_t n)
{
	uint32_t *more;
	size_t max;

	if (w->num_fills + n <= w->max_fills)
		return 0;
	max = 2 * (w->num_fills + n) + 64;
	more = realloc(w->fills, sizeof(*more) * 2 * max);
	if (!more)
		return -1;
	w->fills = more;
	w->max_fills = max;
	return 0;
}

/* The CA ports at switch s whose traffic the pass fills for. */
static uint32_t sources_at(const struct reach_work *w, uint32_t s)
{
	return w->from == FROM_HCAS ? w->hcas[s] : w->cas[s];
}

/*
 * The holes of a LID that traffic runs into: from every switch a CA is
 * cabled to (where traffic for the LID starts, sources_at()) and that
 * does not deliver it, follow the LID's entries to the switch without
 * one.  A hole that no CA's traffic reaches stays empty: nothing is
 * forwarded into it, and an entry there would only add channel
 * dependencies.  Call after walk_all(); returns how many, listed in
 * holes.
 */
static unsigned find_needed_holes(const struct oo_reach_net *net,
				  struct reach_work *w, unsigned lid)
{
	unsigned n = 0, hops;
	uint32_t s, t;

	memset(w->need, 0, net->num_sw);
	for (s = 0; s < net->num_sw; s++) {
		if (!sources_at(w, s) || w->state[s] != WALK_BAD)
			continue;
		for (t = s, hops = 0; hops <= net->num_sw; hops++) {
			uint8_t port = entry(net, t, lid);

			if (port == OO_LFT_NONE && lid < net->lft_len[t]) {
				if (!w->need[t]) {
					w->need[t] = 1;
					w->holes[n++] = t;
				}
				break;
			}
			if (!valid_port(net, port))
				break;
			t = net->next[(size_t)t * net->stride + port];
			if (t == OO_EVAL_NONE)
				break;
		}
	}
	return n;
}

/*
 * After the n holes traffic runs into, list the other holes of the LID
 * (switches without an entry that do not deliver it).  Returns how many
 * in all.
 */
static unsigned add_other_holes(const struct oo_reach_net *net,
				struct reach_work *w, unsigned lid,
				unsigned n)
{
	uint32_t s;

	for (s = 0; s < net->num_sw; s++)
		if (!w->need[s] && w->state[s] == WALK_BAD &&
		    lid < net->lft_len[s] && net->lft[s][lid] == OO_LFT_NONE)
			w->holes[n++] = s;
	return n;
}

static void record_fill(const struct oo_reach_net *net, struct reach_work *w,
			uint32_t s, unsigned lid, uint8_t port)
{
	net->lft[s][lid] = port;
	w->fills[2 * w->num_fills] = s;
	w->fills[2 * w->num_fills + 1] = lid;
	w->num_fills++;
}

/*
 * Send the LID from hole h the way h sends the turn switch's LID, and so
 * every hole on that way, up to a switch that has an entry for the LID
 * (the turn switch, or one that reaches the LID).  Returns the fills.
 */
static unsigned fill_way(const struct oo_reach_net *net, struct reach_work *w,
			 uint32_t h, unsigned lid, uint32_t turn)
{
	unsigned hops, n = 0;
	uint32_t s = h;

	for (hops = 0; hops <= net->num_sw && s != OO_EVAL_NONE; hops++) {
		uint8_t port = entry(net, s, net->sw_lid[turn]);

		if (s == turn || entry(net, s, lid) != OO_LFT_NONE ||
		    lid >= net->lft_len[s] || !valid_port(net, port))
			break;
		if (reserve_fills(w, 1))
			break;
		record_fill(net, w, s, lid, port);
		n++;
		s = net->next[(size_t)s * net->stride + port];
	}
	return n;
}

/*
 * Of the n holes listed, keep w->only_hole alone when it is set: 1 if it
 * is among them, else 0 (a fill on the way of another took it).
 */
static unsigned keep_only_hole(struct reach_work *w, unsigned n)
{
	unsigned h;

	if (w->only_hole == OO_EVAL_NONE)
		return n;
	for (h = 0; h < n; h++)
		if (w->holes[h] == w->only_hole) {
			w->holes[0] = w->only_hole;
			return 1;
		}
	return 0;
}

/*
 * Fill the holes of one LID toward a turn switch: those that traffic from
 * the pass's CAs runs into (and the holes on their way), or all of them;
 * with w->only_hole, that one alone.
 * Returns the entries filled (the fills of a LID that would not then be
 * delivered from every filled switch are taken back), counts the holes
 * left in *left, and sets *had if the LID had any hole.
 */
static unsigned fill_lid(const struct oo_reach_net *net,
			 struct reach_work *w, uint32_t dest, unsigned lid,
			 unsigned *left, int *had)
{
	unsigned num_holes, num_all, h, filled = 0;
	size_t start = w->num_fills;
	uint32_t turn;

	walk_all(net, w, dest, lid);
	if (w->from != FROM_ANY) {
		num_holes = find_needed_holes(net, w, lid);
		num_all = add_other_holes(net, w, lid, num_holes);
	} else {
		memset(w->need, 0, net->num_sw);
		num_holes = num_all = add_other_holes(net, w, lid, 0);
	}
	*had = num_all > 0;
	num_holes = keep_only_hole(w, num_holes);
	if (w->only_hole != OO_EVAL_NONE)
		num_all = num_holes;
	if (!num_holes)
		return 0;
	/* a turn switch every hole gets to, if there is one, else one the
	   holes traffic runs into get to */
	turn = pick_turn(net, w, num_all, dest, lid);
	if (turn == OO_EVAL_NONE && num_all > num_holes)
		turn = pick_turn(net, w, num_holes, dest, lid);
	w->last_turn = turn;
	if (turn == OO_EVAL_NONE) {
		*left += num_holes;
		return 0;
	}
	for (h = 0; h < num_holes; h++)
		filled += fill_way(net, w, w->holes[h], lid, turn);
	walk_all(net, w, dest, lid);
	for (h = start; h < w->num_fills; h++)
		if (w->state[w->fills[2 * h]] != WALK_OK) {
			undo_fills(net, w, start);
			*left += num_holes;
			return 0;
		}
	return filled;
}

/**********************************************************************
 * The pass
 **********************************************************************/

static void free_work(struct reach_work *w)
{
	free(w->state);
	free(w->path);
	free(w->holes);
	free(w->cas);
	free(w->hcas);
	free(w->order);
	free(w->need);
	free(w->holes_at);
	free(w->was_ok);
	free(w->fills);
	free(w->tried);
	free(w->in_use);
}

/*
 * Which LIDs some switch has no entry for: one pass over the tables, so
 * that only those LIDs are followed from every switch.
 */
static int mark_holes(const struct oo_reach_net *net, struct reach_work *w)
{
	unsigned len = 0, lid;
	uint32_t s;

	for (s = 0; s < net->num_sw; s++)
		if (net->lft_len[s] > len)
			len = net->lft_len[s];
	w->holes_at = calloc(len + 1, 1);
	if (!w->holes_at) {
		free_work(w);
		return -1;
	}
	for (s = 0; s < net->num_sw; s++)
		for (lid = 1; lid < net->lft_len[s]; lid++)
			w->holes_at[lid] |= net->lft[s][lid] == OO_LFT_NONE;
	w->max_lid = len;
	return 0;
}

/*
 * The order destinations are filled in: the HCAs, then the SHARP nodes,
 * each in index order.  Where fills compete for the channel dependencies
 * a loop-free set allows, the LIDs of the HCAs (a management node that
 * runs the SM or the SHARP manager) come first.
 */
static void order_dests(const struct oo_reach_net *net, struct reach_work *w)
{
	uint32_t d, n = 0;
	int minor;

	for (minor = 0; minor <= 1; minor++)
		for (d = 0; d < net->num_dests; d++)
			if (is_minor(net, d) == minor)
				w->order[n++] = d;
}

static int init_work(const struct oo_reach_net *net, struct reach_work *w)
{
	uint32_t d;

	memset(w, 0, sizeof(*w));
	w->turn = OO_EVAL_NONE;
	w->only_hole = OO_EVAL_NONE;
	w->state = calloc(net->num_sw + 1, 1);
	w->path = calloc(net->num_sw + 1, sizeof(*w->path));
	w->holes = calloc(net->num_sw + 1, sizeof(*w->holes));
	w->cas = calloc(net->num_sw + 1, sizeof(*w->cas));
	w->hcas = calloc(net->num_sw + 1, sizeof(*w->hcas));
	w->order = calloc(net->num_dests + 1, sizeof(*w->order));
	w->need = calloc(net->num_sw + 1, 1);
	w->tried = calloc(net->num_sw + 1, 1);
	w->in_use = calloc(net->num_sw + 1, 1);
	if (!w->state || !w->path || !w->holes || !w->cas || !w->hcas ||
	    !w->order || !w->need || !w->tried || !w->in_use) {
		free_work(w);
		return -1;
	}
	for (d = 0; d < net->num_dests; d++) {
		w->cas[net->dest_sw[d]]++;
		if (is_minor(net, d))
			w->num_minor++;
		else
			w->hcas[net->dest_sw[d]]++;
	}
	order_dests(net, w);
	return mark_holes(net, w);
}

/* Fill the holes of one LID of dest; 1 if it had holes. */
static unsigned fill_dest(const struct oo_reach_net *net,
			  struct reach_work *w, uint32_t dest, unsigned offset,
			  struct oo_reach_result *res)
{
	unsigned lid = net->dest_lid[dest] + offset, left = 0, filled;
	int had = 0;

	if (lid >= w->max_lid || !w->holes_at[lid])
		return 0;
	filled = fill_lid(net, w, dest, lid, &left, &had);
	res->filled += filled;
	res->left += left;
	return (unsigned)had;
}

/* Fill every destination's LID offset; 1 if the tables stay acyclic. */
static int fill_all(const struct oo_reach_net *net, struct reach_work *w,
		    unsigned offset, struct oo_reach_result *res)
{
	uint32_t i;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < net->num_dests; i++)
		res->lids += fill_dest(net, w, w->order[i], offset, res);
	return res->filled ? oo_reach_acyclic(net) : 1;
}

/*
 * The turn switches the kept fills of lid lead to: the first switch with
 * an entry of its own after a filled one.  Returns how many.
 */
static unsigned mark_turns_in_use(const struct oo_reach_net *net,
				  struct reach_work *w, unsigned lid)
{
	unsigned n = 0;
	size_t i;

	memset(w->in_use, 0, net->num_sw);
	for (i = 0; i < w->num_fills; i++) {
		uint32_t s = w->fills[2 * i], t;

		if (w->fills[2 * i + 1] != lid)
			continue;
		t = net->next[(size_t)s * net->stride + net->lft[s][lid]];
		if (t != OO_EVAL_NONE)
			w->in_use[t] = 1;
	}
	for (i = 0; i < w->num_fills; i++)
		if (w->fills[2 * i + 1] == lid)
			w->in_use[w->fills[2 * i]] = 0;
	for (i = 0; i < net->num_sw; i++)
		n += w->in_use[i];
	return n;
}

/* Turn switches fill_dest_acyclic() tries for one LID. */
#define OO_REACH_TURN_TRIES 8

/* The passes of fill_passes(). */
#define OO_REACH_PASSES 4

/*
 * Whether to try another turn switch for lid after the fills toward
 * w->last_turn closed a loop: for an HCA's LID in the pass for HCAs'
 * traffic, the next best switch, up to OO_REACH_TURN_TRIES; in any pass,
 * last, the switches this LID's kept fills already turn at (w->reuse):
 * the dependencies out of those are there already, and a turn from one
 * more switch into them is less likely to close a loop.
 */
static int another_turn(const struct oo_reach_net *net, struct reach_work *w,
			uint32_t d, unsigned lid, unsigned try)
{
	if ((w->retry || (w->from == FROM_HCAS && !is_minor(net, d))) &&
	    try + 1 < OO_REACH_TURN_TRIES) {
		w->tried[w->last_turn] = 1;
		return 1;
	}
	if (w->reuse || !mark_turns_in_use(net, w, lid) ||
	    w->in_use[w->last_turn])
		return 0;
	w->reuse = 1;
	return 1;
}

/*
 * Hole h of a LID of d toward its own turn switch: the best, else the
 * next best, up to OO_REACH_TURN_TRIES, kept where the dependencies in g
 * stay acyclic.  Returns the entries kept, or -1 with no memory.
 */
static int fill_hole_alone(const struct oo_reach_net *net,
			   struct reach_work *w, struct oo_cdg *g,
			   uint32_t d, unsigned offset, uint32_t h)
{
	unsigned lid = net->dest_lid[d] + offset, try;
	int ok, kept = 0;

	w->only_hole = h;
	for (try = 0; try < OO_REACH_TURN_TRIES; try++) {
		struct oo_reach_result one;
		size_t start = w->num_fills;

		memset(&one, 0, sizeof(one));
		fill_dest(net, w, d, offset, &one);
		if (!one.filled)
			break;
		ok = oo_cdg_add_lid(g, lid);
		if (ok > 0) {
			kept = (int)one.filled;
			break;
		}
		undo_fills(net, w, start);
		if (ok < 0) {
			kept = -1;
			break;
		}
		w->tried[w->last_turn] = 1;
	}
	w->only_hole = OO_EVAL_NONE;
	memset(w->tried, 0, net->num_sw);
	return kept;
}

/* Fills hole h of the LID offset of d on its own (fill_each_hole()). */
typedef int (*oo_hole_filler)(const struct oo_reach_net *net,
			      struct reach_work *w, struct oo_cdg *g,
			      uint32_t d, unsigned offset, uint32_t h);

/*
 * The holes of the LID offset of d that traffic runs into, where there
 * are at least min_holes (1 or more), each filled by fill on its own.
 * Returns the entries kept, or -1 with no memory.
 */
static int fill_each_hole(const struct oo_reach_net *net,
			  struct reach_work *w, struct oo_cdg *g, uint32_t d,
			  unsigned offset, unsigned min_holes,
			  oo_hole_filler fill)
{
	unsigned lid = net->dest_lid[d] + offset, n, i;
	uint32_t *holes;
	int filled = 0, one;

	walk_all(net, w, d, lid);
	n = find_needed_holes(net, w, lid);
	if (n < min_holes)
		return 0;
	holes = malloc(sizeof(*holes) * n);
	if (!holes)
		return -1;
	memcpy(holes, w->holes, sizeof(*holes) * n);
	for (i = 0; i < n && filled >= 0; i++) {
		one = fill(net, w, g, d, offset, holes[i]);
		filled = one < 0 ? -1 : filled + one;
	}
	free(holes);
	return filled;
}

/*
 * Where no turn switch takes every hole of a LID of d without closing a
 * loop, each hole that traffic runs into on its own (fill_hole_alone()):
 * two holes may each have a loop-free turn switch, but none in common.
 * For the retry round, whose holes are those traffic runs into.  Returns
 * the entries kept, or -1 with no memory.
 */
static int fill_holes_apart(const struct oo_reach_net *net,
			    struct reach_work *w, struct oo_cdg *g,
			    uint32_t d, unsigned offset)
{
	return fill_each_hole(net, w, g, d, offset, 2, fill_hole_alone);
}

/*
 * The rank of port p of hole h as the way on for a LID of dest: the
 * hops from the switch behind it to the LID's delivery, then its CA
 * ports (an empty edge switch carries the least traffic of its own);
 * UINT32_MAX when p leads to no switch that delivers the LID.  Call
 * after walk_all().
 */
static uint32_t port_rank(const struct oo_reach_net *net,
			  const struct reach_work *w, uint32_t h,
			  uint32_t dest, unsigned lid, unsigned p)
{
	uint32_t t = net->next[(size_t)h * net->stride + p];
	int hops;

	if (t == OO_EVAL_NONE || t == h || w->state[t] != WALK_OK)
		return UINT32_MAX;
	hops = hops_along(net, t, lid, dest, 1);
	if (hops < 0 || hops > 0xff)
		return UINT32_MAX;
	return (uint32_t)hops << 24 | (w->cas[t] < 0xffffff ?
					w->cas[t] : 0xffffff);
}

/*
 * Add to g the dependencies a new entry of switch h for lid brings: those
 * of its route on from h, and at h those of the routes of the switches
 * whose entries lead into it (the rest of the tables is as before).
 * Returns as oo_cdg_add_route(), every route added taken back unless 1.
 */
static int add_entry_dependencies(const struct oo_reach_net *net,
				  struct oo_cdg *g, uint32_t h, unsigned lid)
{
	unsigned q;
	int ok;

	oo_cdg_begin(g);
	ok = oo_cdg_add_route(g, h, lid);
	for (q = 1; q < net->stride && ok > 0; q++) {
		size_t at = (size_t)h * net->stride + q;
		uint32_t u = net->next[at];

		if (u != OO_EVAL_NONE && u != h &&
		    entry(net, u, lid) == net->rport[at])
			ok = oo_cdg_add_route(g, u, lid);
	}
	if (ok <= 0)
		oo_cdg_rollback(g);
	return ok;
}

/*
 * Hole h of the LID offset of dest filled with one entry: a port to a
 * switch that delivers the LID, the best ranked first (port_rank()), kept
 * where the dependencies in g stay acyclic.  A turn switch's fills take
 * the port h sends that switch's own LID by, one of several where cables
 * are doubled, and each cable into a switch is a channel of its own:
 * another may close no loop.  Returns 1 kept, 0 none, -1 with no memory.
 */
static int fill_hole_by_port(const struct oo_reach_net *net,
			     struct reach_work *w, struct oo_cdg *g,
			     uint32_t dest, unsigned offset, uint32_t h)
{
	unsigned lid = net->dest_lid[dest] + offset, ports, p;
	uint32_t rank[256];

	if (lid >= net->lft_len[h] || net->lft[h][lid] != OO_LFT_NONE)
		return 0;
	/* the fills of the holes before may deliver the LID from more
	   switches; a try taken back changes no rank */
	walk_all(net, w, dest, lid);
	ports = net->stride < 256 ? net->stride : 256;
	for (p = 1; p < ports; p++)
		rank[p] = port_rank(net, w, h, dest, lid, p);
	for (;;) {
		uint32_t best_rank = UINT32_MAX;
		unsigned best = 0;
		size_t start = w->num_fills;
		int ok;

		for (p = 1; p < ports; p++)
			if (rank[p] < best_rank) {
				best_rank = rank[p];
				best = p;
			}
		if (!best)
			return 0;
		rank[best] = UINT32_MAX;
		if (reserve_fills(w, 1))
			return -1;
		record_fill(net, w, h, lid, (uint8_t)best);
		ok = add_entry_dependencies(net, g, h, lid);
		if (ok > 0)
			return 1;
		undo_fills(net, w, start);
		if (ok < 0)
			return -1;
	}
}

/*
 * The holes of a LID of d that traffic still runs into, each filled with
 * one entry toward a neighbour that delivers the LID (fill_hole_by_port()).
 * Returns the entries kept, or -1 with no memory.
 */
static int fill_holes_by_port(const struct oo_reach_net *net,
			      struct reach_work *w, struct oo_cdg *g,
			      uint32_t d, unsigned offset)
{
	return fill_each_hole(net, w, g, d, offset, 1, fill_hole_by_port);
}

/*
 * One destination's LID filled so that the dependencies in g stay
 * acyclic: toward its best turn switch; where those fills would close a
 * loop, toward the next best that no earlier try took, up to
 * OO_REACH_TURN_TRIES switches (a down/up turn at another edge switch
 * may meet no route of the other direction's turns); where some closed
 * a loop and none is kept in the retry round, each hole on its own
 * (fill_holes_apart()).
 * Returns 1, 0 (no try for every hole kept), or -1 with no memory.
 */
static int fill_dest_acyclic(const struct oo_reach_net *net,
			     struct reach_work *w, struct oo_cdg *g,
			     uint32_t d, unsigned offset,
			     struct oo_reach_result *res)
{
	unsigned lid = net->dest_lid[d] + offset, try;
	int ok = 0, closed = 0, kept = 0;

	for (try = 0; try <= OO_REACH_TURN_TRIES; try++) {
		struct oo_reach_result one;
		size_t start = w->num_fills;
		unsigned had;

		memset(&one, 0, sizeof(one));
		had = fill_dest(net, w, d, offset, &one);
		if (!try)
			res->lids += had;
		if (!one.filled) {
			res->left += one.left;
			ok = 1;
			break;
		}
		ok = oo_cdg_add_lid(g, lid);
		if (ok > 0) {
			res->left += one.left;
			res->filled += one.filled;
			kept = 1;
			break;
		}
		undo_fills(net, w, start);
		closed |= !ok;
		if (ok >= 0 && w->last_turn != OO_EVAL_NONE &&
		    another_turn(net, w, d, lid, try))
			continue;
		res->left += one.left + one.filled;
		break;
	}
	w->reuse = 0;
	memset(w->tried, 0, net->num_sw);
	if (ok >= 0 && closed && !kept && w->retry) {
		int apart = fill_holes_apart(net, w, g, d, offset);

		if (apart < 0)
			return -1;
		res->filled += (unsigned)apart;
	}
	return ok;
}

/*
 * One destination at a time, each kept only if the dependencies stay
 * acyclic: the dependency graph of the tables is built once, and each
 * destination's LID adds its own (oo_cdg_add_lid()), so the cost grows
 * with what the fills change, not with the size of every table.  Returns
 * 0, or -1 with no memory.
 */
static int fill_one_by_one(const struct oo_reach_net *net,
			   struct reach_work *w, unsigned offset,
			   struct oo_reach_result *res)
{
	struct oo_cdg g;
	uint32_t i;
	int ok = oo_cdg_init(&g, net);

	memset(res, 0, sizeof(*res));
	if (ok <= 0) {
		/* no memory, or a loop already (never from up/down tables):
		   no fill can be judged */
		if (!ok)
			oo_cdg_free(&g);
		return ok < 0 ? -1 : 0;
	}
	for (i = 0; i < net->num_dests && ok >= 0; i++)
		ok = fill_dest_acyclic(net, w, &g, w->order[i], offset, res);
	oo_cdg_free(&g);
	return ok < 0 ? -1 : 0;
}

/*
 * One LID offset of every destination: every LID at its own best turn
 * switch; if that closes a credit loop, every LID at the first turn
 * switch chosen wherever that one serves (a single turn switch lets no
 * loop through it); if that still does, one destination at a time.
 * Returns 0, or -1 with no memory (this offset's fills undone).
 */
static int fill_offset(const struct oo_reach_net *net, struct reach_work *w,
		       unsigned offset, struct oo_reach_result *res)
{
	size_t start = w->num_fills;
	int ok;

	w->sticky = 0;
	w->turn = OO_EVAL_NONE;
	ok = fill_all(net, w, offset, res);
	if (!ok) {
		undo_fills(net, w, start);
		w->sticky = 1;
		ok = fill_all(net, w, offset, res);
		if (!ok) {
			undo_fills(net, w, start);
			ok = fill_one_by_one(net, w, offset, res) ? -1 : 1;
		}
		res->cyclic = 1;
	}
	if (ok < 0)
		undo_fills(net, w, start);
	return ok < 0 ? -1 : 0;
}

/*
 * The holes left over every LID: those that traffic from any CA runs into
 * (needed_only), or every switch without an entry that does not reach the
 * LID.
 */
static unsigned count_holes(const struct oo_reach_net *net,
			    struct reach_work *w, int needed_only)
{
	unsigned n = 0, o;
	uint32_t d;

	w->from = FROM_CAS;	/* any CA's traffic, SHARP nodes' too */
	memset(w->need, 0, net->num_sw);
	for (d = 0; d < net->num_dests; d++)
		for (o = 0; o < net->lids_per_port; o++) {
			unsigned lid = net->dest_lid[d] + o;

			if (lid >= w->max_lid || !w->holes_at[lid])
				continue;
			walk_all(net, w, d, lid);
			n += needed_only ? find_needed_holes(net, w, lid) :
			    add_other_holes(net, w, lid, 0);
		}
	return n;
}

/**********************************************************************
 * The layered pass: the holes left, on virtual lanes above VL0
 **********************************************************************/

uint8_t oo_sl_map_get(const struct oo_sl_map *map, uint32_t sw,
		      unsigned lid)
{
	uint32_t r;

	if (!map->row || lid >= map->max_lid || sw >= map->num_sw)
		return 0;
	r = map->row[lid];
	return r == OO_SL_NO_ROW ? 0 : map->sl[(size_t)r * map->num_sw + sw];
}

void oo_sl_map_free(struct oo_sl_map *map)
{
	free(map->row);
	free(map->sl);
	memset(map, 0, sizeof(*map));
}

static int sl_map_init(struct oo_sl_map *map, unsigned num_sw,
		       unsigned max_lid)
{
	unsigned lid;

	memset(map, 0, sizeof(*map));
	map->row = malloc(sizeof(*map->row) * (max_lid + 1));
	if (!map->row)
		return -1;
	for (lid = 0; lid <= max_lid; lid++)
		map->row[lid] = OO_SL_NO_ROW;
	map->num_sw = num_sw;
	map->max_lid = max_lid;
	return 0;
}

/* A new row of SLs for lid, all 0: its index, or OO_SL_NO_ROW. */
static uint32_t add_sl_row(struct oo_sl_map *map, unsigned lid)
{
	if (map->num_rows == map->max_rows) {
		unsigned max = 2 * map->max_rows + 16;
		uint8_t *more = realloc(map->sl, (size_t)max * map->num_sw);

		if (!more)
			return OO_SL_NO_ROW;
		map->sl = more;
		map->max_rows = max;
	}
	memset(map->sl + (size_t)map->num_rows * map->num_sw, 0,
	       map->num_sw);
	map->row[lid] = map->num_rows;
	return map->num_rows++;
}

/* Take back the row add_sl_row() gave lid last. */
static void drop_sl_row(struct oo_sl_map *map, unsigned lid)
{
	map->num_rows--;
	map->row[lid] = OO_SL_NO_ROW;
}

/* The virtual lanes above VL0: the dependencies of each one's routes. */
struct lanes {
	struct oo_cdg cdg[OO_MAX_REACH_VLS];	/* [0] unused */
	unsigned vls;
};

/*
 * The lowest lane above VL0 that takes the route from s to lid with its
 * dependencies acyclic: the lane, 0 if none does, -1 with no memory.
 */
static int lane_for_route(struct lanes *ln, uint32_t s, unsigned lid)
{
	unsigned k;

	for (k = 1; k < ln->vls; k++) {
		int ok = oo_cdg_add_route(&ln->cdg[k], s, lid);

		if (ok)
			return ok < 0 ? -1 : (int)k;
	}
	return 0;
}

/*
 * Give each route to lid that only its new fills deliver (from a switch
 * that did not reach lid before them) a lane.  Returns the routes placed,
 * 0 when one finds no lane (every lane and the map as they were), -1
 * with no memory (the same).
 */
static int place_routes(const struct oo_reach_net *net,
			const struct reach_work *w, struct lanes *ln,
			unsigned lid, struct oo_sl_map *map, unsigned *top)
{
	uint32_t row = add_sl_row(map, lid), s;
	unsigned k, top_here = 0;
	int placed = 0, lane = 1;

	if (row == OO_SL_NO_ROW)
		return -1;
	for (k = 1; k < ln->vls; k++)
		oo_cdg_begin(&ln->cdg[k]);
	for (s = 0; s < net->num_sw && lane > 0; s++) {
		if (w->state[s] != WALK_OK || w->was_ok[s])
			continue;
		lane = lane_for_route(ln, s, lid);
		if (lane <= 0)
			break;
		map->sl[(size_t)row * map->num_sw + s] = (uint8_t)lane;
		if ((unsigned)lane > top_here)
			top_here = (unsigned)lane;
		placed++;
	}
	if (lane <= 0) {
		for (k = 1; k < ln->vls; k++)
			oo_cdg_rollback(&ln->cdg[k]);
		drop_sl_row(map, lid);
		return lane;
	}
	if (!placed)
		drop_sl_row(map, lid);
	if (top_here > *top)
		*top = top_here;
	return placed;
}

/*
 * Fill the holes of one LID of dest through any turn and put the routes
 * the fills make on lanes above VL0; the fills stay only if every such
 * route gets one.  Returns 0, or -1 with no memory (this LID's fills
 * undone).
 */
static int fill_dest_layered(const struct oo_reach_net *net,
			     struct reach_work *w, struct lanes *ln,
			     uint32_t dest, unsigned lid,
			     struct oo_reach_result *res,
			     struct oo_sl_map *map)
{
	size_t start = w->num_fills;
	unsigned filled, left = 0;
	uint32_t s;
	int had = 0, placed;

	walk_all(net, w, dest, lid);
	for (s = 0; s < net->num_sw; s++)
		w->was_ok[s] = w->state[s] == WALK_OK;
	filled = fill_lid(net, w, dest, lid, &left, &had);
	if (!filled)
		return 0;
	placed = place_routes(net, w, ln, lid, map, &res->top_sl);
	if (placed <= 0) {
		undo_fills(net, w, start);
		return placed;
	}
	res->filled += filled;
	res->layered += (unsigned)placed;
	return 0;
}

/*
 * After the loop-free passes: the holes left, each LID toward its own
 * best turn switch, base LIDs first, the HCAs' before the SHARP nodes'.
 * Returns 0, or -1 with no memory.
 */
static int fill_layered(const struct oo_reach_net *net, struct reach_work *w,
			unsigned vls, struct oo_reach_result *res,
			struct oo_sl_map *map)
{
	struct lanes ln;
	unsigned k, o, i;
	int ret = 0;

	memset(&ln, 0, sizeof(ln));
	w->was_ok = calloc(net->num_sw + 1, 1);
	if (!w->was_ok || sl_map_init(map, net->num_sw, w->max_lid))
		return -1;
	for (ln.vls = 1; ln.vls < vls; ln.vls++)
		if (oo_cdg_init_empty(&ln.cdg[ln.vls], net)) {
			ret = -1;
			break;
		}
	w->from = FROM_ANY;
	w->sticky = 0;
	w->turn = OO_EVAL_NONE;
	for (o = 0; o < net->lids_per_port && !ret; o++)
		for (i = 0; i < net->num_dests && !ret; i++) {
			uint32_t d = w->order[i];
			unsigned lid = net->dest_lid[d] + o;

			if (lid < w->max_lid && w->holes_at[lid])
				ret = fill_dest_layered(net, w, &ln, d, lid,
							res, map);
		}
	for (k = 1; k < ln.vls; k++)
		oo_cdg_free(&ln.cdg[k]);
	res->left = count_holes(net, w, 0);
	return ret;
}

/**********************************************************************
 * The last resort: a LID takes the routes of another LID of its port
 **********************************************************************/

/* lost_sources() of a LID that neither lends nor takes routes */
#define LOST_ALL UINT64_MAX

/*
 * The CA ports whose traffic to lid gets lost on the way (from a switch
 * that does not reach it): the HCAs' count in the high 32 bits, every
 * CA's in the low, so that the HCAs' traffic weighs first.
 */
static uint64_t lost_sources(const struct oo_reach_net *net,
			     struct reach_work *w, uint32_t dest, unsigned lid)
{
	uint64_t hcas = 0, cas = 0;
	uint32_t s;

	if (lid >= w->max_lid)
		return LOST_ALL;	/* no switch has an entry for it */
	if (!w->holes_at[lid])
		return 0;
	walk_all(net, w, dest, lid);
	for (s = 0; s < net->num_sw; s++)
		if (w->state[s] != WALK_OK) {
			hcas += w->hcas[s];
			cas += w->cas[s];
		}
	return hcas << 32 | cas;
}

/* Whether the layered pass put some route to lid above VL0. */
static int on_lanes(const struct oo_sl_map *map, unsigned lid)
{
	return map && map->row && lid < map->max_lid &&
	    map->row[lid] != OO_SL_NO_ROW;
}

/*
 * Whether a LID that loses lost traffic (lost_sources()) is better off
 * with the routes of one that loses lender's: it must reach more HCAs, or
 * for a SHARP node's LID, more CAs.  An HCA's LID that only SHARP nodes'
 * traffic cannot get to keeps its own routes and its spread: the hosts'
 * traffic is what it carries.
 */
static int lends_more(const struct oo_reach_net *net, uint32_t dest,
		      uint64_t lender, uint64_t lost)
{
	if (is_minor(net, dest))
		return lender < lost;
	return lender >> 32 < lost >> 32;
}

/*
 * Where the fills leave one LID of a port short of a switch its traffic
 * starts at and another LID of the port reaches more of them, the first
 * takes the second's entry at every switch.  Its channel dependencies
 * are then the other's, which the tables have already: no new one, so no
 * credit loop can form.  It gives up its own spread over the ports for
 * that LID only.  Of the port's LIDs, the one that loses the least
 * traffic, the lowest of them on a tie, lends its routes, where
 * lends_more().  A LID with routes the layered pass put above VL0 (map)
 * neither lends nor borrows: its routes are not the same on every lane;
 * nor does one that no switch has an entry for (both LOST_ALL).  Returns
 * the LIDs that took another's routes.
 */
static unsigned borrow_routes(const struct oo_reach_net *net,
			      struct reach_work *w,
			      const struct oo_sl_map *map)
{
	uint64_t lost[128];
	unsigned n = 0, o, best, lid, from;
	uint32_t d, s;

	if (net->lids_per_port < 2 || net->lids_per_port > 128)
		return 0;
	for (d = 0; d < net->num_dests; d++) {
		best = 0;
		for (o = 0; o < net->lids_per_port; o++) {
			lid = net->dest_lid[d] + o;
			lost[o] = on_lanes(map, lid) ? LOST_ALL :
			    lost_sources(net, w, d, lid);
			if (lost[o] < lost[best])
				best = o;
		}
		from = net->dest_lid[d] + best;
		for (o = 0; o < net->lids_per_port; o++) {
			lid = net->dest_lid[d] + o;
			if (lost[o] == LOST_ALL ||
			    !lends_more(net, d, lost[best], lost[o]))
				continue;
			for (s = 0; s < net->num_sw; s++)
				if (lid < net->lft_len[s])
					net->lft[s][lid] =
					    entry(net, s, from);
			w->holes_at[lid] = 1;
			n++;
		}
	}
	return n;
}

/*
 * Once every pass has run, each hole left that traffic from a CA runs
 * into, with one entry toward a neighbour that delivers the LID, where
 * the dependencies stay acyclic (fill_holes_by_port()): every LID offset
 * in turn, the base LIDs first, and in each the destinations in fill
 * order.  Last, so that the passes fill as they do without it.  Returns
 * 0, or -1 with no memory.
 */
static int fill_left_by_port(const struct oo_reach_net *net,
			     struct reach_work *w, struct oo_reach_result *res)
{
	struct oo_cdg g;
	unsigned o, filled = 0;
	uint32_t i;
	int ok = oo_cdg_init(&g, net);

	if (ok <= 0) {
		/* no memory, or a loop already: no fill can be judged */
		if (!ok)
			oo_cdg_free(&g);
		return ok < 0 ? -1 : 0;
	}
	w->from = FROM_CAS;
	w->retry = 0;
	for (o = 0; o < net->lids_per_port && ok >= 0; o++)
		for (i = 0; i < net->num_dests && ok >= 0; i++) {
			uint32_t d = w->order[i];
			unsigned lid = net->dest_lid[d] + o;
			int one;

			if (lid >= w->max_lid || !w->holes_at[lid])
				continue;
			one = fill_holes_by_port(net, w, &g, d, o);
			if (one < 0)
				ok = -1;
			else
				filled += (unsigned)one;
		}
	oo_cdg_free(&g);
	if (ok < 0)
		return -1;
	if (filled) {
		res->filled += filled;
		res->left = count_holes(net, w, 0);
	}
	return 0;
}

/*
 * Passes in order of need, so that what matters most comes first
 * wherever fills compete for the channel dependencies a loop-free set
 * allows: the holes that traffic from HCAs runs into (from a switch with
 * HCAs of its own: what a management node that runs the SM or the SHARP
 * manager needs); where there are SHARP aggregation nodes, then the holes
 * their traffic runs into, first toward each LID's best turn switch only,
 * then, for the holes left, toward the next best ones as well (the HCAs'
 * pass tries those for the HCAs' LIDs from the start: the SHARP nodes'
 * fills should not take the loop-free turns the HCAs' own need); then
 * every hole left (a switch's own management traffic); and with by_port
 * (the pass as OpenSM runs it), last, each hole left that traffic from a
 * CA runs into with one entry toward a neighbour that delivers the LID
 * (fill_left_by_port()).  Where a LID's fills toward the turn switches
 * tried close a loop, its last try is toward a switch its kept fills
 * already turn at (another_turn()).  A destination's fills in a pass
 * stay or go together, so the HCAs' holes are not put at stake with the
 * SHARP nodes'.  In each pass, the LIDs of the HCAs before those of the
 * SHARP nodes (order_dests()), and the base LIDs first, then each further
 * LID offset: the base-LID fills are then the same at every LMC wherever
 * the checks allow them.  With more than one virtual lane, the layered
 * pass (fill_layered()) then takes the holes left.  Last, with borrow
 * (the pass on the tables that stay), a LID still short of switches its
 * traffic starts at takes the routes of another LID of its port that
 * reaches more of them (borrow_routes()).
 */
static int fill_passes(const struct oo_reach_net *net, unsigned vls,
		       struct oo_reach_result *res, struct oo_sl_map *map,
		       int retry, int borrow, int by_port)
{
	static const struct {
		int from, retry;
	} passes[OO_REACH_PASSES] = {
		{ FROM_HCAS, 0 }, { FROM_CAS, 0 }, { FROM_CAS, 1 },
		{ FROM_ANY, 0 },
	};
	struct reach_work w;
	unsigned o, pass;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (map)
		memset(map, 0, sizeof(*map));
	if (!net->num_sw || !net->stride)
		return 0;
	if (init_work(net, &w))
		return -1;
	for (pass = 0; pass < OO_REACH_PASSES && !ret; pass++) {
		w.from = passes[pass].from;
		w.retry = passes[pass].retry;
		/* without SHARP nodes, the same holes as the HCAs' pass */
		if ((w.from == FROM_CAS && !w.num_minor) ||
		    (w.retry && !retry))
			continue;
		for (o = 0; o < net->lids_per_port && !ret; o++) {
			struct oo_reach_result one;

			ret = fill_offset(net, &w, o, &one);
			/* LIDs with holes: as the first pass found them;
			   holes left: as the last leaves them */
			if (w.from == FROM_HCAS)
				res->lids += one.lids;
			else if (w.from == FROM_ANY)
				res->left += one.left;
			res->filled += one.filled;
			res->cyclic |= one.cyclic;
		}
	}
	if (!ret && by_port && res->left)
		ret = fill_left_by_port(net, &w, res);
	if (!ret && map && vls > 1 && res->left)
		ret = fill_layered(net, &w, vls < OO_MAX_REACH_VLS ? vls :
				   OO_MAX_REACH_VLS, res, map);
	if (ret) {
		undo_fills(net, &w, 0);
		if (map)
			oo_sl_map_free(map);
	} else {
		/* nothing after this can fail: no fill is taken back */
		if (borrow)
			res->borrowed = borrow_routes(net, &w, map);
		if (res->borrowed)
			res->left = count_holes(net, &w, 0);
		res->left_ca = count_holes(net, &w, 1);
	}
	free_work(&w);
	return ret;
}

int oo_reach_fill_vls(const struct oo_reach_net *net, unsigned vls,
		      struct oo_reach_result *res, struct oo_sl_map *map)
{
	return fill_passes(net, vls, res, map, 1, 1, 1);
}

int oo_reach_fill(const struct oo_reach_net *net,
		  struct oo_reach_result *res)
{
	return fill_passes(net, 1, res, NULL, 1, 0, 0);
}

int oo_reach_fill_no_retry(const struct oo_reach_net *net,
			   struct oo_reach_result *res)
{
	return fill_passes(net, 1, res, NULL, 0, 0, 0);
}
