/*
 * osmoffset - port offsetting for OpenSM's updn and minhop routing engines
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Everything declared here is free of OpenSM types, so that the Check unit
 * tests can drive the option parser and the port-selection rule directly,
 * without a running subnet manager.
 */

#ifndef OSMOFFSET_H
#define OSMOFFSET_H

#include <stddef.h>
#include <stdint.h>

#define OO_PLUGIN_NAME "osmoffset"

/* How the starting port among equal-cost candidates is chosen. */
enum oo_rule {
	OO_RULE_OFF = 0,	/* stock engine behaviour, LFTs untouched */
	OO_RULE_PLAIN,		/* the 2008 rule: rotate with paths routed */
	OO_RULE_COORDINATED,	/* d-mod-k: every switch on a path derives
				   its choice from the destination's rank */
};

/* The rule that "port_offsetting=on" selects. */
#define OO_RULE_DEFAULT OO_RULE_COORDINATED

/* Who builds the updn engine's hop tables while port offsetting is on. */
enum oo_hop_tables {
	OO_HOPS_FAST = 0,	/* osmoffset, same tables, much faster */
	OO_HOPS_STOCK,		/* OpenSM's own updn stage */
};

/* the most kicks polish_kicks may ask for */
#define OO_MAX_POLISH_KICKS 100000

struct oo_options {
	enum oo_rule rule;
	enum oo_hop_tables hop_tables;
	int stock_guard;	/* keep the stock LFTs where ours score
				   lower (default on) */
	int reach_all;		/* fill the LFT entries up/down routing
				   leaves empty, loop-free (default on) */
	unsigned reach_vls;	/* virtual lanes the reach pass may put
				   routes on (default 1: VL0 only) */
	int design_lanes;	/* the stock guard also tries each level's
				   lanes by design (default on) */
	int offsets_apart;	/* and further LID offsets spread around
				   the slots (default on) */
	int digits_apart;	/* and the level-1 digits of the CAs below
				   one level-1 switch apart (default on) */
	int keep_live;		/* and plans that miss few slots keeping
				   their live slots' digits (default on) */
	int polish;		/* and single entries of leaves moved where
				   that lowers a round's busiest link
				   (default on) */
	int spine_cas;		/* the stock guard's rank orders rank the
				   CAs on spines or cores too (default
				   off: a job runs on the leaves' hosts) */
	int leaf_shuffles;	/* the stock guard scores leaf orders with
				   the leaves shuffled too (default off) */
	unsigned polish_kicks;	/* kicks of the search on the tables the
				   stock guard keeps (default 0: none) */
	int polish_even;	/* the route counts of the tables the
				   stock guard keeps evened last, a
				   round's ties loose (default off) */
	int polish_cables;	/* and then their route counts over
				   parallel cables to one switch evened
				   (default on) */
	int polish_ways;	/* and over the equally short ways to
				   other neighbours (default off) */
};

/*
 * Parse the value of OpenSM's event_plugin_options.  Tokens are separated
 * by white space or commas and have the form key=value.  A key may carry
 * our own prefix ("osmoffset.port_offsetting=on"); tokens with another
 * prefix ("foo.bar=1") belong to other plugins and are skipped.
 *
 * Recognised keys:
 *	port_offsetting = off | on | coordinated | plain
 *			  (also no/yes, false/true, 0/1; on = coordinated)
 *	hop_tables	= fast | stock  (default fast; only matters while
 *			  port offsetting is on)
 *	stock_guard	= on | off  (default on; also yes/no, true/false,
 *			  1/0)
 *	reach_all	= on | off  (default on; the same words)
 *	reach_vls	= 1 .. 8  (default 1; virtual lanes the reach pass
 *			  may put the routes it cannot fit on VL0 on)
 *	design_lanes	= on | off  (default on; the same words as
 *			  stock_guard)
 *	offsets_apart	= on | off  (default on; the same words)
 *	digits_apart	= on | off  (default on; the same words)
 *	keep_live	= on | off  (default on; the same words)
 *	polish		= on | off  (default on; the same words)
 *	spine_cas	= on | off  (default off; the same words)
 *	leaf_shuffles	= on | off  (default off; the same words)
 *	polish_kicks	= 0 .. OO_MAX_POLISH_KICKS  (default 0; kicks of
 *			  the search on the tables the stock guard keeps)
 *	polish_even	= on | off  (default off; the same words as
 *			  stock_guard)
 *	polish_cables	= on | off  (default on; the same words)
 *	polish_ways	= on | off  (default off; the same words)
 *
 * A NULL or empty text leaves port offsetting off.  Returns 0 on success.
 * On error returns -1, leaves *opts set to the defaults (off) and writes a
 * readable message naming the offending token to err (OO_OPTIONS_ERR_MAX
 * bytes hold any).
 */
#define OO_OPTIONS_ERR_MAX 512
int oo_options_parse(const char *text, struct oo_options *opts,
		     char *err, size_t err_len);

const char *oo_rule_name(enum oo_rule rule);
const char *oo_hop_tables_name(enum oo_hop_tables h);

/* One equal-cost egress port of a switch toward one destination. */
struct oo_candidate {
	uint8_t port;		/* switch port number */
	uint32_t paths;		/* paths already routed out of this port */
	uint32_t offset_paths;	/* of those, paths of LIDs with the same
				   LID offset (base LIDs, base + 1, ...) */
	uint32_t reuse;		/* earlier LIDs of the same destination
				   already leaving toward this port's
				   remote node (LMC path diversity) */
};

/*
 * The index among n candidates at which the scan starts: the number of
 * paths routed so far over these candidates, divided by n, modulo n.
 * With LMC > 0 this rotates the first choice from one destination to the
 * next, so base LIDs do not align on one port.
 */
unsigned oo_rotation_start(const struct oo_candidate *cand, unsigned n);

/*
 * Pick one of n candidates: the one with the least reuse, then the fewest
 * paths of the same LID offset, then the fewest paths in all; among equals
 * the first met when scanning from index start (wrapping around).  So base
 * LIDs, and each further LID offset, spread evenly over the candidates.
 * Returns the chosen index, or -1 when n is 0.
 */
int oo_select_candidate(const struct oo_candidate *cand, unsigned n,
			unsigned start);

/*
 * The coordinated rule (d-mod-k on fat trees).  Destinations are ranked
 * 0..N-1 in routing order.  Going up from tree level l, a switch offers
 * its up links as numbered slots; the destination of rank r takes slot
 *
 *	(r / divisor[l] + lid_offset) mod slots
 *
 * where divisor[0] = 1 and divisor[l + 1] = divisor[l] * parents[l], the
 * switches a level's up slots lead to (its slots without their parallel
 * lanes: the destinations a switch of level l + 1 receives from one child
 * differ in r / divisor[l + 1], lanes included).
 * The plugin calls it with lid_offset 0 for the base LID and places the
 * further LID offsets with oo_offset_slot().
 * Every switch of a level numbers its slots by the same global order of
 * the switches above, so the choices made along a path are digits of r:
 * a shift permutation in rank order then never puts two flows on one link
 * of a full fat tree, and each LID offset takes its own links.  Going
 * down over parallel links the same digit picks the link, so trunks stay
 * balanced as well.
 */
unsigned oo_coordinated_slot(uint32_t rank, uint64_t divisor,
			     unsigned lid_offset, unsigned slots);

