/*
 * osmoffset - polish: move single LFT entries of switches with hosts to an
 * equally short path where that lowers the busiest link of some
 * shift-alltoall round
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Where a tree is degraded, no per-level digit rule keeps every round of a
 * shift alltoall at one flow per link: a leaf short of a cable sends the
 * LIDs of its dead slot over a live one, and in some rounds that cable
 * then carries three flows where the optimum carries two.  The polish
 * holds every round of the cells it is given (rank order, traffic) in
 * memory, link loads (a byte each) and a histogram of them, and moves the
 * entry of one leaf for one LID to another port whose path to that LID
 * is as short, where that lowers the busiest link of the rounds of the
 * steering cells it touches (the structured orders), or the number of
 * links that carry that load, and lowers no group of cells (the mean of
 * a sample of random orders is one group, which must not drop but does
 * not steer: polishing toward a sample fits the sample).  Where no single
 * move gains, a swap may: two entries of one switch for LIDs of the same
 * offset trade ports, which leaves its route counts as they were.
 *
 * A random rank order loads a link in proportion to its route count (the
 * flows of all ranks to all other ranks' LIDs that cross it), and port
 * offsetting's digits, which balance the spines, leave the cables
 * uneven where some are doubled and others missing: one edge of a
 * three-level analog sends 30 LIDs over each single cable to a spine and
 * 15 over each of a doubled pair.  Once no sweep moves, a second phase
 * moves entries where that evens the route counts (the sum of their
 * squares drops) and changes no round of the steering cells for the
 * worse, and lowers no group; such moves often open new ones of the
 * first kind, so a sweep follows each pass that moved.  Those sweeps
 * seek fewer links at a round's busiest load too, and through them
 * lower rounds, so this phase holds a round's ties: where the
 * structured orders already load some link with two flows it leaves
 * the single cables their double share (on an NDR fabric whose edges
 * miss 4 of their 32 cables, bench-fabrics' var-ndr-sharp-mgmt, an edge
 * kept 18-22 LIDs on each single cable and 11-12 on the others, and its
 * random order 0.223 to stock dfsssp's 0.230).  oo_polish_even() makes
 * the same moves with the ties loose, on tables the polish is done with:
 * a move may leave more links at a round's busiest load, and no sweep
 * follows.  Within the polish that cost its later stages the structured
 * figures they reached from the strict phase's tables, and evening the
 * base LIDs' counts cost striped traffic in random orders, so the stock
 * guard runs it last (option polish_even) and keeps it only where every
 * cell it judges holds.  It holds the steering cells' orders alone:
 * leaf orders whose leaves come in another order can lose.
 *
 * Even counts are not all a random order wants: two flows of one of its
 * rounds never come from one rank nor go to one rank, so a link whose
 * routes come from few ranks or go to few hosts carries fewer flows at
 * once than its count says.  Evening the counts spreads one host's
 * routes over more links down to it, and a random order may lose by it.
 * A third phase (where the caller gives it a budget) moves entries where
 * that lowers the pairs of flows that one round may run over a link at
 * once (per link: its routes less those from the same rank or to the
 * same host; at LMC > 0 also over the LIDs of every offset, where a
 * flow's LIDs that share a link weigh as one more flow in every round),
 * and slows no round of the steering cells: a move may leave one more
 * link at a round's busiest load (that round no slower) and lowers no
 * group.  No sweep of the first kind follows it.
 *
 * A group has a floor: its efficiency at the start less its lead (the
 * guard's: over the stock tables' figure).  Where one is still below its
 * floor after these phases, a last stage sweeps again on a budget of its
 * own, and there a move may lower other groups down to their floors
 * where it raises the rounds of the groups below theirs (which weigh
 * RESCUE_WEIGHT times more): the lead of one cell over stock is spent to
 * bring another up to stock.  Where some group is still below its floor
 * after that stage, its moves are taken back: leads spent for nothing
 * would leave the tables worse than before.
 *
 * Single moves and swaps stop at a local optimum: on a degraded 8x4 tree
 * at LMC 1 the polish stops at 0.661 in leaf order where 0.677 keeps
 * every job and random order as high.  oo_polish_kicks() searches on
 * from tables the polish is done with: a kick moves a few hot entries at
 * random, the sweeps of the last stage mend what that lowered (every
 * group's floor its figure before the kick), and the moves stay only
 * where no group ends lower and the steering cells gained.
 *
 * Only the entries of switches that hold hosts move, for LIDs no
 * neighbour's entry leads into them, and only to ports that no traffic
 * from another switch leaves through (no entry of a neighbour leads a
 * LID into the switch that it forwards through that port).  The link out
 * of such a port has no channel before it in the channel dependency
 * graph, so a route that starts there closes no credit loop: the moves
 * keep tables that were free of credit loops free of them.  A move makes
 * its LID transit traffic at the switch it leads to, which is marked so
 * for the moves after it.  Free of OpenSM types.
 */

#include <stdlib.h>
#include <string.h>

#include "osmoffset.h"

#define BINS OO_POLISH_LOAD_BINS
#define NONE OO_EVAL_NONE
/* what one link at the round's busiest load costs, beside 1 / load */
#define TIE_WEIGHT 1e-7
/* how much more a round of a group below its floor weighs */
#define RESCUE_WEIGHT 1000.0
/* entries a kick moves, the tries per entry to find one that may move,
   and the kicks' random numbers' seed */
#define KICK_SIZE 4
#define KICK_TRIES 200
#define KICK_SEED 2463534242U

struct polish {
	const struct oo_eval_net *net;
	uint8_t *const *lft;
	const struct oo_polish_cell *cell;
	unsigned num_cells;
	unsigned num_hosts;
	uint32_t *link;		/* per switch port: compact link, or NONE */
	unsigned num_links;
	size_t *first_round;	/* per cell: its first round in max/hist */
	size_t rounds;
	uint8_t *load;		/* per round: num_links loads */
	uint8_t *max;		/* per round: highest bin in use */
	uint32_t *hist;		/* per round: BINS link counts by load */
	uint32_t *pos;		/* per cell and host: rank, or NONE */
	uint32_t *src;		/* per cell: ranks grouped by switch */
	uint32_t *src_first;	/* per cell: num_sw + 1 starts into src */
	uint8_t *source;	/* per switch: holds a host */
	uint8_t *busy;		/* per switch port: traffic from another
				   switch leaves through it */
	uint8_t *through;	/* per switch and LID, a bit: that LID
				   comes in from another switch and
				   leaves toward one */
	size_t *lid_base;	/* per switch: its first bit in through */
	unsigned num_groups;
	unsigned *group_size;	/* per group: its cells */
	uint32_t *count;	/* per LID offset and link: the routes of
				   every rank to every rank's LID */
	uint32_t *weight;	/* per switch: its ranks */
	uint8_t *is_rank;	/* per host: a rank of some cell */
	int counting;		/* the counts are current */
	double *group_delta;	/* per group: a move's change, scratch */
	double *group_kept;	/* per group: group_delta before a trial */
	double *group_eff;	/* per group: its efficiency now */
	double *floor;		/* per group: its efficiency at the start
				   less its lead */
	int rescue;		/* some group is below its floor */
	int relax;		/* the last stage: moves may spend other
				   groups' leads over their floors */
	int loose_ties;		/* a round's ties count for nothing */
	unsigned first_offset;	/* the entries toward lower LID offsets
				   stay (oo_polish_offsets(): 1) */
	uint32_t *from_idx;	/* per switch with ranks: its rows of from */
	uint32_t *from;		/* per such switch, two rows of links: the
				   ranks' base LIDs it routes over each
				   link, and their LIDs of every offset */
	uint32_t *to_host;	/* two rows of links, scratch: the routes
				   to one host's base LID, to its LIDs of
				   every offset, that cross each */
	uint32_t *sibling;	/* per link, scratch: other LIDs of that
				   host from one switch that cross it */
	uint32_t *touched;	/* scratch: the links to_host holds */
	unsigned num_touched;
	uint32_t *cable_head;	/* per link: the first of the switches
				   whose route to one LID crosses it, an
				   index into cable_sw, or NONE */
	uint32_t *cable_w;	/* per link: those switches' ranks */
	uint32_t *cable_links;	/* the links cable_head holds lists of */
	unsigned num_cable_links;
	uint32_t *cable_sw;	/* per list entry: its switch */
	uint32_t *cable_next;	/* per list entry: the next, or NONE */
	struct oo_cdg *cdg;	/* the tables' channel dependencies, for
				   way_entry(); NULL: none (no memory) */
	unsigned num_ranks;
	struct undo *undo;	/* the last stage's moves, to take back */
	size_t num_undo;
	size_t max_undo;
	int overflow;		/* a link got more than a byte holds */
	uint64_t work;
	uint64_t budget;
};

/* An entry as it was before a move of the last stage or of a kick. */
struct undo {
	uint32_t s;
	uint32_t h;		/* the host whose LID it is */
	unsigned lid;
	uint8_t port;
};

struct path {
	uint32_t link[OO_POLISH_MAX_HOPS];
	unsigned len;
};

/* The rounds of a shift alltoall among a cell's ranks. */
static size_t cell_rounds(const struct oo_polish_cell *c)
{
	return c->n > 1 ? c->n - 1 : 0;
}

static unsigned bin(unsigned load)
{
	return load < BINS ? load : BINS - 1;
}

static uint8_t *round_load(const struct polish *p, size_t r)
{
	return p->load + r * p->num_links;
}

static uint32_t *round_hist(const struct polish *p, size_t r)
{
	return p->hist + r * BINS;
}

/*
 * The links LID lid crosses from switch s to host h, first port given
 * (0: s's entry).  0 when it arrives within OO_POLISH_MAX_HOPS, else -1.
 */
static int follow(const struct polish *p, uint32_t s, uint8_t first,
		  unsigned lid, uint32_t h, struct path *path)
{
	uint8_t port = first;

	path->len = 0;
	while (path->len < OO_POLISH_MAX_HOPS) {
		size_t at;
		int ret = oo_eval_hop(p->net, s, port, lid, h, &at);

		if (ret)
			return ret > 0 ? 0 : -1;
		path->link[path->len++] = p->link[at];
		s = p->net->next[at];
		port = 0;
	}
	return -1;
}