/*
 * The slot the LID offset lid_offset of a destination takes, its base LID
 * taking slot base (0 <= base < slots), each port having lids LIDs.  When
 * lids divides slots the offsets stay inside the aligned block of lids
 * slots that holds base, so the LIDs of any two destinations take either
 * the same slots or disjoint ones; an MPI striping over the LIDs of
 * randomly placed peers then meets fewer partial overlaps.  Otherwise the
 * offsets take the slots that follow base.  Either way the LIDs of one
 * destination take distinct slots while lids <= slots.
 */
unsigned oo_offset_slot(unsigned base, unsigned lid_offset, unsigned lids,
			unsigned slots);

/*
 * The same where the LIDs of a port may spread over the whole ring of
 * slots: where lids does not divide slots, LID offset o takes the slot
 * ceil(o x slots / lids) further on, so that the LIDs of one port lie
 * evenly around the ring rather than side by side (at a level with one
 * link per parent, where consecutive slots are just other parents).
 */
unsigned oo_stride_slot(unsigned base, unsigned lid_offset, unsigned lids,
			unsigned slots);

/*
 * A further LID offset's slot at a switch whose slots run lane by lane
 * over the same parents (slot = lane x parents + position; parents ==
 * slots for one lane, 0 where the slots follow no such order): around
 * the ring of slots with one lane, around the ring of parents within the
 * base LID's lane with several (where lids divides neither, and there
 * are at least lids parents), so that the LIDs of a port leave by parents
 * spread evenly rather than side by side; else oo_offset_slot().
 */
unsigned oo_ring_offset_slot(unsigned base, unsigned lid_offset,
			     unsigned lids, unsigned slots, unsigned parents);

/*
 * Where a further LID offset of a destination leaves a switch whose base
 * LID routes are fixed (the stock tables the stock guard keeps): cand
 * holds the neighbours (switch indices, ascending) through which the LID
 * arrives as short as its route does now, base the neighbour its base LID
 * leaves by.  LID offset lid_offset takes the neighbour lid_offset places
 * after base's, around cand: as every switch orders its neighbours the
 * same way, the LIDs of one destination leave by distinct neighbours
 * (while there are as many as LIDs) whichever the base LID takes.
 * Returns an index into cand, or -1 where base is not among them.
 */
int oo_beside_base(const uint32_t *cand, unsigned n, uint32_t base,
		   unsigned lid_offset);

/*
 * The live slot a LID takes at a switch that has links toward its
 * destination in live of its slots only (a degraded tree): the coordinated
 * rule over the live slots instead of all of them, as Dmodc does
 * (Gliksberg et al., arXiv 2211.11817).  Returns an index into the live
 * slots in slot order.  The base LID takes (rank / divisor) mod live, so
 * the destinations behind one target take its live links in turn, in
 * rank order, and a detour needs no slot of its own.  LID offset
 * lid_offset lies ceil(lid_offset * live / lids) slots further on around
 * the live slots (exactly lid_offset * live / lids where lids divides
 * live), so a destination's LIDs lie evenly apart and take distinct live
 * slots while lids <= live, and the LIDs of a leaf's hosts (consecutive
 * ranks) split over the live slots as evenly as their count allows.
 * (Aligned blocks of lids slots, as oo_offset_slot() keeps them over all
 * slots, put the LIDs of the hosts past a multiple of live on the blocks
 * of the first ones: 6 hosts at LMC 1 over 4 live slots took 4, 4, 2 and
 * 2.)  Returns 0 when live is 0.
 */
unsigned oo_live_slot(uint32_t rank, uint64_t divisor, unsigned lid_offset,
		      unsigned lids, unsigned live);

/*
 * Where a further LID offset of a destination goes when its up slot leads
 * nowhere (a link of a degraded tree is missing) or to a lane cut for
 * its target (oo_cut_excess_lanes()).  Among the slots that no other LID
 * of the destination takes (avoid 0); failing that, among those no
 * earlier LID took (avoid <= 1); failing that, among all live slots: the
 * live slot with the least near[s] (NULL: not weighed), then the one
 * whose port has carried the fewest paths so far (load), ties going to
 * the first such slot after base.  The LIDs of the destination so keep
 * to distinct switches where the tree still lets them.  live and avoid
 * have slots entries (avoid: 0 free, 1 another LID is to take it, 2 an
 * earlier LID took it).  Returns the slot, or -1 when no slot is live.
 */
int oo_window_detour_slot(const uint8_t *live, const uint8_t *avoid,
			  const uint32_t *near, const uint32_t *load,
			  unsigned slots, unsigned base);

/* A slot without a candidate (plans and oo_far_slot()). */
#define OO_SLOT_DEAD 0xff

/*
 * A base LID's detour when its slot dead is dead.  cand[s] is the
 * candidate filling slot s, or OO_SLOT_DEAD.  Of the live slots whose port
 * carries at most one base LID more than the least loaded live one (load:
 * base LIDs routed per slot so far), those farthest from dead around the
 * ring of slots (within slots / 8 of the farthest) are the candidates; the
 * first at or after *cursor (mod slots) is taken and the cursor moves just
 * past it, so successive detours take turns.  Returns the slot, or -1
 * when no slot is live.  The destinations next to
 * this one in rank order take the slots next to dead, so a detour that
 * lands far from them meets none of them in a shift round, and the base
 * LIDs of the switch stay spread over its ports.
 */
int oo_far_slot(const uint8_t *cand, const uint32_t *load, unsigned slots,
		unsigned dead, unsigned *cursor);

/*
 * The live slot of the same parent as slot in another lane, where slots
 * run over lanes runs of slots / lanes slots each, parents in the same
 * order in every run: the first slot + k * slots / lanes (mod slots),
 * k = 1 .. lanes - 1, with a candidate (cand[s] as for oo_far_slot()) and
 * not cut (cut: NULL for none); with load (per slot, the LIDs its cable
 * carries so far), the least loaded such slot, the first of a tie.  A
 * base LID whose slot is dead but for one cable of a pair then still
 * reaches the switch its slot leads to at the peers, and the LIDs of
 * several dead lanes spread over the live ones instead of piling onto
 * the first.  Returns -1 when lanes < 2, lanes does not divide slots,
 * slot is out of range or no sibling is live.
 */
int oo_sibling_lane(const uint8_t *cand, const uint8_t *cut,
		    const uint32_t *load, unsigned slots, unsigned lanes,
		    unsigned slot);

/*
 * Whether the slots of a switch run over lanes as oo_sibling_lane()
 * assumes: lanes (at least 2) divides slots, and the slots that differ by
 * a multiple of slots / lanes lead to one switch wherever they have a
 * link (parent[s]: the switch behind slot s, 0 for none).  A level's most
 * parallel links need not be its lanes: one edge cabled six times to each
 * of two spines, among peers cabled three times to each of four, gives
 * the level six "lanes" of two slots, and slot + 2 then leads to another
 * spine.
 */
int oo_lanes_align(const uint16_t *parent, unsigned slots, unsigned lanes);

/*
 * A trunk wider than its level's lanes (a cable doubled beyond the design,
 * see oo_design_lanes()): which of its width links a LID whose up slot is
 * in lane takes, the links numbered in port order.  Each turn of the
 * destination ranks around the level's slots moves on by lanes, as
 * pick_down_link() does coming down, so that the links beyond the lanes
 * carry their share; lane itself where the trunk is no wider than lanes,
 * or lane is not one of them.
 */
unsigned oo_extra_lane(unsigned lane, unsigned lanes, unsigned width,
		       uint64_t turn);

/*
 * A further LID offset's slot a fraction of the ring of slots away from
 * its base LID's: base + lid_offset * slots / lids (mod slots), so that
 * the LIDs of a port spread around all the slots instead of over a block
 * of neighbours (oo_offset_slot()).  On a level whose slots reach
 * several groups of parents (the line ASICs of two directors) the LIDs
 * of one port then go up through both.
 */
unsigned oo_apart_offset_slot(unsigned base, unsigned lid_offset,
			      unsigned lids, unsigned slots);

/*
 * The digit a destination takes at a level above the leaves when its
 * digit by rank, want, may already be taken by another destination that
 * comes down through the same switch below (taken[d] != 0): the first
 * free one from want on, around the slots; want itself where all are
 * taken.  Two destinations below one line ASIC with the same digit come
 * down over the same link from the same core in every round that sends
 * to both; ranks that interleave the pods of a director fabric (edge e in
 * pod e mod 4) give every fifth edge of a pod the same digit.
 */
unsigned oo_free_digit(const uint8_t *taken, unsigned slots, unsigned want);

/*
 * Whether a plan at a level with parallel lanes (slot = lane * parents +
 * position of the parent) misses whole parents only: every parent has
 * all its lanes live, or none of them (cand[s] as for oo_far_slot(); cut
 * (NULL: none) marks lanes oo_cut_excess_lanes() cut, which count as
 * neither).  At most half the slots live, and lids dividing the live
 * count: then the further LIDs of a destination take the block of live
 * slots its base LID took (oo_offset_slot() over the live slots), as a
 * full level's LIDs take a block of all slots.  With more than half the
 * slots live (a spine or two missing of many), the digits and detours
 * keep the shift rounds' windows apart better (measured on the NDR dump).
 * Returns 0 when parents is 0 or does not divide slots, or no slot is dead.
 */
int oo_offsets_take_live_block(const uint8_t *cand, const uint8_t *cut,
			       unsigned slots, unsigned parents,
			       unsigned lids);

/*
 * Up slots that lead to more lanes than the parent behind them has links
 * on toward the target.  remote[s] names the parent slot s leads to (0:
 * the slot is dead) and cap[s] how many links that parent has on down
 * toward the target (0: no limit known).  A parent's lanes are its slots
 * in slot order; lane k >= cap[s] is cut (cut[s] = 1), so that the LIDs
 * whose slot it is detour instead of doubling up on the parent's links
 * below.  Lane 0 is never cut.  Only where it pays: the live slots left
 * carry the cut ones' LIDs too (live / (live - cut) each), which must stay
 * below the worst cut parent's lanes / cap; else nothing is cut (every
 * parent capped alike, or all lanes to one parent).  Returns the number
 * of slots cut.
 */
unsigned oo_cut_excess_lanes(const uint16_t *remote, const uint8_t *cap,
			     unsigned slots, uint8_t *cut);

/*
 * Fill divisor[0..levels-1] from the number of parents each level's up
 * slots lead to (its slots without their parallel lanes).  Products that
 * would overflow 2^32 saturate; a level without parents counts as one.
 */
void oo_level_divisors(const unsigned *parents, unsigned levels,
		       uint64_t *divisor);

/*
 * Going down from a switch whose candidates lead to several children,
 * some over parallel links: child[i] names the child of candidate i, the
 * candidates grouped by child (children are named 1 and up).  The group
 * digit % (number of groups) picks the child, and oo_mirror_link() the
 * lane % (its links)-th link to it.  Returns the candidate's index, or -1
 * when n is 0.
 */
int oo_child_lane(const uint16_t *child, unsigned n, unsigned digit,
		  unsigned lane);

/*
 * Going down toward a destination from a switch whose candidates lead to
 * several children (child[i] names the child of candidate i): the
 * candidate that leads to the child on the destination's own up path
 * (want), the lane % (their number)-th of them when parallel links lead
 * there.  Returns its index, or -1 when no candidate leads to want.
 */
int oo_mirror_link(const uint16_t *child, unsigned n, uint16_t want,
		   unsigned lane);

/*
 * The parent of a leaf that most other leaves send a LID up to, where the
 * LID's own slot at its leaf has no link and each sender detours it by
 * its own loads.  sent[i] names the switch sender i's LFT sends the LID to
 * (0: none); remote[p] the switch behind port p of the leaf (0: none).
 * A sender votes for the switch it names when that is a parent of the
 * leaf; ties go to the parent on the lowest port.  Returns the parent, or
 * 0 when no sender names one.
 */
uint16_t oo_peers_parent(const uint16_t *sent, unsigned n,
			 const uint16_t *remote, unsigned ports);

/* The most up slots a switch numbers (oo_fill_dead_slots()). */
#define OO_MAX_SLOTS 256

/*
 * The up slots of the LIDs behind one leaf that has links in some slots
 * of its level only (a leaf missing a spine or one cable of a doubled
 * pair).  slot[i] is the slot LID i takes, by the digits of its rank;
 * consecutive runs of lids entries are the LIDs of one destination, the
 * first its base LID.  live (slots entries) says which slots of the leaf
 * have a link and parent[s] which switch slot s leads to.  A further LID
 * in a dead slot moves to a live slot no other LID of its destination
 * takes (where one is left), the one the fewest LIDs of the leaf take so
 * far (those in live slots counted first), a parent none of the
 * destination's other LIDs take winning ties, then the first such slot
 * after its own around the ring.  Base LIDs stay: where a base LID's slot
 * is dead, each sender places it (oo_live_slot(), or oo_far_slot() at a
 * level with parallel lanes).  A sending leaf whose plan toward this
 * leaf has dead slots, at a level with one link per parent, places all
 * of this leaf's LIDs over its live slots instead (oo_live_slot()); one
 * at a level with parallel lanes whose plan misses whole parents places
 * the further offsets by their base LID (oo_offsets_take_live_block()).
 * Every switch that sends to the leaf then knows which of the leaf's
 * links a LID comes down by, and they carry its LIDs evenly.  Returns how
 * many LIDs moved; none when no slot is live.
 */
unsigned oo_fill_dead_slots(uint16_t *slot, unsigned n, unsigned lids,
			    const uint8_t *live, const uint16_t *parent,
			    unsigned slots);

/*
 * Up/down hop tables, as OpenSM's updn engine computes them (see
 * osm_offset_updn.c), on a compact graph of the switches.
 */
#define OO_UPDN_NO_RANK 0xffffffffU
#define OO_HOPS_NONE 0xff

#define OO_LINK_RANKS 0x1	/* the ranking search crosses this link */
#define OO_LINK_ROUTES 0x2	/* the hop searches cross this link */
#define OO_LINK_DIRECT 0x4	/* a link to another switch, for min hop */
#define OO_LINK_HEALTHY 0x8	/* min hop propagates over this link */

struct oo_updn_link {
	uint32_t to;		/* index of the switch at the other end */
	uint8_t port;		/* port of this switch */
	uint8_t rport;		/* port of the other switch */
	uint8_t flags;		/* OO_LINK_* */
	uint8_t down;		/* set by oo_updn_directions() */
};

struct oo_updn_graph {
	unsigned num_sw;
	unsigned stride;	/* entries per switch row in a hop matrix:
				   more than any port number */
	const unsigned *first;	/* links of switch s are link[first[s]] up
				   to link[first[s + 1]], by port number */
	struct oo_updn_link *link;
	unsigned *rank;		/* in: 0 for roots, OO_UPDN_NO_RANK for
				   the others; out: hops from the roots */
	const uint64_t *id;	/* breaks ties between equal ranks */
	const unsigned *root_dist;	/* NULL: a cable between two roots
				   goes up both ways, as OpenSM's updn takes
				   it; else each root's hops from the centre
				   of its roots (oo_updn_root_centres()):
				   such a cable goes up toward the centre,
				   between two roots as far from it toward
				   the smaller id */
};