/* Add w to (sign > 0) or take it from the links of path in round r. */
static void load_path(struct polish *p, size_t r, const struct path *path,
		      unsigned w, int sign)
{
	uint8_t *load = round_load(p, r);
	uint32_t *hist = round_hist(p, r);
	unsigned i;

	for (i = 0; i < path->len; i++) {
		uint8_t *l = &load[path->link[i]];

		hist[bin(*l)]--;
		if (sign > 0 && *l + w > UINT8_MAX)
			p->overflow = 1;
		*l = (uint8_t)(sign > 0 ? *l + w : *l - w);
		hist[bin(*l)]++;
		if (bin(*l) > p->max[r])
			p->max[r] = (uint8_t)bin(*l);
	}
	while (p->max[r] && !hist[p->max[r]])
		p->max[r]--;
	p->work += path->len;
}

/* A round's efficiency at busiest load max, as oo_eval_shift(). */
static double eff_at(const struct polish *p, unsigned max)
{
	unsigned lids = p->net->lids_per_port;

	return max > lids ? (double)lids / max : 1.0;
}

/* The same, less a little for each of the at_max links at that load. */
static double value_at(const struct polish *p, unsigned max, uint32_t at_max)
{
	unsigned lids = p->net->lids_per_port;

	if (max <= lids)
		return 1.0;
	if (p->loose_ties)
		return (double)lids / max;
	return (double)lids / max - TIE_WEIGHT * at_max;
}

/* A round's efficiency, 1 / its busiest link. */
static double round_eff(const struct polish *p, size_t r)
{
	return eff_at(p, p->max[r]);
}

/* The same, less a little for each link at that load. */
static double round_value(const struct polish *p, size_t r)
{
	return value_at(p, p->max[r], round_hist(p, r)[p->max[r]]);
}

/*
 * How many more links of round r would be at load bin b, were w of the
 * load of the links of old to move to those of new (no link on both).
 */
static long bin_change(const struct polish *p, size_t r,
		       const struct path *old, const struct path *new,
		       unsigned w, unsigned b)
{
	const uint8_t *load = round_load(p, r);
	long n = 0;
	unsigned i;

	for (i = 0; i < old->len; i++) {
		unsigned a = load[old->link[i]];

		n += (bin(a - w) == b) - (bin(a) == b);
	}
	for (i = 0; i < new->len; i++) {
		unsigned a = load[new->link[i]];

		n += (bin(a + w) == b) - (bin(a) == b);
	}
	return n;
}

/*
 * Round r's busiest load (*max, a bin) and the links at it (*at_max),
 * were w of the load of the links of old to move to those of new; the
 * loads are only read.  The two paths share no link (own_links()).
 */
static void round_after(const struct polish *p, size_t r,
			const struct path *old, const struct path *new,
			unsigned w, unsigned *max, uint32_t *at_max)
{
	const uint8_t *load = round_load(p, r);
	const uint32_t *hist = round_hist(p, r);
	unsigned top = p->max[r], i;
	long n = 0;

	for (i = 0; i < new->len; i++)
		if (bin(load[new->link[i]] + w) > top)
			top = bin(load[new->link[i]] + w);
	for (; top > 0; top--) {
		n = (long)hist[top] + bin_change(p, r, old, new, w, top);
		if (n > 0)
			break;
	}
	*max = top;
	*at_max = top ? (uint32_t)n : 0;
}

/* The weight of one flow's LID in a cell, 0 where the cell sends none. */
static unsigned cell_weight(const struct polish *p,
			    const struct oo_polish_cell *c, unsigned offset)
{
	if (c->traffic == OO_EVAL_SPREAD)
		return 1;
	return (unsigned)c->traffic == offset ? p->net->lids_per_port : 0;
}

static int index_links(struct polish *p)
{
	const struct oo_eval_net *net = p->net;
	size_t at, n = (size_t)net->num_sw * net->stride;

	p->link = malloc(sizeof(*p->link) * (n + 1));
	if (!p->link)
		return -1;
	for (at = 0; at < n; at++)
		p->link[at] = net->next[at] == NONE ? NONE : p->num_links++;
	return 0;
}

/*
 * Per cell: each host's rank (NONE outside it) and its ranks grouped by
 * the switch of their host.
 */
static int index_ranks(struct polish *p)
{
	unsigned num_sw = p->net->num_sw, c, i;
	size_t total = 0;

	for (c = 0; c < p->num_cells; c++)
		total += p->cell[c].n;
	p->pos = malloc(sizeof(uint32_t) * ((size_t)p->num_cells *
					    p->num_hosts + 1));
	p->src = malloc(sizeof(uint32_t) * (total + 1));
	p->src_first = calloc((size_t)p->num_cells * (num_sw + 1) + 1,
			      sizeof(uint32_t));
	if (!p->pos || !p->src || !p->src_first)
		return -1;
	total = 0;
	for (c = 0; c < p->num_cells; c++) {
		const struct oo_polish_cell *cl = &p->cell[c];
		uint32_t *pos = p->pos + (size_t)c * p->num_hosts;
		uint32_t *first = p->src_first + (size_t)c * (num_sw + 1);
		uint32_t *src = p->src + total, s;

		for (i = 0; i < p->num_hosts; i++)
			pos[i] = NONE;
		for (i = 0; i < cl->n; i++) {
			pos[cl->order[i]] = i;
			first[p->net->host_sw[cl->order[i]] + 1]++;
		}
		for (s = 0; s < num_sw; s++)
			first[s + 1] += first[s];
		for (i = 0; i < cl->n; i++)
			src[first[p->net->host_sw[cl->order[i]]]++] = i;
		for (s = num_sw; s > 0; s--)
			first[s] = first[s - 1] + (uint32_t)total;
		first[0] = (uint32_t)total;
		total += cl->n;
	}
	return 0;
}

/* Cell c's ranks whose hosts hang off switch s, *count of them. */
static const uint32_t *cell_sources(const struct polish *p, unsigned c,
				    uint32_t s, unsigned *count)
{
	const uint32_t *first = p->src_first +
	    (size_t)c * (p->net->num_sw + 1);

	*count = first[s + 1] - first[s];
	return p->src + first[s];
}

/*
 * Load every round of every cell; a flow whose LID leads nowhere within
 * OO_POLISH_MAX_HOPS (a hole the reach pass may fill later) loads
 * nothing and is counted.  Returns the flows so lost.
 */
static uint64_t load_rounds(struct polish *p)
{
	const struct oo_eval_net *net = p->net;
	unsigned c, k, i, o, lids = net->lids_per_port;
	uint64_t lost = 0;
	struct path path;

	for (c = 0; c < p->num_cells; c++) {
		const struct oo_polish_cell *cl = &p->cell[c];

		for (k = 1; k < cl->n; k++) {
			size_t r = p->first_round[c] + k - 1;

			round_hist(p, r)[0] = p->num_links;
			for (i = 0; i < cl->n; i++) {
				uint32_t from = cl->order[i];
				uint32_t to = cl->order[(i + k) % cl->n];

				if (net->host_sw[from] == net->host_sw[to])
					continue;
				for (o = 0; o < lids; o++) {
					unsigned w = cell_weight(p, cl, o);

					if (!w)
						continue;
					if (follow(p, net->host_sw[from], 0,
						   net->host_lid[to] + o, to,
						   &path)) {
						lost++;
						continue;
					}
					load_path(p, r, &path, w, 1);
				}
			}
		}
	}
	return lost;
}

static int is_through(const struct polish *p, uint32_t s, unsigned lid)
{
	size_t b = p->lid_base[s] + lid;

	return p->through[b / 8] >> (b % 8) & 1;
}

/*
 * LID lid comes into switch t from another switch: where t forwards it
 * to a switch, mark it through t and t's port busy.
 */
static void mark_through(struct polish *p, uint32_t t, unsigned lid)
{
	const struct oo_eval_net *net = p->net;
	size_t b = p->lid_base[t] + lid;
	uint8_t out;

	if (lid >= net->lft_len[t])
		return;
	out = net->lft[t][lid];
	if (!out || out >= net->stride ||
	    net->next[(size_t)t * net->stride + out] == NONE)
		return;
	p->through[b / 8] |= (uint8_t)(1U << (b % 8));
	p->busy[(size_t)t * net->stride + out] = 1;
}

/*
 * The switches that hold a host, and the transit traffic of every
 * switch: each LID a neighbour's entry leads into it that it forwards to
 * another switch, and the ports such traffic leaves through.  Returns 0,
 * or -1 (no memory).
 */
static int find_transit(struct polish *p)
{
	const struct oo_eval_net *net = p->net;
	unsigned h, u, lid;

	p->source = calloc(net->num_sw + 1, 1);
	p->busy = calloc((size_t)net->num_sw * net->stride + 1, 1);
	p->lid_base = calloc(net->num_sw + 1, sizeof(size_t));
	if (!p->source || !p->busy || !p->lid_base)
		return -1;
	for (u = 0; u < net->num_sw; u++)
		p->lid_base[u + 1] = p->lid_base[u] + net->lft_len[u];
	p->through = calloc(p->lid_base[net->num_sw] / 8 + 1, 1);
	if (!p->through)
		return -1;
	for (h = 0; h < p->num_hosts; h++)
		p->source[net->host_sw[h]] = 1;
	for (u = 0; u < net->num_sw; u++)
		for (lid = 0; lid < net->lft_len[u]; lid++) {
			uint8_t port = net->lft[u][lid];
			uint32_t t;

			if (!port || port >= net->stride)
				continue;
			t = net->next[(size_t)u * net->stride + port];
			if (t != NONE)
				mark_through(p, t, lid);
		}
	return 0;
}

/*
 * Whether group g is below its floor (beyond rounding: moves that change
 * nothing may leave a group's sum of changes a hair below where it was).
 */
static int is_below(const struct polish *p, unsigned g)
{
	return p->group_eff[g] < p->floor[g] - OO_EVAL_EPSILON;
}

/* The cells shift_flows() moves the flows of: steering, the others, all. */
#define CELLS_STEER 1
#define CELLS_OTHER 2
#define CELLS_ALL (CELLS_STEER | CELLS_OTHER)

/*
 * Into a_only and b_only, paths a and b without the links they end on
 * together: two ways to one LID that meet at a switch go on over the same
 * links from there (one entry per switch and LID), and a flow moved from
 * one to the other leaves the load of those as it was.
 */
static void own_links(const struct path *a, const struct path *b,
		      struct path *a_only, struct path *b_only)
{
	unsigned shared = 0;

	while (shared < a->len && shared < b->len &&
	       a->link[a->len - 1 - shared] == b->link[b->len - 1 - shared])
		shared++;
	a_only->len = a->len - shared;
	b_only->len = b->len - shared;
	memcpy(a_only->link, a->link, sizeof(a->link[0]) * a_only->len);
	memcpy(b_only->link, b->link, sizeof(b->link[0]) * b_only->len);
}