/* Scratch for oo_updn_hops(). */
struct oo_updn_work {
	uint8_t *hops;		/* num_sw * stride */
	uint8_t *queued;	/* num_sw */
	uint8_t *down;		/* num_sw */
	unsigned *queue;	/* num_sw + 1 */
};

/*
 * Rank every switch by its distance from the nearest root, breadth-first
 * from the roots in index order.  queue needs num_sw entries.  Returns the
 * highest rank given.
 */
unsigned oo_updn_rank(struct oo_updn_graph *g, unsigned *queue);

/*
 * updn's root detection (90 % of the end ports at one distance) also
 * takes leaves for roots when there are many of them: a leaf with 3 % of
 * the hosts sees the other 97 % two hops away.  Up/down over a leaf root
 * turns down/up at that leaf and lets credit loops form.  This drops the
 * roots (rank[s] == 0) that are leaves (leaf[s], see oo_rank_leaves():
 * switches with hosts of their own, no SHARP nodes, that look neither like
 * a spine nor like a core with management HCAs), when a root that is no
 * leaf remains (a spine or core with a management HCA stays).  Dropped roots
 * get OO_UPDN_NO_RANK, and then every switch that is no leaf and is cabled to
 * leaves only (a spine of a two-level tree the detection missed) becomes a
 * root.  Returns how many roots were dropped.
 */
unsigned oo_updn_drop_leaf_roots(const struct oo_updn_graph *g,
				 const uint8_t *leaf, unsigned *rank);

/*
 * updn takes a cable between two roots as going up both ways (OpenSM's
 * updn_get_dir(): roots are not meant to be cabled to each other), so
 * routes that run from root to root over such cables can close a credit
 * loop.  The detection finds such roots where a level of switches stands
 * between the leaves and the top at one distance from every host: two
 * directors' line ASICs, cabled to each other through edge switches
 * without hosts, under their fabric ASICs.  This drops every root cabled
 * to a root further from the leaves (hops over switch cables from the
 * nearest leaf[]); those further up stay and the dropped ones are ranked
 * under them (rank[s] = OO_UPDN_NO_RANK).  Roots at one distance that are
 * cabled to each other stay.  A root that is a dead end (no leaf, cabled
 * to one switch only, or to nothing but dead ends beyond that one: a pod
 * spine that lost its edge cables, hanging off a top switch) is further
 * from the leaves than the switch it hangs off, but is no top over it:
 * no route crosses it, and the switch it hangs off stays a root.  Returns
 * how many were dropped; 0 also when out of memory (the roots then stay as
 * found).
 */
unsigned oo_updn_drop_roots_under_roots(const struct oo_updn_graph *g,
					const uint8_t *leaf, unsigned *rank);

/*
 * An edge switch without hosts (an empty leaf) cabled to every spine of a
 * two-level tree is one distance from every host too, and further from
 * the leaves than the spines: updn's detection may take it for a root
 * beside them, and oo_updn_drop_roots_under_roots() would then rank the
 * spines under it.  It is no core over them: a spine sends it one cable
 * of many, where a director's line ASIC sends about as many cables up to
 * its fabric ASICs as down to the edges.  Call this first: it drops each
 * root (rank[s] = OO_UPDN_NO_RANK) that is further from the leaves than
 * roots it is cabled to and is a core over none of them, a core over a
 * root being one of the roots further up that take, together, at least
 * half as many of its cables as it has toward the leaves.  Dead ends do
 * not count (see oo_updn_drop_roots_under_roots()).  Returns how many
 * were dropped; 0 also when out of memory.
 */
unsigned oo_updn_drop_edge_tops(const struct oo_updn_graph *g,
				const uint8_t *leaf, unsigned *rank);

/*
 * Where updn's detection finds no root at all (no switch sees nearly every
 * host at one distance: a dragonfly-like fabric of groups whose spines are
 * cabled to each other, two trees joined at their spines), stock updn
 * hands the fabric to minhop, whose routes can close credit loops.  Where
 * no switch with end ports of its own (cas[s]; SHARP nodes are not
 * counted there) is cabled to another that has some, this makes every
 * switch without end ports and with a cable to another switch a root
 * (rank[s] = 0): the spines, cores and fabric ASICs over the leaves.  Call
 * the drops above after it: empty edges and the switches under the tops
 * go again.  Where hosts sit on switches cabled to each other (a ring, a
 * mesh, a director's line ASIC with a management HCA over edges with
 * hosts) none is: up/down over such roots may leave CAs out of reach that
 * minhop's routes get to.  Returns how many.
 */
unsigned oo_updn_bare_roots(const struct oo_updn_graph *g,
			    const unsigned *cas, unsigned *rank);

/*
 * Roots cabled to each other at one level (the spines of a dragonfly's
 * groups): for each set of roots joined by such cables, the centre is the
 * root with the most of them (the first on a tie), and dist[s] gets every
 * root's hops from its centre over cables between roots (OO_UPDN_NO_RANK
 * for the other switches).  With g->root_dist = dist those cables go up
 * toward the centre only: up/down stays free of credit loops, and every
 * root still reaches every other of its set, up to the centre and down.
 * queue needs num_sw entries.  Returns how many sets.
 */
unsigned oo_updn_root_centres(const struct oo_updn_graph *g,
			      const unsigned *rank, unsigned *dist,
			      unsigned *queue);

/*
 * Whether every switch with end ports (cas[s]) reaches every other over
 * up/down paths, once the ranks and directions are set (w is scratch, as
 * for oo_updn_hops()).  Roots whose cables between them go up one way
 * only (g->root_dist) may leave a pair without one where a switch with
 * end ports has no cable to some set of roots.
 */
int oo_updn_reach_all(const struct oo_updn_graph *g, const unsigned *cas,
		      struct oo_updn_work *w);

/* How many switches are roots (rank 0). */
unsigned oo_updn_count_roots(const struct oo_updn_graph *g,
			     const unsigned *rank);

/*
 * Switches updn's detection leaves out beside its roots: where every root
 * stands at one level (hops from the nearest leaf, over switch cables)
 * with most of its cables (two or more) to the level below, a switch of
 * that level that is no root, is cabled to no root and has most of its
 * cables (two or more) to the level below stands beside them (a spine of
 * a two-level tree with a leaf or two fewer, a second pair of spines over
 * most leaves, a top switch of a three-level tree that lost a cable).
 * Above the spines it must also be as wide as the narrowest root, less one
 * lost cable: an edge switch without hosts sits at the level of a
 * director's fabric ASICs too, over a few of its line ASICs only.
 * Ranked below the switches under it, it would carry no traffic between
 * them: a step down to it cannot turn up again.  This makes every such
 * switch a root (rank[s] = 0).  Where the roots stand at different levels
 * or over other switches than the level below, nothing joins.  Returns
 * how many; 0 also when out of memory (the roots then stay as found).
 */
unsigned oo_updn_add_sibling_roots(const struct oo_updn_graph *g,
				   const uint8_t *leaf, unsigned *rank);

/*
 * Mark which steps go down, once the ranks are known: toward a switch
 * further from the roots, or, between two of one rank, from the smaller
 * id to the larger (OpenSM's updn_get_dir()); between two roots never,
 * unless g->root_dist is set: then away from their centre.
 */