/*
 * Round r's value and efficiency after w of the load of the links of
 * old moves to those of new: done (sign 1) or taken back (sign -1: from
 * new to old), or, sign 0, only looked at (round_after()).
 */
static void round_change(struct polish *p, size_t r, const struct path *old,
			 const struct path *new, unsigned w, int sign,
			 double *value, double *eff)
{
	unsigned max;
	uint32_t at_max;

	if (sign) {
		load_path(p, r, sign > 0 ? old : new, w, -1);
		load_path(p, r, sign > 0 ? new : old, w, 1);
		*value = round_value(p, r);
		*eff = round_eff(p, r);
		return;
	}
	round_after(p, r, old, new, w, &max, &at_max);
	*value = value_at(p, max, at_max);
	*eff = eff_at(p, max);
}

/*
 * What moving switch s's entry for host h's LID + offset from path old to
 * path new does to the rounds it touches in the cells that which selects:
 * applied (sign 1), taken back (sign -1) or tried (sign 0: the rounds
 * stay as they are); only the links of one path and not the other change
 * load (own_links()).  With gain, adds the change in value of the
 * steering cells (round_value(), each cell's rounds weighing 1 / rounds,
 * those of a group below its floor RESCUE_WEIGHT times more).  Each
 * group's change of efficiency (the mean of its cells') adds up in
 * group_delta until clear_groups() or apply_groups() takes it.
 */
static void shift_flows(struct polish *p, uint32_t s, uint32_t h,
			unsigned offset, const struct path *whole_old,
			const struct path *whole_new, int sign, double *gain,
			unsigned which)
{
	struct path own_old, own_new;
	const struct path *old = &own_old, *new = &own_new;
	unsigned c, j, count, whole, charge;

	own_links(whole_old, whole_new, &own_old, &own_new);
	/* the work of a round: as if both whole ways were loaded (and, in
	   a trial, taken back), so that the budget ends the polish where it
	   did when it loaded them; load_path() counts the links it loads */
	whole = whole_old->len + whole_new->len;
	charge = sign ? whole - own_old.len - own_new.len : 2 * whole;

	for (c = 0; c < p->num_cells; c++) {
		const struct oo_polish_cell *cl = &p->cell[c];
		uint32_t to = p->pos[(size_t)c * p->num_hosts + h];
		unsigned w = cell_weight(p, cl, offset);
		const uint32_t *src;

		if (!w || to == NONE ||
		    !(which & (cl->steer ? CELLS_STEER : CELLS_OTHER)))
			continue;
		src = cell_sources(p, c, s, &count);
		for (j = 0; j < count; j++) {
			unsigned k = (to + cl->n - src[j]) % cl->n;
			size_t r = p->first_round[c] + k - 1;
			double v = round_value(p, r), e = round_eff(p, r);
			double v2, e2;

			round_change(p, r, old, new, w, sign, &v2, &e2);
			p->work += charge;
			if (gain && cl->steer)
				*gain += (v2 - v) / (cl->n - 1) *
				    (p->relax && is_below(p, cl->group) ?
				     RESCUE_WEIGHT : 1.0);
			p->group_delta[cl->group] += (e2 - e) /
			    (cl->n - 1) / p->group_size[cl->group];
		}
	}
}

/*
 * Whether the changes since they were last cleared lower no group, or,
 * in the last stage while some group is below its floor, lower others no
 * further than down to theirs, and not one that is below.
 */
static int groups_ok(const struct polish *p)
{
	unsigned g;

	for (g = 0; g < p->num_groups; g++) {
		double d = p->group_delta[g];

		if (d > -OO_EVAL_EPSILON)
			continue;
		if (!p->relax || !p->rescue || is_below(p, g) ||
		    p->group_eff[g] + d < p->floor[g] - OO_EVAL_EPSILON)
			return 0;
	}
	return 1;
}

static void clear_groups(struct polish *p)
{
	memset(p->group_delta, 0, sizeof(double) * p->num_groups);
}

/*
 * A trial of moving switch s's entry for host h's LID + offset from path
 * cur to path alt, the rounds as they would be after it (only looked
 * at): the steering cells' change of value into *gain, and whether
 * have + *gain beats best and the move lowers no group (groups_ok()).
 * The other cells (the random orders' sample), which do not steer, are
 * only looked at where the gain beats best: a trial that gains too
 * little is refused without them.  The groups' changes are as before
 * the trial after it.
 */
static int try_move(struct polish *p, uint32_t s, uint32_t h,
		    unsigned offset, const struct path *cur,
		    const struct path *alt, double have, double best,
		    double *gain)
{
	int ok = 0;

	memcpy(p->group_kept, p->group_delta,
	       sizeof(double) * p->num_groups);
	*gain = 0.0;
	shift_flows(p, s, h, offset, cur, alt, 0, gain, CELLS_STEER);
	if (have + *gain > best) {
		shift_flows(p, s, h, offset, cur, alt, 0, NULL, CELLS_OTHER);
		ok = groups_ok(p);
	}
	memcpy(p->group_delta, p->group_kept,
	       sizeof(double) * p->num_groups);
	return ok;
}

/* The changes since the last call made: the groups' efficiencies. */
static void apply_groups(struct polish *p)
{
	unsigned g;

	p->rescue = 0;
	for (g = 0; g < p->num_groups; g++) {
		p->group_eff[g] += p->group_delta[g];
		p->group_delta[g] = 0.0;
		if (is_below(p, g))
			p->rescue = 1;
	}
}

/*
 * Whether the path some flow of a steering cell takes from s to host h's
 * LID + offset crosses a link at its round's highest load (above one
 * flow): moving any other can lower no round of those cells.
 */
static int is_hot(const struct polish *p, uint32_t s, uint32_t h,
		  unsigned offset, const struct path *cur)
{
	unsigned lids = p->net->lids_per_port, c, j, i, count;

	for (c = 0; c < p->num_cells; c++) {
		const struct oo_polish_cell *cl = &p->cell[c];
		uint32_t to = p->pos[(size_t)c * p->num_hosts + h];
		const uint32_t *src;

		if (!cl->steer || !cell_weight(p, cl, offset) || to == NONE)
			continue;
		src = cell_sources(p, c, s, &count);
		for (j = 0; j < count; j++) {
			size_t r = p->first_round[c] +
			    (to + cl->n - src[j]) % cl->n - 1;
			const uint8_t *load = round_load(p, r);

			if (p->max[r] <= lids)
				continue;
			for (i = 0; i < cur->len; i++)
				if (bin(load[cur->link[i]]) == p->max[r])
					return 1;
		}
	}
	return 0;
}

/*
 * Memory for the route counts, and each switch's ranks (the most any
 * cell has there: the whole order's) and the hosts that are ranks.
 */
static int alloc_counts(struct polish *p)
{
	const struct oo_eval_net *net = p->net;
	unsigned c, i;
	uint32_t s;

	p->count = calloc((size_t)net->lids_per_port * p->num_links + 1,
			  sizeof(uint32_t));
	p->weight = calloc(net->num_sw + 1, sizeof(uint32_t));
	p->is_rank = calloc(p->num_hosts + 1, 1);
	if (!p->count || !p->weight || !p->is_rank)
		return -1;
	for (c = 0; c < p->num_cells; c++) {
		const struct oo_polish_cell *cl = &p->cell[c];

		for (s = 0; s < net->num_sw; s++) {
			cell_sources(p, c, s, &i);
			if (i > p->weight[s])
				p->weight[s] = i;
		}
		for (i = 0; i < cl->n; i++)
			p->is_rank[cl->order[i]] = 1;
	}
	return 0;
}

/* Add w (sign > 0) to row's entries of the links of path, or take w. */
static void add_path(uint32_t *row, const struct path *path, uint32_t w,
		     int sign)
{
	unsigned i;

	for (i = 0; i < path->len; i++)
		row[path->link[i]] = sign > 0 ? row[path->link[i]] + w :
		    row[path->link[i]] - w;
}

/* Add w to row's entries of the links of path (fill), or clear them. */
static void mark_path(uint32_t *row, const struct path *path, uint32_t w,
		      int fill)
{
	unsigned i;

	if (fill) {
		add_path(row, path, w, 1);
		return;
	}
	for (i = 0; i < path->len; i++)
		row[path->link[i]] = 0;
}

/* Add (sign > 0) or take w routes of LID offset o on the links of path. */
static void count_path(struct polish *p, unsigned o, const struct path *path,
		       uint32_t w, int sign)
{
	add_path(p->count + (size_t)o * p->num_links, path, w, sign);
	p->work += path->len;
}

typedef void (*route_fn)(struct polish *p, uint32_t s, unsigned offset,
			 const struct path *path);

/*
 * Call fn with the path of every route from a switch with ranks to
 * another switch's rank's LID + offset, switch by switch.
 */
static void each_rank_route(struct polish *p, route_fn fn)
{
	const struct oo_eval_net *net = p->net;
	unsigned lids = net->lids_per_port, h, o;
	struct path path;
	uint32_t s;

	for (s = 0; s < net->num_sw; s++) {
		if (!p->weight[s])
			continue;
		for (h = 0; h < p->num_hosts; h++) {
			if (!p->is_rank[h] || net->host_sw[h] == s)
				continue;
			for (o = 0; o < lids; o++)
				if (!follow(p, s, 0, net->host_lid[h] + o, h,
					    &path))
					fn(p, s, o, &path);
		}
	}
}

/* A route of switch s's ranks into the counts (each_rank_route()). */
static void count_route(struct polish *p, uint32_t s, unsigned offset,
			const struct path *path)
{
	count_path(p, offset, path, p->weight[s], 1);
}

/*
 * The route counts: per LID offset and link, how many flows of every rank
 * to every other rank's LID + offset cross it (a switch's flows weigh its
 * ranks).  A random rank order loads links in proportion to these, so the
 * more even they are, the lower its rounds' busiest links.  From here on
 * every move keeps them current.
 */
static void count_routes(struct polish *p)
{
	p->counting = 1;
	each_rank_route(p, count_route);
}

/*
 * What w more routes of LID offset o on the links of path would add to
 * the squares of the base LIDs' counts and of all offsets' counts.
 */
static double count_cost(const struct polish *p, unsigned o,
			 const struct path *path, uint32_t w)
{
	unsigned lids = p->net->lids_per_port, i, k;
	double cost = 0.0;

	for (i = 0; i < path->len; i++) {
		uint32_t l = path->link[i];
		double all = 0.0;

		for (k = 0; k < lids; k++)
			all += p->count[(size_t)k * p->num_links + l];
		cost += w * (2.0 * all + w);
		if (!o)
			cost += w * (2.0 * p->count[l] + w);
	}
	return cost;
}

/* Switch s's row of from: base LIDs (all 0) or LIDs of every offset. */
static uint32_t *from_row(const struct polish *p, uint32_t s, int all)
{
	return p->from + ((size_t)p->from_idx[s] * 2 + (all ? 1 : 0)) *
	    p->num_links;
}

/*
 * Add (sign > 0) or take one LID + offset of switch s on the links of
 * path.
 */
static void from_path(struct polish *p, uint32_t s, unsigned offset,
		      const struct path *path, int sign)
{
	add_path(from_row(p, s, 1), path, 1, sign);
	if (!offset)
		add_path(from_row(p, s, 0), path, 1, sign);
	p->work += path->len;
}

/* A route of switch s's ranks into from (each_rank_route()). */
static void from_route(struct polish *p, uint32_t s, unsigned offset,
		       const struct path *path)
{
	from_path(p, s, offset, path, 1);
}

/*
 * Whether port of s is another way to host h's LID: not s's entry, no
 * traffic from another switch leaves through it, and its path there
 * (into alt) arrives as short as cur.
 */
static int other_path(const struct polish *p, uint32_t s, unsigned port,
		      unsigned lid, uint32_t h, const struct path *cur,
		      struct path *alt)
{
	const struct oo_eval_net *net = p->net;
	size_t at = (size_t)s * net->stride + port;

	return port != net->lft[s][lid] && net->next[at] != NONE &&
	    !p->busy[at] && !follow(p, s, (uint8_t)port, lid, h, alt) &&
	    alt->len == cur->len;
}

/*
 * Outside the last stage 1; in it, whether the undo list has room for
 * two more moves (it grows; 0 where no memory is left: no move then).
 */
static int room_to_undo(struct polish *p)
{
	struct undo *u;
	size_t max;

	if (!p->relax || p->num_undo + 2 <= p->max_undo)
		return 1;
	max = p->max_undo ? 2 * p->max_undo : 1024;
	u = realloc(p->undo, sizeof(*u) * max);
	if (!u)
		return 0;
	p->undo = u;
	p->max_undo = max;
	return 1;
}

/*
 * Move switch s's entry for host h's LID + offset from path cur to port,
 * whose path is new: the rounds and the route counts follow, and the
 * switch the move leads to is marked as forwarding that LID from s.  In
 * the last stage the entry as it was goes on the undo list (room for it
 * reserved by room_to_undo()).
 */
static void move_entry(struct polish *p, uint32_t s, uint32_t h,
		       unsigned offset, const struct path *cur,
		       const struct path *new, uint8_t port)
{
	const struct oo_eval_net *net = p->net;
	unsigned lid = net->host_lid[h] + offset;

	shift_flows(p, s, h, offset, cur, new, 1, NULL, CELLS_ALL);
	apply_groups(p);
	if (p->counting && p->is_rank[h]) {
		count_path(p, offset, cur, p->weight[s], -1);
		count_path(p, offset, new, p->weight[s], 1);
	}
	if (p->from && p->is_rank[h] && p->weight[s]) {
		from_path(p, s, offset, cur, -1);
		from_path(p, s, offset, new, 1);
	}
	if (p->relax) {
		struct undo *u = &p->undo[p->num_undo++];

		u->s = s;
		u->h = h;
		u->lid = lid;
		u->port = p->lft[s][lid];
	}
	p->lft[s][lid] = port;
	mark_through(p, net->next[(size_t)s * net->stride + port], lid);
}

/*
 * Whether switch s's entry for host h's LID + offset may move (no other
 * switch leads that LID into s) and leads somewhere (its path into cur)
 * over a link at its round's busiest load (is_hot()).
 */
static int hot_entry(const struct polish *p, uint32_t s, uint32_t h,
		     unsigned offset, struct path *cur)
{
	unsigned lid = p->net->host_lid[h] + offset;

	return !is_through(p, s, lid) && !follow(p, s, 0, lid, h, cur) &&
	    cur->len && is_hot(p, s, h, offset, cur);
}

/*
 * Try each other port of s (other_path()); move the entry for host h's
 * LID + offset to the one that gains most and lowers no group of cells.
 * Not where that LID comes into s from another switch.  Returns 1 if it
 * moved.
 */
static int polish_entry(struct polish *p, uint32_t s, uint32_t h,
			unsigned offset)
{
	const struct oo_eval_net *net = p->net;
	unsigned lid = net->host_lid[h] + offset, port;
	struct path cur, alt, best;
	uint8_t best_port = 0;
	double best_gain = OO_EVAL_EPSILON;

	if (!hot_entry(p, s, h, offset, &cur))
		return 0;
	for (port = 1; port < net->stride; port++) {
		double gain = 0.0;
		int ok;

		if (!other_path(p, s, port, lid, h, &cur, &alt))
			continue;
		ok = try_move(p, s, h, offset, &cur, &alt, 0.0, best_gain,
			      &gain);
		if (ok) {
			best_gain = gain;
			best_port = (uint8_t)port;
			best = alt;
		}
	}
	if (!best_port || !room_to_undo(p))
		return 0;
	move_entry(p, s, h, offset, &cur, &best, best_port);
	return 1;
}

/*
 * Whether switch s's entry for host h2's LID + offset could take port,
 * with h2's entry now on the port (to) that a trial move of another
 * entry of s takes: not through s, its path there as short (into cur,
 * and the other way into alt).
 */
static int swap_partner(const struct polish *p, uint32_t s, uint32_t h2,
			unsigned offset, uint8_t to, unsigned port,
			struct path *cur, struct path *alt)
{
	const struct oo_eval_net *net = p->net;
	unsigned lid = net->host_lid[h2] + offset;

	return net->host_sw[h2] != s && lid < net->lft_len[s] &&
	    net->lft[s][lid] == to && !is_through(p, s, lid) &&
	    !follow(p, s, 0, lid, h2, cur) && cur->len &&
	    other_path(p, s, port, lid, h2, cur, alt);
}

/*
 * Where no single move gains, two may: s's entry for host h's LID +
 * offset takes another port (other_path()), and the entry of s for
 * another host's LID + the same offset that is on that port takes h's.
 * The route counts out of s stay as they were.  The pair that gains most
 * and lowers no group moves; as polish_entry(), only where h's flows
 * cross a link at its round's busiest load.  Returns the entries moved
 * (2 or 0).
 */
static int swap_entry(struct polish *p, uint32_t s, uint32_t h,
		      unsigned offset)
{
	const struct oo_eval_net *net = p->net;
	unsigned lid = net->host_lid[h] + offset, port, h2;
	struct path cur, alt, cur2, alt2, best, best_cur2, best2;
	uint8_t mine, best_port = 0;
	uint32_t best_h2 = 0;
	double best_gain = OO_EVAL_EPSILON;

	if (!hot_entry(p, s, h, offset, &cur))
		return 0;
	mine = net->lft[s][lid];
	for (port = 1; port < net->stride; port++) {
		double g1 = 0.0;

		if (!other_path(p, s, port, lid, h, &cur, &alt))
			continue;
		shift_flows(p, s, h, offset, &cur, &alt, 1, &g1, CELLS_ALL);
		for (h2 = 0; h2 < p->num_hosts && p->work < p->budget; h2++) {
			double g2 = 0.0;
			int ok;

			if (h2 == h || !swap_partner(p, s, h2, offset,
						     (uint8_t)port, mine,
						     &cur2, &alt2))
				continue;
			ok = try_move(p, s, h2, offset, &cur2, &alt2, g1,
				      best_gain, &g2);
			if (ok) {
				best_gain = g1 + g2;
				best_port = (uint8_t)port;
				best_h2 = h2;
				best = alt;
				best_cur2 = cur2;
				best2 = alt2;
			}
		}
		shift_flows(p, s, h, offset, &cur, &alt, -1, NULL, CELLS_ALL);
		clear_groups(p);
	}
	if (!best_port || !room_to_undo(p))
		return 0;
	move_entry(p, s, h, offset, &cur, &best, best_port);
	move_entry(p, s, best_h2, offset, &best_cur2, &best2, mine);
	return 2;
}

typedef int (*try_entry_fn)(struct polish *p, uint32_t s, uint32_t h,
			    unsigned offset);

/*
 * One pass of try_entry over the entries of every switch with hosts for
 * every other host's LIDs; how many moved.
 */
static unsigned sweep(struct polish *p, try_entry_fn try_entry)
{
	const struct oo_eval_net *net = p->net;
	unsigned lids = net->lids_per_port, moved = 0, h, o;
	uint32_t s;

	for (s = 0; s < net->num_sw; s++) {
		if (!p->source[s])
			continue;
		for (h = 0; h < p->num_hosts; h++) {
			if (net->host_sw[h] == s)
				continue;
			for (o = p->first_offset; o < lids; o++) {
				if (p->work >= p->budget)
					return moved;
				moved += (unsigned)try_entry(p, s, h, o);
			}
		}
	}
	return moved;
}

/*
 * Insert port, whose move costs c, into the n candidates sorted by cost
 * (cheapest first).  Returns how many there are now.
 */
static unsigned add_candidate(double *cost, uint8_t *cand, unsigned n,
			      double c, unsigned port)
{
	unsigned i;

	for (i = n; i > 0 && cost[i - 1] > c; i--) {
		cost[i] = cost[i - 1];
		cand[i] = cand[i - 1];
	}
	cost[i] = c;
	cand[i] = (uint8_t)port;
	return n + 1;
}

/*
 * Move switch s's entry for host h's LID + offset (its path cur) to the
 * first of the n candidate ports whose move slows no round of the
 * steering cells and lowers no group (try_move()).  Returns 1 if it
 * moved.
 */
static int take_candidate(struct polish *p, uint32_t s, uint32_t h,
			  unsigned offset, const struct path *cur,
			  const uint8_t *cand, unsigned n)
{
	unsigned lid = p->net->host_lid[h] + offset, i;
	struct path alt;

	for (i = 0; i < n; i++) {
		double gain = 0.0;
		int ok;

		follow(p, s, cand[i], lid, h, &alt);
		ok = try_move(p, s, h, offset, cur, &alt, 0.0, -1e-12,
			      &gain);
		if (ok) {
			move_entry(p, s, h, offset, cur, &alt, cand[i]);
			return 1;
		}
	}
	return 0;
}