void oo_updn_directions(struct oo_updn_graph *g);

/*
 * The hop counts of every switch toward switch dest, by port, over up/down
 * paths only (w->hops row s, entry 0 = least count, OO_HOPS_NONE = no
 * path).
 */
void oo_updn_hops(const struct oo_updn_graph *g, unsigned dest,
		  struct oo_updn_work *w);

/*
 * Min-hop distances of every switch to switch target, as OpenSM's minhop
 * stage computes them with unit hop weights (which updn uses to find root
 * switches): the last link of a path may be any link to target, the
 * others must be healthy.  dist gets num_sw entries (OO_HOPS_NONE = no
 * path), queue num_sw.  Needs links that are the same seen from both
 * ends.
 */
void oo_minhop_distances(const struct oo_updn_graph *g, unsigned target,
			 uint8_t *dist, unsigned *queue);

/*
 * The min-hop hop counts of every switch toward switch target, by port,
 * as OpenSM's minhop stage leaves them with unit hop weights, from the
 * distances oo_minhop_distances() gave: 1 over any link straight to
 * target, else 1 + the distance of the switch behind a healthy link.
 * Fills hops (num_sw * stride, entry 0 of a row = least count).
 */
void oo_minhop_rows(const struct oo_updn_graph *g, unsigned target,
		    const uint8_t *dist, uint8_t *hops);

/*
 * Shift-alltoall quality of forwarding tables (osm_offset_eval.c), the
 * measure of lft-analyze: round k of a shift over a rank order sends rank
 * i to rank i + k, runs at 1 / (most flows on one link), and the
 * efficiency is the mean over the rounds.  Links are numbered switch *
 * stride + port.
 */
#define OO_EVAL_NONE 0xffffffffU
#define OO_EVAL_EPSILON 1e-9

struct oo_eval_net {
	unsigned num_sw;
	unsigned stride;		/* more than any port number */
	const uint32_t *next;		/* num_sw * stride: switch behind
					   each port, or OO_EVAL_NONE */
	const uint8_t *const *lft;	/* per switch: port by LID */
	const unsigned *lft_len;	/* per switch: LIDs in its lft */
	const uint32_t *host_sw;	/* per host: its switch */
	const uint8_t *host_port;	/* per host: that switch's port */
	const uint16_t *host_lid;	/* per host: base LID */
	unsigned lids_per_port;		/* 2^LMC */
};

struct oo_eval_work {
	uint32_t *load;			/* per link, zero between rounds */
	uint32_t *touched;		/* links loaded this round */
	unsigned num_touched;
	uint32_t max_load;
};

struct oo_eval_score {
	double eff;			/* 1.0: no link shared in any round */
	uint64_t lost;			/* flows whose LID leads nowhere */
	unsigned rounds;		/* rounds looked at */
};

/*
 * One hop of LID lid at switch s toward host to, leaving by port (0: s's
 * entry for lid): 1 where that port is to's own, -1 at a missing entry or
 * a port that leads to no switch, else 0 with the link it crosses in *at
 * (s * stride + port).  The walk of oo_eval_shift() and of the polish.
 */
static inline int oo_eval_hop(const struct oo_eval_net *net, uint32_t s,
			      uint8_t port, unsigned lid, uint32_t to,
			      size_t *at)
{
	if (!port) {
		if (lid >= net->lft_len[s])
			return -1;
		port = net->lft[s][lid];
	}
	if (!port || port >= net->stride)
		return -1;
	if (s == net->host_sw[to] && port == net->host_port[to])
		return 1;
	*at = (size_t)s * net->stride + port;
	return net->next[*at] == OO_EVAL_NONE ? -1 : 0;
}

/* Scratch for a net of entries = num_sw * stride links. */
int oo_eval_work_init(struct oo_eval_work *wk, size_t entries);
void oo_eval_work_free(struct oo_eval_work *wk);

/*
 * Score a shift alltoall among the n hosts of order (host indices), with
 * the traffic of one LID offset (traffic = 0 for base LIDs, k for base +
 * k, as an MPI that picks one path per offset sends it) or striped over
 * all LIDs of a port (traffic = OO_EVAL_SPREAD).  Rounds are all looked at
 * while n * (n - 1) LIDs (one per flow, spread: 2^LMC) fit in budget,
 * else evenly spaced ones.  A flow whose LID meets a dead end, a missing
 * entry or a loop is lost.
 */
#define OO_EVAL_SPREAD (-1)
void oo_eval_shift(const struct oo_eval_net *net, const uint32_t *order,
		   unsigned n, int traffic, uint64_t budget,
		   struct oo_eval_work *wk, struct oo_eval_score *score);

/*
 * For every flow among the n hosts of order and every LID of its
 * destination, OR into mark[s * num_sw + d] for each switch s the LID
 * visits, d being the destination's switch: OO_EVAL_MARK_BASE for the base
 * LID, OO_EVAL_MARK_MORE for the further LID offsets; only the kinds in
 * which are followed.  Tables that take the marked entries (of those
 * kinds) from net route every flow among those hosts exactly as net does.
 */
#define OO_EVAL_MARK_BASE 0x1
#define OO_EVAL_MARK_MORE 0x2
void oo_eval_mark_paths(const struct oo_eval_net *net, const uint32_t *order,
			unsigned n, uint8_t which, uint8_t *mark);

/*
 * The LIDs of the num_hosts hosts that some flow loses: lost[h * 2^LMC +
 * o] is set where base LID + o of host h leads nowhere (a dead end, a
 * missing entry or a loop) from a switch that holds one of the hosts, as
 * oo_eval_shift() would count the flow lost.  Returns how many it set, or
 * -1 (no memory).
 */
int oo_eval_lost_lids(const struct oo_eval_net *net, unsigned num_hosts,
		      uint8_t *lost);

/*
 * The host/LID pairs among the num_hosts hosts that lead nowhere (as
 * oo_eval_lost_lids() walks them): for every LID of every host, each
 * other host on a switch from which it is lost counts once (the hosts on
 * the LID's own switch reach it).  Returns how many, or -1 (no memory).
 */
int64_t oo_eval_lost_pairs(const struct oo_eval_net *net, unsigned num_hosts);

/* Whether a is worse than b: more flows lost, or else lower efficiency. */
int oo_eval_worse(const struct oo_eval_score *a,
		  const struct oo_eval_score *b);

/* Shuffle order in place, the same way for the same seed everywhere. */
void oo_eval_shuffle(uint32_t *order, unsigned n, uint64_t seed);

/*
 * order (n hosts) into out with each run of hosts of equal key (key[host]:
 * the hosts of one leaf, next to each other in leaf order) kept together
 * and in its order, the runs shuffled as oo_eval_shuffle() shuffles their
 * starts (seed): a leaf order whose leaves come in another order.  run
 * holds n entries of scratch.  Returns the number of runs.
 */
unsigned oo_eval_shuffle_runs(const uint32_t *order, const uint32_t *key,
			      unsigned n, uint64_t seed, uint32_t *run,
			      uint32_t *out);