/*
 * Move switch s's entry for host h's LID + offset to the port of an
 * equally short path (other_path()) that evens the route counts most,
 * where that lowers no round of the steering cells (nor their ties, but
 * in even_counts()) and no group.  Only the entries of switches with
 * ranks for ranks' LIDs, which the counts hold.  Returns 1 if it moved.
 */
static int balance_entry(struct polish *p, uint32_t s, uint32_t h,
			 unsigned offset)
{
	const struct oo_eval_net *net = p->net;
	unsigned lid = net->host_lid[h] + offset, port, n = 0;
	uint32_t w = p->weight[s];
	struct path cur, alt;
	double here, cost[256];
	uint8_t cand[256];

	if (!w || !p->is_rank[h] || is_through(p, s, lid) ||
	    follow(p, s, 0, lid, h, &cur) || !cur.len)
		return 0;
	count_path(p, offset, &cur, w, -1);
	here = count_cost(p, offset, &cur, w);
	for (port = 1; port < net->stride && port < 256; port++) {
		double c;

		if (!other_path(p, s, port, lid, h, &cur, &alt))
			continue;
		c = count_cost(p, offset, &alt, w) - here;
		if (c > -0.5)
			continue;
		n = add_candidate(cost, cand, n, c, port);
	}
	count_path(p, offset, &cur, w, 1);
	return take_candidate(p, s, h, offset, &cur, cand, n);
}

/*
 * Per switch with ranks and link, the ranks' LIDs it routes over that
 * link (from), and the scratch of routes_to_host() and part_entry().
 * Returns -1 where there is no memory for them.
 */
static int count_from(struct polish *p)
{
	const struct oo_eval_net *net = p->net;
	unsigned n = 0, h;
	uint32_t s;

	p->from_idx = malloc(sizeof(uint32_t) * (net->num_sw + 1));
	p->to_host = calloc(2 * (size_t)p->num_links + 1, sizeof(uint32_t));
	p->sibling = calloc(p->num_links + 1, sizeof(uint32_t));
	p->touched = malloc(sizeof(uint32_t) * (p->num_links + 1));
	if (!p->from_idx || !p->to_host || !p->sibling || !p->touched)
		return -1;
	for (s = 0; s < net->num_sw; s++)
		p->from_idx[s] = p->weight[s] ? n++ : NONE;
	p->from = calloc(2 * (size_t)n * p->num_links + 1, sizeof(uint32_t));
	if (!p->from)
		return -1;
	for (h = 0; h < p->num_hosts; h++)
		p->num_ranks += p->is_rank[h];
	each_rank_route(p, from_route);
	return 0;
}

/*
 * Into to_host, per link, the routes from every rank to host h's base LID
 * that cross it (a switch's weigh its ranks), and to its LIDs of every
 * offset; the links it puts routes on into touched.  The work: the links
 * of those routes twice, once for clear_routes_to_host() (as when it
 * followed them again), so that the budget ends the phase where it did.
 */
static void routes_to_host(struct polish *p, uint32_t h)
{
	const struct oo_eval_net *net = p->net;
	uint32_t *all = p->to_host + p->num_links;
	struct path path;
	unsigned o, i;
	uint32_t s;

	p->num_touched = 0;
	for (s = 0; s < net->num_sw; s++)
		for (o = 0; p->weight[s] && net->host_sw[h] != s &&
		     o < net->lids_per_port; o++) {
			uint32_t w = p->weight[s];

			if (follow(p, s, 0, net->host_lid[h] + o, h, &path))
				continue;
			for (i = 0; i < path.len; i++)
				if (!all[path.link[i]])
					p->touched[p->num_touched++] =
					    path.link[i];
			add_path(all, &path, w, 1);
			if (!o)
				add_path(p->to_host, &path, w, 1);
			p->work += 2 * path.len;
		}
}

/* to_host back to 0 on the links routes_to_host() put routes on. */
static void clear_routes_to_host(struct polish *p)
{
	unsigned i;

	for (i = 0; i < p->num_touched; i++) {
		p->to_host[p->touched[i]] = 0;
		p->to_host[p->num_links + p->touched[i]] = 0;
	}
}

/*
 * Into sibling (fill), per link, host h's LIDs of other offsets than
 * offset that switch s routes over it; without fill, back to 0.
 */
static void mark_siblings(struct polish *p, uint32_t s, uint32_t h,
			  unsigned offset, int fill)
{
	const struct oo_eval_net *net = p->net;
	struct path path;
	unsigned o;

	for (o = 0; o < net->lids_per_port; o++) {
		if (o == offset ||
		    follow(p, s, 0, net->host_lid[h] + o, h, &path))
			continue;
		mark_path(p->sibling, &path, 1, fill);
	}
}

/*
 * Half of what the routes from each rank of switch s to host h's LID +
 * offset, on the links of path, add to the pairs of flows that one round
 * of a random order may run over a link at once, per rank of s: two
 * flows of a round come from two ranks and go to two ranks, so per link
 * the routes there from other ranks to other hosts count.  Summed over
 * the base LIDs (offset 0 only) and over the LIDs of every offset, as the
 * spread traffic runs them; there a flow's other LIDs over the same
 * link (sibling) weigh as much as the rounds' other flows (a flow runs in
 * one round of every ranks - 1 where two others meet in one of about
 * (ranks - 1) * (ranks - 2)).  The counts hold none of the routes of s
 * to that LID (to_host those of the others).
 */
static double pair_cost(const struct polish *p, uint32_t s, unsigned offset,
			const struct path *path)
{
	const uint32_t *from = from_row(p, s, 0), *from_all = from_row(p, s, 1);
	const uint32_t *to_all = p->to_host + p->num_links;
	unsigned lids = p->net->lids_per_port, i, k;
	double cost = 0.0, weigh = p->num_ranks > 2 ? p->num_ranks - 2.0 : 1.0;

	for (i = 0; i < path->len; i++) {
		uint32_t l = path->link[i];
		double all = 0.0;

		for (k = 0; k < lids; k++)
			all += p->count[(size_t)k * p->num_links + l];
		cost += all - from_all[l] - to_all[l] +
		    weigh * p->sibling[l];
		if (!offset)
			cost += (double)p->count[l] - from[l] - p->to_host[l];
	}
	return cost;
}

/*
 * Take (sign < 0) the routes from switch s's ranks to a LID + offset over
 * the links of path out of the counts, or put them back.
 */
static void count_bundle(struct polish *p, uint32_t s, unsigned offset,
			 const struct path *path, int sign)
{
	uint32_t w = p->weight[s];

	count_path(p, offset, path, w, sign);
	from_path(p, s, offset, path, sign);
	add_path(p->to_host + p->num_links, path, w, sign);
	if (!offset)
		add_path(p->to_host, path, w, sign);
}

/*
 * Move switch s's entry for host h's LID + offset to the port of an
 * equally short path (other_path()) with the fewest pairs of flows that
 * one round of a random order may run over a link at once (pair_cost()),
 * where that slows no round of the steering cells (more links at a
 * round's busiest load are no loss here) and lowers no group.  Returns 1
 * if it moved.
 */
static int part_entry(struct polish *p, uint32_t s, uint32_t h,
		      unsigned offset)
{
	const struct oo_eval_net *net = p->net;
	unsigned lid = net->host_lid[h] + offset, port, n = 0;
	struct path cur, alt;
	double here, cost[256];
	uint8_t cand[256];

	if (!p->weight[s] || !p->is_rank[h] || is_through(p, s, lid) ||
	    follow(p, s, 0, lid, h, &cur) || !cur.len)
		return 0;
	routes_to_host(p, h);
	mark_siblings(p, s, h, offset, 1);
	count_bundle(p, s, offset, &cur, -1);
	here = pair_cost(p, s, offset, &cur);
	for (port = 1; port < net->stride && port < 256; port++) {
		double c;

		if (!other_path(p, s, port, lid, h, &cur, &alt))
			continue;
		c = pair_cost(p, s, offset, &alt) - here;
		if (c > -0.5)
			continue;
		n = add_candidate(cost, cand, n, c, port);
	}
	count_bundle(p, s, offset, &cur, 1);
	mark_siblings(p, s, h, offset, 0);
	clear_routes_to_host(p);
	return take_candidate(p, s, h, offset, &cur, cand, n);
}

/*
 * The other cable of switch s to the switch its port a leads to: the
 * first port after port (0: from the first) that leads there too, or 0.
 */
static unsigned next_cable(const struct oo_eval_net *net, uint32_t s,
			   unsigned a, unsigned port)
{
	const uint32_t *next = net->next + (size_t)s * net->stride;

	for (port++; port < net->stride && port < 256; port++)
		if (port != a && next[port] != NONE && next[port] == next[a])
			return port;
	return 0;
}

int oo_polish_has_cables(const struct oo_eval_net *net)
{
	unsigned port;
	uint32_t s;

	for (s = 0; s < net->num_sw; s++)
		for (port = 1; port < net->stride && port < 256; port++)
			if (net->next[(size_t)s * net->stride + port] !=
			    NONE && next_cable(net, s, port, port))
				return 1;
	return 0;
}

/* The lists of cable_routes() emptied. */
static void clear_cable_routes(struct polish *p)
{
	unsigned i;

	for (i = 0; i < p->num_cable_links; i++) {
		p->cable_head[p->cable_links[i]] = NONE;
		p->cable_w[p->cable_links[i]] = 0;
	}
	p->num_cable_links = 0;
}

/*
 * Per link, the switches with ranks (other than host h's) whose route
 * to h's LID crosses it: lists from cable_head through cable_next of
 * cable_sw, cable_w their ranks summed.  Empty where some route leads
 * nowhere (its flows are lost; nothing moves for them).
 */
static void cable_routes(struct polish *p, unsigned lid, uint32_t h)
{
	const struct oo_eval_net *net = p->net;
	uint32_t u, k = 0;
	struct path path;
	unsigned i;

	clear_cable_routes(p);
	for (u = 0; u < net->num_sw; u++) {
		if (!p->weight[u] || u == net->host_sw[h])
			continue;
		if (follow(p, u, 0, lid, h, &path)) {
			clear_cable_routes(p);
			return;
		}
		p->work += path.len;
		for (i = 0; i < path.len; i++, k++) {
			uint32_t l = path.link[i];

			if (p->cable_head[l] == NONE)
				p->cable_links[p->num_cable_links++] = l;
			p->cable_sw[k] = u;
			p->cable_next[k] = p->cable_head[l];
			p->cable_head[l] = k;
			p->cable_w[l] += p->weight[u];
		}
	}
}

/*
 * Whether the flows cable_routes() holds over link a of host h's LID +
 * offset may move to link b: that slows no round of the steering cells
 * and lowers no group (as try_move(), the rounds only looked at: each
 * round of a cell sends one flow to h, so no two of these share one).
 */
static int try_cable(struct polish *p, uint32_t h, unsigned offset,
		     const struct path *a, const struct path *b)
{
	double gain = 0.0;
	uint32_t k;
	int ok = 0;

	memcpy(p->group_kept, p->group_delta,
	       sizeof(double) * p->num_groups);
	for (k = p->cable_head[a->link[0]]; k != NONE; k = p->cable_next[k])
		shift_flows(p, p->cable_sw[k], h, offset, a, b, 0, &gain,
			    CELLS_STEER);
	if (gain > -1e-12) {
		for (k = p->cable_head[a->link[0]]; k != NONE;
		     k = p->cable_next[k])
			shift_flows(p, p->cable_sw[k], h, offset, a, b, 0,
				    NULL, CELLS_OTHER);
		ok = groups_ok(p);
	}
	memcpy(p->group_delta, p->group_kept,
	       sizeof(double) * p->num_groups);
	return ok;
}

/*
 * Move switch s's entry for host h's LID + offset from its way a (from s
 * on) to the way b that port leads, with the flows of cable_routes()'
 * lists on a's first link: the rounds and the route counts follow (the
 * lists are the caller's).  Returns the ranks of those flows' switches.
 */
static uint32_t shift_entry(struct polish *p, uint32_t s, uint32_t h,
			    unsigned offset, const struct path *a,
			    const struct path *b, uint8_t port)
{
	uint32_t w = p->cable_w[a->link[0]], k;
	unsigned lid = p->net->host_lid[h] + offset;

	for (k = p->cable_head[a->link[0]]; k != NONE; k = p->cable_next[k])
		shift_flows(p, p->cable_sw[k], h, offset, a, b, 1, NULL,
			    CELLS_ALL);
	apply_groups(p);
	count_path(p, offset, a, w, -1);
	count_path(p, offset, b, w, 1);
	if (is_through(p, s, lid))
		p->busy[(size_t)s * p->net->stride + port] = 1;
	p->lft[s][lid] = port;
	return w;
}

/*
 * Move switch s's entry for host h's LID + offset from link a to link b
 * of port, a cable to the same switch, with the flows that cross a: the
 * rounds, the route counts and the lists of cable_routes() follow.
 */
static void move_cable(struct polish *p, uint32_t s, uint32_t h,
		       unsigned offset, const struct path *a,
		       const struct path *b, uint8_t port)
{
	uint32_t w = shift_entry(p, s, h, offset, a, b, port);

	if (p->cable_head[b->link[0]] == NONE)
		p->cable_links[p->num_cable_links++] = b->link[0];
	p->cable_head[b->link[0]] = p->cable_head[a->link[0]];
	p->cable_w[b->link[0]] = w;
	p->cable_head[a->link[0]] = NONE;
	p->cable_w[a->link[0]] = 0;
}

/*
 * Move switch s's entry for host h's LID + offset to another cable to
 * the same switch (next_cable()) where that evens the route counts most
 * and slows no round of the steering cells and lowers no group
 * (try_cable()), the routes to that LID in cable_routes()' lists.  Any
 * switch's entry may move so, spines' too: the route goes on over the
 * same switches, so it turns where it did.  Returns 1 if it moved.
 */
static int cable_entry(struct polish *p, uint32_t s, uint32_t h,
		       unsigned offset)
{
	const struct oo_eval_net *net = p->net;
	unsigned lid = net->host_lid[h] + offset, port, i, n = 0;
	struct path a = { .len = 1 }, b = { .len = 1 };
	double here, cost[256];
	uint8_t cand[256], cur;
	uint32_t w;

	if (net->host_sw[h] == s || lid >= net->lft_len[s])
		return 0;
	cur = net->lft[s][lid];
	if (!cur || cur >= net->stride ||
	    net->next[(size_t)s * net->stride + cur] == NONE ||
	    !next_cable(net, s, cur, 0))
		return 0;
	a.link[0] = p->link[(size_t)s * net->stride + cur];
	w = p->cable_w[a.link[0]];
	if (!w)
		return 0;
	count_path(p, offset, &a, w, -1);
	here = count_cost(p, offset, &a, w);
	for (port = next_cable(net, s, cur, 0); port;
	     port = next_cable(net, s, cur, port)) {
		double c;

		b.link[0] = p->link[(size_t)s * net->stride + port];
		c = count_cost(p, offset, &b, w) - here;
		if (c < -0.5)
			n = add_candidate(cost, cand, n, c, port);
	}
	count_path(p, offset, &a, w, 1);
	for (i = 0; i < n; i++) {
		b.link[0] = p->link[(size_t)s * net->stride + cand[i]];
		if (try_cable(p, h, offset, &a, &b)) {
			move_cable(p, s, h, offset, &a, &b, cand[i]);
			return 1;
		}
	}
	return 0;
}

/*
 * Move switch s's entry for host h's LID + offset from its way a to the
 * way b that port leads (the flows of cable_routes()' lists on a's first
 * link with it): the rounds and the route counts follow, and the lists
 * are made again for the LID.
 */
static void move_way(struct polish *p, uint32_t s, uint32_t h,
		     unsigned offset, const struct path *a,
		     const struct path *b, uint8_t port)
{
	unsigned lid = p->net->host_lid[h] + offset;

	shift_entry(p, s, h, offset, a, b, port);
	mark_through(p, p->net->next[(size_t)s * p->net->stride + port], lid);
	cable_routes(p, lid, h);
}

/*
 * Whether switch s's entry for lid may lead out of port (its entry
 * before: cur) as the channel dependencies go: the LID's routes, as the
 * tables have them with the entry moved, close no cycle with the
 * dependencies in p->cdg (oo_cdg_add_lid(), which then holds them too).
 * Those of the entry before stay in p->cdg, so the check errs toward
 * refusing.  With no memory for it, no more such moves (p->cdg NULL).
 * The entry is as it was where it may not.
 */
static int way_free_of_loops(struct polish *p, uint32_t s, unsigned lid,
			     uint8_t cur, uint8_t port)
{
	int ok;

	p->lft[s][lid] = port;
	ok = oo_cdg_add_lid(p->cdg, lid);
	if (ok > 0)
		return 1;
	p->lft[s][lid] = cur;
	if (ok < 0)
		p->cdg = NULL;
	return 0;
}

/*
 * Move switch s's entry for host h's LID + offset to a port toward
 * another neighbour (not another cable to the same one: cable_entry())
 * whose way to the LID is as short, where that evens the route counts
 * most, slows no round of the steering cells and lowers no group
 * (try_cable() over the whole ways, with the flows that cross the
 * entry's link), and closes no credit loop (way_free_of_loops()): a
 * spine's choice of core, a line ASIC's choice of fabric ASIC, which the
 * polish of the switches with hosts does not make.  Returns 1 if it
 * moved.
 */
static int way_entry(struct polish *p, uint32_t s, uint32_t h,
		     unsigned offset)
{
	const struct oo_eval_net *net = p->net;
	unsigned lid = net->host_lid[h] + offset, port, i, n = 0;
	const uint32_t *next = net->next + (size_t)s * net->stride;
	struct path a, b;
	double here, cost[256];
	uint8_t cand[256], cur;
	uint32_t w;

	if (!p->cdg || net->host_sw[h] == s || lid >= net->lft_len[s])
		return 0;
	cur = net->lft[s][lid];
	if (!cur || cur >= net->stride || next[cur] == NONE)
		return 0;
	w = p->cable_w[p->link[(size_t)s * net->stride + cur]];
	if (!w || follow(p, s, 0, lid, h, &a))
		return 0;
	count_path(p, offset, &a, w, -1);
	here = count_cost(p, offset, &a, w);
	for (port = 1; port < net->stride && port < 256; port++) {
		double c;

		if (next[port] == NONE || next[port] == next[cur] ||
		    follow(p, s, (uint8_t)port, lid, h, &b) || b.len != a.len)
			continue;
		c = count_cost(p, offset, &b, w) - here;
		if (c < -0.5)
			n = add_candidate(cost, cand, n, c, port);
	}
	count_path(p, offset, &a, w, 1);
	for (i = 0; i < n && p->cdg; i++) {
		if (follow(p, s, cand[i], lid, h, &b) ||
		    !try_cable(p, h, offset, &a, &b) ||
		    !way_free_of_loops(p, s, lid, cur, cand[i]))
			continue;
		move_way(p, s, h, offset, &a, &b, cand[i]);
		return 1;
	}
	return 0;
}

/* Room for cable_routes()' lists: 0, or -1 (no memory). */
static int alloc_cables(struct polish *p)
{
	size_t nodes = (size_t)p->net->num_sw * OO_POLISH_MAX_HOPS;
	unsigned l;

	p->cable_head = malloc(sizeof(uint32_t) * (p->num_links + 1));
	p->cable_w = calloc(p->num_links + 1, sizeof(uint32_t));
	p->cable_links = malloc(sizeof(uint32_t) * (p->num_links + 1));
	p->cable_sw = malloc(sizeof(uint32_t) * (nodes + 1));
	p->cable_next = malloc(sizeof(uint32_t) * (nodes + 1));
	if (!p->cable_head || !p->cable_w || !p->cable_links ||
	    !p->cable_sw || !p->cable_next)
		return -1;
	for (l = 0; l < p->num_links; l++)
		p->cable_head[l] = NONE;
	return 0;
}

typedef int (*entry_fn)(struct polish *p, uint32_t s, uint32_t h,
			unsigned offset);

/*
 * Passes over the ranks' LIDs, each LID's entries of every switch
 * (cable_entry() or way_entry(): move), ties loose, on a budget, until
 * one moves nothing.  Returns 0, or -1 where there is no memory for the
 * lists (nothing moved).
 */
static int even_over(struct polish *p, uint64_t budget, entry_fn move,
		     struct oo_polish_result *res)
{
	const struct oo_eval_net *net = p->net;
	unsigned lids = net->lids_per_port, moved, h, o;
	uint32_t s;