/*
 * The polish (osm_offset_polish.c): every round of the given cells held
 * in memory, the entry of a switch with hosts for one host LID moves to
 * another port whose path to it is as long where that lowers the busiest
 * link of the rounds of the steering cells it touches (or how many links
 * carry that load) and lowers no group of cells' efficiency (a group: the
 * mean of its cells), or, where no single move does, two entries of a
 * switch swap ports, until a pass moves nothing or work (links loaded)
 * reaches budget.  Then, on a budget as large again, such entries move
 * where that evens the route counts (per link, the flows of all ranks to
 * all ranks' LIDs that cross it: a random rank order loads links in
 * proportion to them) and changes no round of the steering cells for the
 * worse (nor adds a link at a round's busiest load) and lowers no group;
 * a sweep of the first kind follows each pass that moved.  Then, with a
 * loose_budget (0: not), entries move where that lowers the pairs of
 * flows one round of a random order may run over a link at once (two
 * flows of a round come from two ranks and go to two hosts; a flow's
 * LIDs over one link weigh as one more) and slows no round of the
 * steering cells (one more link at a round's busiest load is no loss
 * there) and lowers no group, until a pass moves nothing or the work of
 * this phase reaches loose_budget.  Where a group
 * is still below its floor (its efficiency at the start less its lead),
 * a last stage on a budget of its own may lower other groups down to
 * their floors to raise it; its moves are taken back where one stays
 * below.  Only the
 * entries of switches that hold one of the num_hosts hosts move, for LIDs no
 * neighbour's entry leads into them, to ports no traffic from another switch
 * leaves through: the tables stay free of credit loops if they were.
 * lft holds the same rows as net->lft, writable.  A flow whose LID leads
 * nowhere loads no link (counted in lost; its entries do not move).  The
 * cells that do not steer are held only where all of them fit in
 * max_entries link loads (one byte each) with the steering ones
 * (left_out counts them otherwise).  Nothing moves where the steering
 * cells do not fit (OO_POLISH_TOO_BIG) or a round loads a link with
 * nearly OO_POLISH_LOAD_BINS LIDs (OO_POLISH_HEAVY).  Returns 0, or -1
 * (no memory; the tables are as before).
 */
#define OO_POLISH_LOAD_BINS 128
#define OO_POLISH_MAX_HOPS 64
#define OO_POLISH_DONE 0
#define OO_POLISH_TOO_BIG 1
#define OO_POLISH_BUDGET 2
#define OO_POLISH_HEAVY 3

struct oo_polish_cell {
	const uint32_t *order;		/* host indices */
	unsigned n;
	int traffic;			/* LID offset, or OO_EVAL_SPREAD */
	unsigned group;			/* cells of one group (the orders of
					   one sample) count as one: the
					   mean of their efficiencies */
	int steer;			/* 0: a move must not lower it, but
					   does not seek to raise it */
	double lead;			/* the group's lead over its floor
					   at the start (below 0: it is
					   below its floor by as much); the
					   same in each cell of a group */
};

struct oo_polish_result {
	int status;			/* OO_POLISH_* */
	unsigned moved;			/* entries moved */
	unsigned balanced;		/* of them, to even the route
					   counts */
	unsigned parted;		/* of them, to part the routes one
					   round of a random order may run
					   over a link at once */
	unsigned swapped;		/* of them, in pairs that swap ports */
	unsigned rescued;		/* of them, in the last stage, where
					   some group was below its floor */
	unsigned undone;		/* moves of a last stage that left
					   some group below its floor, taken
					   back (not among those moved) */
	unsigned sweeps;
	unsigned kicks;			/* kicks tried (oo_polish_kicks()) */
	unsigned kicked;		/* of them, kept */
	unsigned movable;		/* switches with hosts, whose entries
					   may move */
	unsigned left_out;		/* cells that do not steer, left out */
	uint64_t held;			/* link loads held */
	uint64_t lost;			/* flows whose LID leads nowhere */
	uint64_t work;
	double eff_before;		/* the cells' efficiencies summed */
	double eff_after;
};

int oo_polish(const struct oo_eval_net *net, uint8_t *const *lft,
	      unsigned num_hosts, const struct oo_polish_cell *cells,
	      unsigned num_cells, uint64_t max_entries, uint64_t budget,
	      uint64_t loose_budget, struct oo_polish_result *res);

/*
 * oo_polish() with the entries toward the base LIDs kept as they are: only
 * those toward further LID offsets move (and swap), so every cell of base
 * LIDs scores as before.  For tables whose base LIDs are another engine's
 * and must stay so (the stock guard's tables with further offsets beside
 * stock's base LIDs).  At LMC 0 nothing moves.
 */
int oo_polish_offsets(const struct oo_eval_net *net, uint8_t *const *lft,
		      unsigned num_hosts, const struct oo_polish_cell *cells,
		      unsigned num_cells, uint64_t max_entries,
		      uint64_t budget, uint64_t loose_budget,
		      struct oo_polish_result *res);

/*
 * The route counts evened on tables the polish is done with: entries of
 * switches with hosts toward ranks' LIDs move to ports as short that the
 * polish may take (credit loops stay closed as oo_polish() keeps them)
 * where that lowers the sum of the squares of the route counts, slows no
 * round of the steering cells (more links at a round's busiest load are
 * no loss here) and lowers no group of cells; the cells' leads are
 * ignored.  Within budget link loads.  Returns 0 (res->balanced and
 * res->moved: the entries moved) or -1 (no memory) with the tables as
 * they were.
 */
int oo_polish_even(const struct oo_eval_net *net, uint8_t *const *lft,
		   unsigned num_hosts, const struct oo_polish_cell *cells,
		   unsigned num_cells, uint64_t max_entries, uint64_t budget,
		   struct oo_polish_result *res);

/*
 * The route counts over parallel cables evened on tables the polish is
 * done with: the entry of any switch (spines' too) toward a rank's LID
 * moves to another cable to the same switch where that lowers the sum
 * of the squares of the route counts, slows no round of the steering
 * cells (more links at a round's busiest load are no loss here) and
 * lowers no group of cells; the cells' leads are ignored.  The routes
 * cross the same switches as before, so they turn where they did: where
 * the switches' dependencies were free of loops, so are the cables'.
 * Within budget link loads.  Returns 0 (res->balanced and res->moved:
 * the entries moved) or -1 (no memory) with the tables as they were.
 */
int oo_polish_cables(const struct oo_eval_net *net, uint8_t *const *lft,
		     unsigned num_hosts, const struct oo_polish_cell *cells,
		     unsigned num_cells, uint64_t max_entries, uint64_t budget,
		     struct oo_polish_result *res);

/*
 * The same over the equally short ways to other neighbours: the entry of
 * any switch toward a rank's LID moves to a port toward another
 * neighbour whose way to the LID is as short (a spine's choice of core,
 * a line ASIC's of fabric ASIC), under the same rules, where the LID's
 * routes then close no cycle with the channel dependencies in cdg
 * (oo_cdg_init() of a net over the same tables, acyclic; it takes each
 * move's in, and those of the entries before stay, so the tables stay
 * free of cycles among every entry).  Returns as oo_polish_cables().
 */
struct oo_cdg;
int oo_polish_ways(const struct oo_eval_net *net, uint8_t *const *lft,
		   unsigned num_hosts, const struct oo_polish_cell *cells,
		   unsigned num_cells, uint64_t max_entries, uint64_t budget,
		   struct oo_cdg *cdg, struct oo_polish_result *res);

/* Whether some switch has two cables to one neighbour: else
   oo_polish_cables() has nothing to move. */
int oo_polish_has_cables(const struct oo_eval_net *net);

/*
 * Iterated local search on tables the polish is done with: up to kicks
 * times, a few entries of switches with hosts toward LIDs of offset
 * first_offset or above, on links at their rounds' busiest load, move at
 * random to other ports as short that the polish may take (so credit
 * loops stay closed as oo_polish() keeps them), then the polish's sweeps
 * mend what that lowered; the moves stay where no group of cells ends
 * lower than before the kick and the steering cells gained, else they
 * are taken back.  The random numbers are the same on every run, so the
 * same tables and cells give the same tables.  Each cell's lead is
 * ignored: no group may drop.  Returns 0 (res->kicked: the kicks kept,
 * res->moved: the entries they moved) or -1 (no memory) with the tables
 * as they were.
 */
int oo_polish_kicks(const struct oo_eval_net *net, uint8_t *const *lft,
		    unsigned num_hosts, const struct oo_polish_cell *cells,
		    unsigned num_cells, uint64_t max_entries, uint64_t budget,
		    unsigned kicks, unsigned first_offset,
		    struct oo_polish_result *res);

/*
 * Whether a node description is a SHARP aggregation node's (a CA on a
 * switch ASIC that is no compute host): "Mellanox Technologies
 * Aggregation Node", any case, with or without a host-name prefix.
 */
int oo_is_aggregation_node(const char *desc);

/*
 * The fat tree inside a fabric (osm_offset_rank.c), on a compact graph of
 * the switches: their healthy links to other switches, by port, and how
 * many hosts (CA ports that run jobs: no SHARP aggregation nodes) hang off
 * each.
 */
#define OO_NO_LEVEL 0xffffU
#define OO_MAX_LEVELS 64

struct oo_rank_link {
	uint32_t to;		/* index of the switch behind */
	uint8_t port;		/* port of this switch */
};

struct oo_rank_graph {
	unsigned num_sw;
	unsigned stride;	/* more than any port number */
	const unsigned *first;	/* links of s: link[first[s]] up to
				   link[first[s + 1]], by port number */
	const struct oo_rank_link *link;
	const unsigned *hosts;	/* per switch */
	const unsigned *order;	/* per switch: position by name, then
				   GUID; breaks ties between switches wired
				   alike */
	int design_lanes;	/* size each level's lanes by its design
				   (oo_design_lanes()), not its widest
				   trunk */
};

struct oo_rank_tree {
	unsigned num_levels;
	unsigned *level;	/* per switch: hops to the nearest leaf, or
				   OO_NO_LEVEL */
	unsigned *rank;		/* per switch: position in its level */
	unsigned *slots;	/* per switch: its up slots */
	int16_t *slot;		/* num_sw * stride: the up slot a port
				   fills, -1 for none */
	unsigned level_trunks[OO_MAX_LEVELS];	/* lanes: most parallel
						   links, or the design */
	unsigned level_widest[OO_MAX_LEVELS];	/* most parallel links */
	unsigned level_parents[OO_MAX_LEVELS];	/* most nominal parents */
	unsigned level_slots[OO_MAX_LEVELS];	/* most slots of a switch */
	uint64_t divisor[OO_MAX_LEVELS];
	/* scratch */
	unsigned *parents, *parent_first, *num_parents_of, *seen, *nominal;
	unsigned *peer, peer_lanes;
	unsigned stamp;
};

/*
 * Find the tree: leaves (switches with hosts, less spine-like ones that
 * have more cables to host switches than hosts, e.g. management HCAs on a
 * spine, or a quarter of a typical leaf's hosts or fewer and at least as
 * many cables to switches with more than that as hosts, e.g. a management
 * HCA on a director's line ASIC over one edge, and core-like ones with a
 * quarter of a typical leaf's hosts or fewer whose neighbours lead down
 * to several groups of leaves, e.g. management HCAs on a core switch of a
 * three-level tree), levels (hops to the nearest leaf), ranks within
 * each level (top down, by the ranks of each switch's parents, then
 * order), up slots and the level divisors of the coordinated rule.
 *
 * Up slots: slot = lane x P + position of the parent among the nominal
 * parents, P the most of the level.  A switch with at most half the
 * level's slots numbers the lanes most of its peers are cabled to (the
 * switches of its level that share most of its parents), lane by lane,
 * with holes for the cables it misses and no slot for a cable most of
 * them lack, so that the peers have the same slots: pod spines cabled to
 * a window of the cores.  One with at most half of that too, or a leaf
 * whose design falls short of the level's slots (a tapered edge), numbers
 * its own links 0, 1, ...
 *
 * Returns 0, or -1 (no memory, deeper than OO_MAX_LEVELS) with nothing
 * left allocated.
 */
int oo_rank_tree(const struct oo_rank_graph *g, struct oo_rank_tree *t);

/*
 * The lanes a level is designed with: the most parallel links that at
 * least two thirds of its trunks (the links of a switch to one parent)
 * have, from trunks[w] = how many trunks have exactly w links, w = 0 ..
 * widest.  Cables doubled by hand on some trunks (a third of them, say)
 * then add capacity to the lanes of the design instead of lanes of their
 * own, which most switches would leave dead.  0 when there are no trunks.
 */
unsigned oo_design_lanes(const unsigned *trunks, unsigned widest);
void oo_rank_tree_free(struct oo_rank_tree *t);

/*
 * The leaves as oo_rank_tree() finds them: leaf[s] = 1 for a switch with
 * hosts that is neither spine-like nor core-like (g->order is not read).
 * Returns 0, or -1 with no memory.
 */
int oo_rank_leaves(const struct oo_rank_graph *g, uint8_t *leaf);

/*
 * The switches whose hosts run jobs (the stock guard's rank orders):
 * job[s] = 1 for a leaf (oo_rank_leaves()), not for a spine or core with
 * management HCAs on it; where fewer than two leaves have hosts, for
 * every switch with hosts (a job on those would not cross the fabric:
 * two switches joined by a trunk, one host on the one the ranking takes
 * for a spine).  Returns 0, or -1 with no memory.
 */
int oo_rank_job_switches(const struct oo_rank_graph *g, uint8_t *job);

/*
 * Compare two node descriptions the way people sort host names: runs of
 * digits compare by value ("h9" < "h10").  Returns <0, 0 or >0.
 */
int oo_natural_cmp(const char *a, const char *b);

/*
 * Reach every LID (osm_offset_reach.c).  Up/down routing leaves a switch
 * without an LFT entry for a CA it could only reach down and up again (a
 * management HCA or SHARP node on a spine).  oo_reach_fill() gives each
 * such LID one turn switch that reaches it, chosen for the fewest hops in
 * all, and sends the LID from every switch without an entry the way that
 * switch sends the turn switch's own LID: first from the switches traffic
 * from HCAs runs into (and those on their way), then from those traffic
 * from SHARP aggregation nodes (dest_minor) runs into, then from every
 * other one; in each pass the HCAs' LIDs first.
 * The fills stay only where the channel dependencies of all the tables
 * stay acyclic (no credit loop): all of them if they can, else those of
 * each destination that keep them so, in destination order.  The fills
 * change no entry that was there.  oo_reach_fill_vls() then, with
 * LMC > 0, has a LID that some HCA's traffic still cannot get to (a SHARP
 * node's LID: some CA's), where another LID of the same port reaches more
 * of them, take that LID's entries at every switch (its channel
 * dependencies are then ones the tables have already).
 */
#define OO_LFT_NONE 0xff	/* no entry: OpenSM's OSM_NO_PATH */