	if (alloc_cables(p))
		return -1;
	p->loose_ties = 1;
	p->budget = p->work + budget;
	do {
		moved = 0;
		for (h = 0; h < p->num_hosts && p->work < p->budget; h++)
			for (o = 0; p->is_rank[h] && o < lids; o++) {
				cable_routes(p, net->host_lid[h] + o, h);
				for (s = 0; s < net->num_sw; s++)
					moved += (unsigned)move(p, s, h, o);
			}
		res->balanced += moved;
		res->moved += moved;
		res->sweeps++;
	} while (moved && p->work < p->budget);
	p->loose_ties = 0;
	if (p->work >= p->budget)
		res->status = OO_POLISH_BUDGET;
	return 0;
}

static int even_cables(struct polish *p, uint64_t budget,
		       struct oo_polish_result *res)
{
	return even_over(p, budget, cable_entry, res);
}

static int even_ways(struct polish *p, uint64_t budget,
		     struct oo_polish_result *res)
{
	return even_over(p, budget, way_entry, res);
}

static void free_polish(struct polish *p)
{
	free(p->link);
	free(p->first_round);
	free(p->load);
	free(p->max);
	free(p->hist);
	free(p->pos);
	free(p->src);
	free(p->src_first);
	free(p->source);
	free(p->busy);
	free(p->through);
	free(p->lid_base);
	free(p->group_size);
	free(p->group_delta);
	free(p->group_kept);
	free(p->group_eff);
	free(p->floor);
	free(p->undo);
	free(p->count);
	free(p->weight);
	free(p->is_rank);
	free(p->from_idx);
	free(p->from);
	free(p->to_host);
	free(p->sibling);
	free(p->touched);
	free(p->cable_head);
	free(p->cable_w);
	free(p->cable_links);
	free(p->cable_sw);
	free(p->cable_next);
	free((void *)p->cell);
}

/* The rounds of the cells in memory, up to the first n. */
static size_t count_rounds(const struct oo_polish_cell *cells, unsigned n)
{
	size_t rounds = 0;
	unsigned c;

	for (c = 0; c < n; c++)
		rounds += cell_rounds(&cells[c]);
	return rounds;
}

/*
 * The cells to hold: the steering ones, then the others where all of
 * them fit too (res->left_out counts those that did not).  Returns 0,
 * OO_POLISH_TOO_BIG where the steering ones do not fit, or -1.
 */
static int pick_cells(struct polish *p, const struct oo_polish_cell *cells,
		      unsigned num_cells, uint64_t max_entries,
		      struct oo_polish_result *res)
{
	struct oo_polish_cell *kept;
	unsigned c, n = 0, pass;

	kept = malloc(sizeof(*kept) * (num_cells + 1));
	if (!kept)
		return -1;
	p->cell = kept;
	for (pass = 0; pass < 2; pass++) {
		unsigned first = n;

		for (c = 0; c < num_cells; c++)
			if ((cells[c].steer == 0) == (pass == 1))
				kept[n++] = cells[c];
		if ((uint64_t)count_rounds(kept, n) * p->num_links <=
		    max_entries)
			continue;
		if (!pass)
			return OO_POLISH_TOO_BIG;
		res->left_out = n - first;
		n = first;
	}
	p->num_cells = n;
	return 0;
}

/* Allocate the rounds of the cells picked. */
static int alloc_rounds(struct polish *p)
{
	unsigned c;

	p->first_round = calloc(p->num_cells + 1, sizeof(size_t));
	if (!p->first_round)
		return -1;
	for (c = 0; c < p->num_cells; c++) {
		p->first_round[c] = p->rounds;
		p->rounds += cell_rounds(&p->cell[c]);
	}
	p->load = calloc(p->rounds * p->num_links + 1, 1);
	p->max = calloc(p->rounds + 1, 1);
	p->hist = calloc(p->rounds * BINS + 1, sizeof(uint32_t));
	for (c = 0; c < p->num_cells; c++)
		if (p->cell[c].group >= p->num_groups)
			p->num_groups = p->cell[c].group + 1;
	p->group_size = calloc(p->num_groups + 1, sizeof(unsigned));
	p->group_delta = calloc(p->num_groups + 1, sizeof(double));
	p->group_kept = calloc(p->num_groups + 1, sizeof(double));
	p->group_eff = calloc(p->num_groups + 1, sizeof(double));
	p->floor = calloc(p->num_groups + 1, sizeof(double));
	if (!p->load || !p->max || !p->hist || !p->group_size ||
	    !p->group_delta || !p->group_kept || !p->group_eff ||
	    !p->floor)
		return -1;
	for (c = 0; c < p->num_cells; c++)
		p->group_size[p->cell[c].group]++;
	return 0;
}

/* Whether some round loads a link so far that a trial could overflow. */
static int too_heavy(const struct polish *p)
{
	size_t r;

	if (p->overflow)
		return 1;
	for (r = 0; r < p->rounds; r++)
		if (p->max[r] + p->net->lids_per_port >= BINS - 1)
			return 1;
	return 0;
}

/* The steering cells' efficiencies summed, as the rounds in memory have
   them. */
static double sum_eff(const struct polish *p)
{
	double sum = 0.0;
	unsigned c, k;

	for (c = 0; c < p->num_cells; c++) {
		size_t rounds = cell_rounds(&p->cell[c]);
		double e = 0.0;

		if (!p->cell[c].steer)
			continue;
		for (k = 0; k < rounds; k++)
			e += round_eff(p, p->first_round[c] + k);
		sum += rounds ? e / rounds : 1.0;
	}
	return sum;
}

/*
 * Each group's efficiency as the rounds in memory have it (the mean of
 * its cells'), its floor (that less its lead), and whether some group is
 * below its floor.
 */
static void measure_groups(struct polish *p)
{
	unsigned c, k;

	for (c = 0; c < p->num_cells; c++) {
		size_t rounds = cell_rounds(&p->cell[c]);
		unsigned g = p->cell[c].group;
		double e = 0.0;

		for (k = 0; k < rounds; k++)
			e += round_eff(p, p->first_round[c] + k);
		p->group_delta[g] += (rounds ? e / rounds : 1.0) /
		    p->group_size[g];
	}
	apply_groups(p);
	for (c = 0; c < p->num_cells; c++)
		p->floor[p->cell[c].group] = p->group_eff[p->cell[c].group] -
		    p->cell[c].lead;
	apply_groups(p);
}

/* Sweep after sweep until one moves nothing or the budget is spent. */
static void steer(struct polish *p, struct oo_polish_result *res)
{
	unsigned moved;

	do {
		moved = sweep(p, polish_entry);
		if (!moved && p->work < p->budget) {
			moved = sweep(p, swap_entry);
			res->swapped += moved;
		}
		res->moved += moved;
		res->sweeps++;
	} while (moved && p->work < p->budget);
	if (p->work >= p->budget)
		res->status = OO_POLISH_BUDGET;
}

/*
 * Then the route counts, on a budget of their own: a pass of
 * balance_entry() over every entry, and a sweep after each that moved
 * (the moves may open new ones), until a pass moves nothing.
 */
static void balance(struct polish *p, uint64_t budget,
		    struct oo_polish_result *res)
{
	unsigned moved;

	p->budget = p->work + budget;
	while (p->work < p->budget) {
		moved = sweep(p, balance_entry);
		res->balanced += moved;
		res->moved += moved;
		res->sweeps++;
		if (!moved)
			return;
		if (p->work < p->budget) {
			res->moved += sweep(p, polish_entry);
			res->sweeps++;
		}
	}
	res->status = OO_POLISH_BUDGET;
}

/*
 * Passes of try_entry over every entry with a round's ties loose (a move
 * slows no round of the steering cells, but may leave more links at a
 * round's busiest load), on a budget of their own, until one moves
 * nothing or the budget is spent.  Returns the entries moved.
 */
static unsigned loose_passes(struct polish *p, uint64_t budget,
			     try_entry_fn try_entry,
			     struct oo_polish_result *res)
{
	unsigned moved, total = 0;

	p->loose_ties = 1;
	p->budget = p->work + budget;
	do {
		moved = sweep(p, try_entry);
		total += moved;
		res->sweeps++;
	} while (moved && p->work < p->budget);
	p->loose_ties = 0;
	if (p->work >= p->budget)
		res->status = OO_POLISH_BUDGET;
	res->moved += total;
	return total;
}

/* oo_polish_even()'s passes of balance_entry(), ties loose: 0. */
static int even_counts(struct polish *p, uint64_t budget,
		       struct oo_polish_result *res)
{
	res->balanced += loose_passes(p, budget, balance_entry, res);
	return 0;
}

/*
 * Last, on a budget of its own: passes of part_entry(), until one
 * moves nothing.  No sweep of the first kind follows: more links at a
 * round's busiest load, which it may leave, are all it would see.
 */
static void part_pairs(struct polish *p, uint64_t budget,
		       struct oo_polish_result *res)
{
	if (count_from(p))
		return;
	res->parted += loose_passes(p, budget, part_entry, res);
}

/*
 * Where some group is still below its floor: sweeps on a budget of their
 * own that may lower other groups down to their floors to raise it.
 * Where one is still below after them, their moves are taken back (the
 * rounds in memory no longer follow the tables then; the polish ends).
 */
static void rescue(struct polish *p, uint64_t budget,
		   struct oo_polish_result *res)
{
	unsigned moved = res->moved, swapped = res->swapped;

	p->relax = 1;
	p->budget = p->work + budget;
	steer(p, res);
	res->rescued = res->moved - moved;
	if (!p->rescue) {
		res->eff_after = sum_eff(p);
		return;
	}
	while (p->num_undo) {
		const struct undo *u = &p->undo[--p->num_undo];

		p->lft[u->s][u->lid] = u->port;
	}
	res->undone = res->rescued;
	res->rescued = 0;
	res->moved = moved;
	res->swapped = swapped;
}