struct oo_reach_net {
	unsigned num_sw;
	unsigned stride;		/* more than any port number */
	const uint32_t *next;		/* num_sw * stride: switch behind
					   each port, or OO_EVAL_NONE */
	const uint8_t *rport;		/* num_sw * stride: its port there */
	uint8_t *const *lft;		/* per switch: port by LID */
	const unsigned *lft_len;	/* per switch: LIDs in its lft */
	const uint16_t *sw_lid;		/* per switch: its LID, 0 if none */
	unsigned num_dests;		/* CA ports */
	const uint32_t *dest_sw;	/* per CA port: its switch */
	const uint8_t *dest_port;	/* per CA port: that switch's port */
	const uint16_t *dest_lid;	/* per CA port: base LID */
	const uint8_t *dest_minor;	/* per CA port: 1 for a SHARP
					   aggregation node, whose holes are
					   filled after every HCA's; NULL:
					   none is */
	unsigned lids_per_port;		/* 2^LMC */
};

struct oo_reach_result {
	unsigned lids;		/* LIDs some switch had no entry for */
	unsigned filled;	/* entries filled */
	unsigned left;		/* entries left empty */
	unsigned left_ca;	/* of them, where traffic from a CA runs in */
	int cyclic;		/* all fills at once would close a loop */
	unsigned layered;	/* routes (switch, LID) put on an SL above 0 */
	unsigned top_sl;	/* the highest SL given to a route */
	unsigned borrowed;	/* LIDs that took the routes of another
				   LID of their port */
};

/* Returns 0, or -1 (no memory) with the tables as they were. */
int oo_reach_fill(const struct oo_reach_net *net,
		  struct oo_reach_result *res);

/*
 * oo_reach_fill() without its retry round (the holes SHARP nodes' traffic
 * runs into that their LIDs' best turn switches leave, filled toward the
 * next best ones, and where no turn switch takes every hole of a LID,
 * each hole toward one of its own): what the stock guard weighs candidate
 * tables by.  The round takes turns from a longer list in a greedy order,
 * and one LID more or less left after it is no measure of the tables; it
 * only adds fills, so the tables the guard keeps end with no more holes
 * than it counted.  Returns as oo_reach_fill().
 */
int oo_reach_fill_no_retry(const struct oo_reach_net *net,
			   struct oo_reach_result *res);

/*
 * The SL of the route from each switch to each LID, where the reach pass
 * put routes on virtual lanes above VL0 (SL n travels on VL n).  A LID
 * without a row, and every route of a row left at 0, stays on VL0.
 */
#define OO_MAX_REACH_VLS 8
#define OO_SL_NO_ROW UINT32_MAX

struct oo_sl_map {
	unsigned num_sw;
	unsigned max_lid;	/* LIDs row covers */
	uint32_t *row;		/* per LID: its row in sl, or OO_SL_NO_ROW */
	uint8_t *sl;		/* num_rows rows of num_sw SLs */
	unsigned num_rows;
	unsigned max_rows;
};

/*
 * oo_reach_fill() with up to vls virtual lanes (1..OO_MAX_REACH_VLS): the
 * pass as OpenSM runs it.  After the loop-free passes on VL0, each hole
 * left that traffic from a CA runs into gets one entry where that closes
 * no loop: the port to a neighbouring switch that delivers the LID (a
 * turn switch's fills take the port the hole sends the switch's own LID
 * by, and the other of a doubled cable is a channel of its own).
 * oo_reach_fill() and oo_reach_fill_no_retry(), the stock guard's
 * measures but with the option leaf_shuffles, leave this step out, so the
 * tables the guard keeps gain entries by it (the lending below may then
 * differ).  Then each LID still with holes is filled toward a turn switch
 * all the same, and every route that only the new entries deliver (from a
 * switch that did not reach the LID before) is given the lowest SL above
 * 0 on whose lane the dependencies of the routes given it stay acyclic.
 * A LID whose new routes do not all find a lane gets no fill.  The
 * routes that reached the LID before keep their way and VL0.  map (empty
 * on entry; oo_sl_map_free() it) gets the SLs.  vls 1: no layered pass.
 * Last, at LMC > 0, a LID still short of some HCA (a SHARP
 * node's LID: of some CA) takes the entries of the LID of its port that
 * reaches the most, where that reaches more (none with routes above VL0
 * lends or takes): the pass on the tables that stay.  oo_reach_fill() and
 * the guard's measures leave that out: a candidate that needs it to reach
 * every LID gives up the spread of those LIDs, and the guard weighs it
 * as losing them.  Returns 0, or -1 (no memory) with the tables as they
 * were and map empty.
 */
int oo_reach_fill_vls(const struct oo_reach_net *net, unsigned vls,
		      struct oo_reach_result *res, struct oo_sl_map *map);

/* The SL of the route from switch sw to lid (0 outside the map). */
uint8_t oo_sl_map_get(const struct oo_sl_map *map, uint32_t sw,
		      unsigned lid);
void oo_sl_map_free(struct oo_sl_map *map);

/*
 * Whether the channel dependencies of the tables (every LID from every
 * switch) have no cycle: 1 acyclic, 0 a cycle, -1 no memory.
 */
int oo_reach_acyclic(const struct oo_reach_net *net);

/*
 * The channel dependencies of the tables with a topological order of the
 * channels, kept as LIDs' dependencies are added (osm_offset_cdg.c).
 */
struct oo_cdg {
	const struct oo_reach_net *net;
	unsigned stride;
	size_t nodes;		/* channels: switch * stride + in port */
	uint8_t *bits;		/* per channel: out ports it waits for */
	uint32_t *ord;		/* per channel: its position */
	uint32_t *at;		/* per position: its channel */
	uint32_t *seen;		/* search stamps */
	uint32_t stamp;
	uint32_t *fwd, *bwd, *stack;	/* search scratch */
	size_t *added;		/* bits the last oo_cdg_add_lid() set */
	size_t num_added, max_added;
};

/*
 * The dependencies of net's tables as they are: 1 ordered (acyclic), 0 a
 * cycle (free it all the same), -1 no memory (nothing left allocated).
 */
int oo_cdg_init(struct oo_cdg *g, const struct oo_reach_net *net);

/*
 * Add the dependencies of the routes of lid as the tables now have them:
 * 1 done (still acyclic), 0 they would close a cycle (none added), -1 no
 * memory (none added).
 */
int oo_cdg_add_lid(struct oo_cdg *g, unsigned lid);

/*
 * Whether the channel dependencies of the routes the CAs' traffic takes
 * have no cycle: from every switch a CA port hangs off toward every LID of
 * every CA port, as the tables have them (lft-analyze --credit-loops
 * traffic, on one lane).  1 acyclic, 0 a cycle, -1 no memory.
 */
int oo_cdg_ca_routes_acyclic(const struct oo_reach_net *net);

/* No dependencies yet: 0, or -1 (no memory, nothing left allocated). */
int oo_cdg_init_empty(struct oo_cdg *g, const struct oo_reach_net *net);

/*
 * Routes one at a time, taken back together: oo_cdg_begin() starts a set,
 * oo_cdg_add_route() adds the dependencies of the route from switch s to
 * lid as the tables have it (1 done, 0 it would close a cycle, -1 no
 * memory: that route's taken back, the set's earlier ones kept), and
 * oo_cdg_rollback() takes back every route added since oo_cdg_begin().
 */
void oo_cdg_begin(struct oo_cdg *g);
int oo_cdg_add_route(struct oo_cdg *g, uint32_t s, unsigned lid);
void oo_cdg_rollback(struct oo_cdg *g);
void oo_cdg_free(struct oo_cdg *g);

#endif				/* OSMOFFSET_H */