/* xorshift32: the kicks' random numbers, the same on every run. */
static uint32_t next_random(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/*
 * Take back the move undo u holds, the rounds and counts with it: the
 * entry goes back to its port, along the path it had (the entries after
 * s are as they were then).  Returns 0, or -1 where no path leads there
 * any more (nothing changed).
 */
static int restore_entry(struct polish *p, const struct undo *u)
{
	unsigned offset = u->lid - p->net->host_lid[u->h];
	struct path cur, old;
	int relax = p->relax;

	if (follow(p, u->s, 0, u->lid, u->h, &cur) ||
	    follow(p, u->s, u->port, u->lid, u->h, &old))
		return -1;
	p->relax = 0;
	move_entry(p, u->s, u->h, offset, &cur, &old, u->port);
	p->relax = relax;
	return 0;
}

/*
 * A kick: up to size entries, each of a random switch with hosts toward
 * a random host's LID (offsets from first_offset), whose flows cross a
 * link at its round's busiest load (hot_entry()), move to a random other
 * port as short that the polish may take (other_path()), whatever that
 * does to the rounds.  Each goes on the undo list; each try counts as
 * one link load of work.  Returns how many moved.
 */
static unsigned kick_entries(struct polish *p, unsigned size, uint32_t *x)
{
	const struct oo_eval_net *net = p->net;
	unsigned offsets = net->lids_per_port - p->first_offset;
	unsigned moved = 0, tries;
	uint8_t cand[UINT8_MAX + 1];

	for (tries = 0; tries < KICK_TRIES * size && moved < size;
	     tries++) {
		uint32_t s = next_random(x) % net->num_sw;
		uint32_t h = next_random(x) % p->num_hosts;
		unsigned o = p->first_offset + next_random(x) % offsets;
		unsigned lid = net->host_lid[h] + o, port, n = 0;
		struct path cur, alt;

		p->work++;
		if (!p->source[s] || net->host_sw[h] == s ||
		    !hot_entry(p, s, h, o, &cur))
			continue;
		for (port = 1; port < net->stride; port++)
			if (other_path(p, s, port, lid, h, &cur, &alt))
				cand[n++] = (uint8_t)port;
		if (!n || !room_to_undo(p))
			continue;
		port = cand[next_random(x) % n];
		other_path(p, s, port, lid, h, &cur, &alt);
		move_entry(p, s, h, o, &cur, &alt, (uint8_t)port);
		moved++;
	}
	return moved;
}

/*
 * Take back the moves on the undo list, last first, and the groups'
 * efficiencies to kept (the rounds are as before the first).  Returns 0,
 * or -1 where one could not be taken back (the rounds no longer follow
 * the tables then, which are as they were).
 */
static int take_back_kick(struct polish *p, const double *kept)
{
	int ret = 0;

	while (p->num_undo) {
		const struct undo *u = &p->undo[--p->num_undo];

		if (restore_entry(p, u)) {
			p->lft[u->s][u->lid] = u->port;
			ret = -1;
		}
	}
	memcpy(p->group_eff, kept, sizeof(double) * p->num_groups);
	p->rescue = 0;
	return ret;
}

/*
 * Iterated local search from where the polish stopped: each of kicks
 * kicks moves a few entries at random (kick_entries()), then sweeps as
 * the last stage does, every group's floor its efficiency before the
 * kick (rescue()'s rules: a group below it weighs RESCUE_WEIGHT times
 * more, the others may give up what they gained since).  The moves stay
 * where no group ends below its floor and the steering cells gained in
 * all; else they are taken back.  On the budget the caller gives; the
 * search ends at a kick that finds no entry to move.
 */
static void kick_search(struct polish *p, unsigned kicks, uint64_t budget,
			struct oo_polish_result *res)
{
	size_t bytes = sizeof(double) * p->num_groups;
	double *kept = malloc(bytes + 1);
	uint32_t x = KICK_SEED;

	if (!kept)
		return;
	p->relax = 1;
	p->budget = p->work + budget;
	for (; res->kicks < kicks && p->work < p->budget; res->kicks++) {
		struct oo_polish_result sweeps;
		double before = sum_eff(p);

		memset(&sweeps, 0, sizeof(sweeps));
		memcpy(kept, p->group_eff, bytes);
		memcpy(p->floor, p->group_eff, bytes);
		p->num_undo = 0;
		/* none found: no round to gain in, or too few to find */
		if (!kick_entries(p, KICK_SIZE, &x))
			break;
		steer(p, &sweeps);
		if (!p->rescue && !p->overflow &&
		    sum_eff(p) > before + OO_EVAL_EPSILON) {
			res->kicked++;
			res->moved += (unsigned)p->num_undo;
			continue;
		}
		if (take_back_kick(p, kept))
			break;
	}
	if (p->work >= p->budget)
		res->status = OO_POLISH_BUDGET;
	p->relax = 0;
	p->num_undo = 0;
	free(kept);
}

/*
 * The rounds of the cells in memory and the transit traffic of the
 * tables as they are, room for the route counts, each group's
 * efficiency and floor: 0, -1 (no memory) or an OO_POLISH_* status
 * where the cells do not fit (p freed then).
 */
static int set_up(struct polish *p, const struct oo_eval_net *net,
		  uint8_t *const *lft, unsigned num_hosts,
		  const struct oo_polish_cell *cells, unsigned num_cells,
		  uint64_t max_entries, uint64_t budget, unsigned first_offset,
		  struct oo_polish_result *res)
{
	unsigned s;
	int ret;

	memset(res, 0, sizeof(*res));
	memset(p, 0, sizeof(*p));
	p->net = net;
	p->lft = lft;
	p->num_hosts = num_hosts;
	p->budget = budget;
	p->first_offset = first_offset;
	ret = index_links(p);
	if (!ret)
		ret = pick_cells(p, cells, num_cells, max_entries, res);
	if (!ret)
		ret = alloc_rounds(p);
	if (!ret)
		ret = index_ranks(p);
	if (!ret) {
		res->lost = load_rounds(p);
		if (too_heavy(p))
			ret = OO_POLISH_HEAVY;
	}
	if (!ret)
		ret = find_transit(p);
	if (!ret)
		ret = alloc_counts(p);
	if (ret) {
		free_polish(p);
		if (ret > 0)
			res->status = ret;
		return ret;
	}
	res->held = (uint64_t)p->rounds * p->num_links;
	for (s = 0; s < net->num_sw; s++)
		res->movable += p->source[s];
	res->eff_before = sum_eff(p);
	measure_groups(p);
	return 0;
}

/* oo_polish() with the entries toward LID offsets below first_offset kept. */
static int polish_from(const struct oo_eval_net *net, uint8_t *const *lft,
		       unsigned num_hosts, const struct oo_polish_cell *cells,
		       unsigned num_cells, uint64_t max_entries,
		       uint64_t budget, uint64_t loose_budget,
		       unsigned first_offset, struct oo_polish_result *res)
{
	struct polish p;
	int ret;

	ret = set_up(&p, net, lft, num_hosts, cells, num_cells, max_entries,
		     budget, first_offset, res);
	if (ret)
		return ret < 0 ? -1 : 0;
	steer(&p, res);
	count_routes(&p);
	balance(&p, budget, res);
	if (loose_budget)
		part_pairs(&p, loose_budget, res);
	res->eff_after = sum_eff(&p);
	if (p.rescue)
		rescue(&p, budget, res);
	res->work = p.work;
	free_polish(&p);
	return 0;
}

int oo_polish(const struct oo_eval_net *net, uint8_t *const *lft,
	      unsigned num_hosts, const struct oo_polish_cell *cells,
	      unsigned num_cells, uint64_t max_entries, uint64_t budget,
	      uint64_t loose_budget, struct oo_polish_result *res)
{
	return polish_from(net, lft, num_hosts, cells, num_cells, max_entries,
			   budget, loose_budget, 0, res);
}

int oo_polish_offsets(const struct oo_eval_net *net, uint8_t *const *lft,
		      unsigned num_hosts, const struct oo_polish_cell *cells,
		      unsigned num_cells, uint64_t max_entries,
		      uint64_t budget, uint64_t loose_budget,
		      struct oo_polish_result *res)
{
	return polish_from(net, lft, num_hosts, cells, num_cells, max_entries,
			   budget, loose_budget, 1, res);
}

typedef int (*count_phase_fn)(struct polish *p, uint64_t budget,
			      struct oo_polish_result *res);

/*
 * A phase that evens the route counts (even_counts(), even_cables() or,
 * with cdg, even_ways()) on tables the polish is done with: 0, or -1 (no
 * memory; the tables as they were).
 */
static int evened(const struct oo_eval_net *net, uint8_t *const *lft,
		  unsigned num_hosts, const struct oo_polish_cell *cells,
		  unsigned num_cells, uint64_t max_entries, uint64_t budget,
		  count_phase_fn phase, struct oo_cdg *cdg,
		  struct oo_polish_result *res)
{
	struct polish p;
	int ret;

	ret = set_up(&p, net, lft, num_hosts, cells, num_cells, max_entries,
		     budget, 0, res);
	if (ret)
		return ret < 0 ? -1 : 0;
	p.cdg = cdg;
	count_routes(&p);
	ret = phase(&p, budget, res);
	res->eff_after = sum_eff(&p);
	res->work = p.work;
	free_polish(&p);
	return ret;
}

int oo_polish_even(const struct oo_eval_net *net, uint8_t *const *lft,
		   unsigned num_hosts, const struct oo_polish_cell *cells,
		   unsigned num_cells, uint64_t max_entries, uint64_t budget,
		   struct oo_polish_result *res)
{
	return evened(net, lft, num_hosts, cells, num_cells, max_entries,
		      budget, even_counts, NULL, res);
}

int oo_polish_kicks(const struct oo_eval_net *net, uint8_t *const *lft,
		    unsigned num_hosts, const struct oo_polish_cell *cells,
		    unsigned num_cells, uint64_t max_entries, uint64_t budget,
		    unsigned kicks, unsigned first_offset,
		    struct oo_polish_result *res)
{
	struct polish p;
	int ret;

	if (first_offset >= net->lids_per_port) {
		memset(res, 0, sizeof(*res));
		return 0;
	}
	ret = set_up(&p, net, lft, num_hosts, cells, num_cells, max_entries,
		     budget, first_offset, res);
	if (ret)
		return ret < 0 ? -1 : 0;
	p.rescue = 0;
	kick_search(&p, kicks, budget, res);
	res->eff_after = sum_eff(&p);
	res->work = p.work;
	free_polish(&p);
	return 0;
}

int oo_polish_cables(const struct oo_eval_net *net, uint8_t *const *lft,
		     unsigned num_hosts, const struct oo_polish_cell *cells,
		     unsigned num_cells, uint64_t max_entries, uint64_t budget,
		     struct oo_polish_result *res)
{
	return evened(net, lft, num_hosts, cells, num_cells, max_entries,
		      budget, even_cables, NULL, res);
}

int oo_polish_ways(const struct oo_eval_net *net, uint8_t *const *lft,
		   unsigned num_hosts, const struct oo_polish_cell *cells,
		   unsigned num_cells, uint64_t max_entries, uint64_t budget,
		   struct oo_cdg *cdg, struct oo_polish_result *res)
{
	return evened(net, lft, num_hosts, cells, num_cells, max_entries,
		      budget, even_ways, cdg, res);
}
