/*
 * Check unit tests of osmoffset's option parser and port-selection rule,
 * driven directly, without OpenSM.
 *
 * Copyright (c) 2026 The osmoffset authors.
 */

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmoffset.h"

#define MAX_PORTS 16
#define MAX_DESTS 16
#define MAX_LIDS 8

/*
 * A tiny model of one switch, routing the way osm_ucast_offset.c does:
 * for each LID offset, for each destination in order, gather the usable
 * candidate ports with their path counts and remote-node reuse, and let
 * the rule choose.  remote[] names the node behind each port (trunks share
 * one), down[] marks ports that are not usable.
 */
struct model {
	unsigned num_ports;	/* ports 1..num_ports */
	unsigned remote[MAX_PORTS + 1];
	int down[MAX_PORTS + 1];
	uint32_t paths[MAX_PORTS + 1];
	uint32_t offset_paths[MAX_LIDS][MAX_PORTS + 1];
	unsigned used_remote[MAX_DESTS][MAX_LIDS];
	uint8_t lft[MAX_DESTS][MAX_LIDS];
};

static void model_init(struct model *m, unsigned num_ports)
{
	unsigned p;

	memset(m, 0, sizeof(*m));
	m->num_ports = num_ports;
	for (p = 1; p <= num_ports; p++)
		m->remote[p] = p;
}

static uint8_t model_route(struct model *m, unsigned dest, unsigned offset)
{
	struct oo_candidate cand[MAX_PORTS];
	unsigned n = 0, p, j;
	int pick;

	for (p = 1; p <= m->num_ports; p++) {
		if (m->down[p])
			continue;
		cand[n].port = p;
		cand[n].paths = m->paths[p];
		cand[n].offset_paths = m->offset_paths[offset][p];
		cand[n].reuse = 0;
		for (j = 0; j < offset; j++)
			if (m->used_remote[dest][j] == m->remote[p])
				cand[n].reuse++;
		n++;
	}
	pick = oo_select_candidate(cand, n, oo_rotation_start(cand, n));
	if (pick < 0)
		return 255;
	p = cand[pick].port;
	m->paths[p]++;
	m->offset_paths[offset][p]++;
	m->used_remote[dest][offset] = m->remote[p];
	return p;
}

/* OpenSM 3.3.23's order: every base LID first, then each offset. */
static void model_route_base_first(struct model *m, unsigned dests,
				   unsigned lids)
{
	unsigned d, o;

	for (o = 0; o < lids; o++)
		for (d = 0; d < dests; d++)
			m->lft[d][o] = model_route(m, d, o);
}

/* The order of the seed e-mail: all LIDs of one port, then the next. */
static void model_route_port_by_port(struct model *m, unsigned dests,
				     unsigned lids)
{
	unsigned d, o;

	for (d = 0; d < dests; d++)
		for (o = 0; o < lids; o++)
			m->lft[d][o] = model_route(m, d, o);
}

static void cands(struct oo_candidate *c, const uint32_t *paths, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		c[i].port = i + 1;
		c[i].paths = paths[i];
		c[i].offset_paths = 0;
		c[i].reuse = 0;
	}
}

/* ------------------------------------------------------------------ */

START_TEST(rotation_start_follows_paths_routed)
{
	struct oo_candidate c[4];
	static const uint32_t zero[4] = { 0, 0, 0, 0 };
	static const uint32_t one[4] = { 1, 1, 1, 1 };
	static const uint32_t seven[4] = { 2, 2, 2, 1 };
	static const uint32_t many[4] = { 4, 4, 4, 4 };

	cands(c, zero, 4);
	ck_assert_uint_eq(oo_rotation_start(c, 4), 0);
	cands(c, one, 4);
	ck_assert_uint_eq(oo_rotation_start(c, 4), 1);
	cands(c, seven, 4);
	ck_assert_uint_eq(oo_rotation_start(c, 4), 1);
	cands(c, many, 4);
	ck_assert_uint_eq(oo_rotation_start(c, 4), 0);	/* 16/4 = 4, mod 4 */
	ck_assert_uint_eq(oo_rotation_start(c, 0), 0);
}
END_TEST

START_TEST(select_prefers_least_loaded)
{
	struct oo_candidate c[4];
	static const uint32_t paths[4] = { 3, 1, 2, 1 };

	cands(c, paths, 4);
	ck_assert_int_eq(oo_select_candidate(c, 4, 0), 1);
	/* tie between index 1 and 3: the first met from the start wins */
	ck_assert_int_eq(oo_select_candidate(c, 4, 2), 3);
	ck_assert_int_eq(oo_select_candidate(c, 4, 3), 3);
	ck_assert_int_eq(oo_select_candidate(c, 4, 0), 1);
	ck_assert_int_eq(oo_select_candidate(c, 0, 0), -1);
}
END_TEST

START_TEST(select_prefers_unused_remote_node)
{
	struct oo_candidate c[3];
	static const uint32_t paths[3] = { 0, 5, 9 };

	cands(c, paths, 3);
	c[0].reuse = 1;		/* least loaded, but its node is used */
	c[1].reuse = 1;
	ck_assert_int_eq(oo_select_candidate(c, 3, 0), 2);
	c[2].reuse = 2;
	ck_assert_int_eq(oo_select_candidate(c, 3, 0), 0);
}
END_TEST

/*
 * The seed e-mail's example: LMC 2, ports A..D with LIDs 1-4, 5-8, 9-12,
 * 13-16, through 4 equal switch ports (4 parallel links to one switch: all
 * candidates share one remote node).  Offsetting must give exactly the
 * table the e-mail asks for:
 *	switch port 1: 1, 8, 11, 14
 *	switch port 2: 2, 5, 12, 15
 *	switch port 3: 3, 6, 9,  16
 *	switch port 4: 4, 7, 10, 13
 */
static const uint8_t seed_table[4][4] = {
	{ 1, 2, 3, 4 },		/* LIDs 1..4 */
	{ 2, 3, 4, 1 },		/* LIDs 5..8 */
	{ 3, 4, 1, 2 },		/* LIDs 9..12 */
	{ 4, 1, 2, 3 },		/* LIDs 13..16 */
};

static void seed_model(struct model *m)
{
	unsigned p;

	model_init(m, 4);
	for (p = 1; p <= 4; p++)
		m->remote[p] = 100;
}

static void assert_seed_table(const struct model *m)
{
	unsigned d, o;

	for (d = 0; d < 4; d++)
		for (o = 0; o < 4; o++)
			ck_assert_msg(m->lft[d][o] == seed_table[d][o],
				      "LID %u: port %u, want %u",
				      d * 4 + o + 1, m->lft[d][o],
				      seed_table[d][o]);
}

/* In the e-mail's order: all LIDs of one port, then the next port. */
START_TEST(seed_example_port_by_port)
{
	struct model m;

	seed_model(&m);
	model_route_port_by_port(&m, 4, 4);
	assert_seed_table(&m);
}
END_TEST

/* In OpenSM 3.3.23's order, all base LIDs first: the same table. */
START_TEST(seed_example_base_first)
{
	struct model m;

	seed_model(&m);
	model_route_base_first(&m, 4, 4);
	assert_seed_table(&m);
}
END_TEST

/* Every LMC 0..3: base LIDs, and each offset, spread within one. */
START_TEST(every_offset_spreads_evenly)
{
	unsigned lmc = (unsigned)_i;
	unsigned lids = 1U << lmc, dests = 11, ports = 4;
	struct model m;
	unsigned o, d, p;

	model_init(&m, ports);
	model_route_base_first(&m, dests, lids);
	for (o = 0; o < lids; o++) {
		unsigned count[MAX_PORTS + 1] = { 0 }, lo = ~0U, hi = 0;

		for (d = 0; d < dests; d++)
			count[m.lft[d][o]]++;
		for (p = 1; p <= ports; p++) {
			lo = count[p] < lo ? count[p] : lo;
			hi = count[p] > hi ? count[p] : hi;
		}
		ck_assert_msg(hi - lo <= 1, "LMC %u offset %u: spread %u",
			      lmc, o, hi - lo);
	}
	for (p = 2; p <= ports; p++) {
		int diff = (int)m.paths[p] - (int)m.paths[1];

		ck_assert_msg(diff >= -1 && diff <= 1, "LMC %u: total %u vs %u",
			      lmc, m.paths[p], m.paths[1]);
	}
}
END_TEST

/* Same-offset load decides before total load. */
START_TEST(select_balances_each_offset_first)
{
	struct oo_candidate c[3];
	static const uint32_t paths[3] = { 1, 4, 4 };

	cands(c, paths, 3);
	c[0].offset_paths = 1;
	ck_assert_int_eq(oo_select_candidate(c, 3, 0), 1);
	c[1].offset_paths = 1;
	ck_assert_int_eq(oo_select_candidate(c, 3, 0), 2);
	c[2].offset_paths = 1;
	ck_assert_int_eq(oo_select_candidate(c, 3, 0), 0);
}
END_TEST

START_TEST(down_port_is_never_chosen)
{
	struct model m;
	unsigned d, o, count[6] = { 0 };

	model_init(&m, 5);
	m.down[3] = 1;
	model_route_base_first(&m, 8, 2);
	for (d = 0; d < 8; d++)
		for (o = 0; o < 2; o++) {
			ck_assert_uint_ne(m.lft[d][o], 3);
			count[m.lft[d][o]]++;
		}
	/* 16 paths over the 4 live ports: 4 each */
	ck_assert_uint_eq(count[1], 4);
	ck_assert_uint_eq(count[2], 4);
	ck_assert_uint_eq(count[4], 4);
	ck_assert_uint_eq(count[5], 4);
}
END_TEST

/*
 * Two trunks of two links to two spines (ports 1,2 -> spine 10; ports
 * 3,4 -> spine 20), LMC 1: the two LIDs of each destination must go
 * through different spines, and base LIDs still spread over all 4 ports.
 */
START_TEST(lmc_paths_take_different_remote_nodes)
{
	struct model m;
	unsigned d, count[5] = { 0 };

	model_init(&m, 4);
	m.remote[1] = m.remote[2] = 10;
	m.remote[3] = m.remote[4] = 20;
	model_route_base_first(&m, 8, 2);
	for (d = 0; d < 8; d++) {
		ck_assert_uint_ne(m.remote[m.lft[d][0]], m.remote[m.lft[d][1]]);
		count[m.lft[d][0]]++;
	}
	ck_assert_uint_eq(count[1], 2);
	ck_assert_uint_eq(count[2], 2);
	ck_assert_uint_eq(count[3], 2);
	ck_assert_uint_eq(count[4], 2);
}
END_TEST

START_TEST(no_candidate_gives_no_path)
{
	struct model m;

	model_init(&m, 2);
	m.down[1] = m.down[2] = 1;
	ck_assert_uint_eq(model_route(&m, 0, 0), 255);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The coordinated rule                                               */

START_TEST(divisors_multiply_parents)
{
	static const unsigned parents[4] = { 4, 3, 0, 7 };
	uint64_t div[4];

	oo_level_divisors(parents, 4, div);
	ck_assert_uint_eq(div[0], 1);
	ck_assert_uint_eq(div[1], 4);
	ck_assert_uint_eq(div[2], 12);
	ck_assert_uint_eq(div[3], 12);	/* a level without parents counts 1 */
}
END_TEST

START_TEST(divisors_saturate)
{
	static const unsigned slots[3] = { 1U << 20, 1U << 20, 2 };
	uint64_t div[3];

	oo_level_divisors(slots, 3, div);
	ck_assert_uint_eq(div[1], 1U << 20);
	ck_assert_uint_eq(div[2], 1ULL << 32);
}
END_TEST

/*
 * 2-ary 3-tree, hand-checked: up slots per level {2, 2}, divisors {1, 2}.
 * Destination rank 5 = binary 101: its leaf-level digit is 1, its
 * middle-level digit is 0.  LID offset 1 rotates every digit by one.
 */
START_TEST(coordinated_slots_are_digits_of_the_rank)
{
	ck_assert_uint_eq(oo_coordinated_slot(5, 1, 0, 2), 1);
	ck_assert_uint_eq(oo_coordinated_slot(5, 2, 0, 2), 0);
	ck_assert_uint_eq(oo_coordinated_slot(5, 1, 1, 2), 0);
	ck_assert_uint_eq(oo_coordinated_slot(5, 2, 1, 2), 1);
	/* 18 up slots at a leaf of a 648-host tree: rank 40 -> 40 mod 18 */
	ck_assert_uint_eq(oo_coordinated_slot(40, 1, 0, 18), 4);
	ck_assert_uint_eq(oo_coordinated_slot(40, 18, 0, 18), 2);
	ck_assert_uint_eq(oo_coordinated_slot(40, 18, 3, 18), 5);
	ck_assert_uint_eq(oo_coordinated_slot(7, 0, 0, 0), 0);
}
END_TEST

START_TEST(offset_slots_stay_in_aligned_blocks)
{
	unsigned slots, lids, base, o, other;

	/* 16 up slots (4 spines x 4 links), LMC 1 and 2 */
	ck_assert_uint_eq(oo_offset_slot(5, 0, 2, 16), 5);
	ck_assert_uint_eq(oo_offset_slot(5, 1, 2, 16), 4);
	ck_assert_uint_eq(oo_offset_slot(6, 3, 4, 16), 5);
	ck_assert_uint_eq(oo_offset_slot(15, 1, 4, 16), 12);
	/* 18 slots: pairs are aligned blocks, fours are not */
	ck_assert_uint_eq(oo_offset_slot(17, 1, 2, 18), 16);
	ck_assert_uint_eq(oo_offset_slot(17, 2, 4, 18), 1);
	ck_assert_uint_eq(oo_offset_slot(3, 0, 1, 0), 0);

	for (slots = 1; slots <= 18; slots++)
		for (lids = 2; lids <= slots && lids <= 8; lids *= 2)
			for (base = 0; base < slots; base++) {
				unsigned mine = 0, theirs;

				for (o = 0; o < lids; o++)
					mine |= 1U << oo_offset_slot(base, o,
								     lids,
								     slots);
				/* distinct slots for the LIDs of one port */
				ck_assert_uint_eq(__builtin_popcount(mine),
						  lids);
				if (slots % lids)
					continue;
				/* two ports share all their slots or none */
				for (other = 0; other < slots; other++) {
					theirs = 0;
					for (o = 0; o < lids; o++)
						theirs |= 1U << oo_offset_slot(
						    other, o, lids, slots);
					ck_assert(theirs == mine ||
						  !(theirs & mine));
				}
			}
}
END_TEST

START_TEST(stride_slots_spread_a_ports_lids_around_the_ring)
{
	unsigned slots, lids, base, o;

	/* 6 tapered uplinks, LMC 2: 0, 2, 3, 5 steps on, not 0-3 */
	ck_assert_uint_eq(oo_stride_slot(4, 0, 4, 6), 4);
	ck_assert_uint_eq(oo_stride_slot(4, 1, 4, 6), 0);
	ck_assert_uint_eq(oo_stride_slot(4, 2, 4, 6), 1);
	ck_assert_uint_eq(oo_stride_slot(4, 3, 4, 6), 3);
	/* 9 uplinks, LMC 1: the other LID 5 steps on */
	ck_assert_uint_eq(oo_stride_slot(7, 1, 2, 9), 3);
	/* where lids divide the slots: the aligned blocks */
	ck_assert_uint_eq(oo_stride_slot(6, 3, 4, 16),
			  oo_offset_slot(6, 3, 4, 16));
	ck_assert_uint_eq(oo_stride_slot(3, 1, 0, 0), 0);

	for (slots = 1; slots <= 40; slots++)
		for (lids = 2; lids <= 8; lids *= 2)
			for (base = 0; base < slots; base++) {
				unsigned seen[40] = { 0 };

				for (o = 0; o < lids; o++)
					seen[oo_stride_slot(base, o, lids,
							    slots)]++;
				/* as many distinct slots as there are, and
				   no slot twice before every one has a LID */
				for (o = 0; o < slots; o++)
					ck_assert_uint_le(seen[o],
							  (lids + slots - 1) /
							  slots);
			}
}
END_TEST

START_TEST(offsets_beside_base_take_the_next_neighbours)
{
	/* var-2l-12x6-degraded: a leaf's 5 spines (switch indices), all
	   as short toward a host; the stock base LID leaves by spine 31 */
	const uint32_t five[] = { 12, 17, 23, 31, 40 };
	/* a leaf short of the cable to spine 23 */
	const uint32_t four[] = { 12, 17, 31, 40 };
	unsigned o, n, b;

	ck_assert_int_eq(oo_beside_base(five, 5, 31, 0), 3);
	ck_assert_int_eq(oo_beside_base(five, 5, 31, 1), 4);
	ck_assert_int_eq(oo_beside_base(five, 5, 31, 2), 0);
	ck_assert_int_eq(oo_beside_base(five, 5, 31, 3), 1);
	ck_assert_int_eq(oo_beside_base(four, 4, 17, 1), 2);
	ck_assert_int_eq(oo_beside_base(four, 4, 17, 3), 0);
	/* the base LID's neighbour is not among them, or there are none */
	ck_assert_int_eq(oo_beside_base(four, 4, 23, 1), -1);
	ck_assert_int_eq(oo_beside_base(five, 0, 12, 1), -1);
	/* the LIDs of a port leave by distinct neighbours while there are
	   as many neighbours as LIDs, and wrap around where fewer */
	for (n = 1; n <= 5; n++)
		for (b = 0; b < n; b++) {
			unsigned seen = 0;

			for (o = 0; o < 4; o++)
				seen |= 1U << oo_beside_base(five, n, five[b],
							     o);
			ck_assert_uint_eq(seen, n >= 4 ? (n == 4 ? 0xfU :
			    (1U << b | 1U << (b + 1) % 5 | 1U << (b + 2) % 5 |
			     1U << (b + 3) % 5)) : (1U << n) - 1);
		}
}
END_TEST

START_TEST(ring_offsets_keep_the_lane_and_spread_the_parents)
{
	unsigned lanes, parents, lids, base, o;

	/* the NDR dump's edges: 9 spines x 2 lanes, LMC 2: the base LID's
	   lane, spines 3, 5 and 7 further on (not the next three slots) */
	ck_assert_uint_eq(oo_ring_offset_slot(7, 1, 4, 18, 9), 1);
	ck_assert_uint_eq(oo_ring_offset_slot(7, 2, 4, 18, 9), 3);
	ck_assert_uint_eq(oo_ring_offset_slot(7, 3, 4, 18, 9), 5);
	ck_assert_uint_eq(oo_ring_offset_slot(16, 1, 4, 18, 9), 10);
	/* one lane: the ring of slots */
	ck_assert_uint_eq(oo_ring_offset_slot(4, 1, 4, 6, 6),
			  oo_stride_slot(4, 1, 4, 6));
	/* lids divide the slots, fewer parents than LIDs, or no lane
	   order: side by side */
	ck_assert_uint_eq(oo_ring_offset_slot(5, 1, 2, 18, 9),
			  oo_offset_slot(5, 1, 2, 18));
	ck_assert_uint_eq(oo_ring_offset_slot(2, 3, 4, 6, 3),
			  oo_offset_slot(2, 3, 4, 6));
	ck_assert_uint_eq(oo_ring_offset_slot(7, 1, 4, 18, 0),
			  oo_offset_slot(7, 1, 4, 18));

	for (lanes = 2; lanes <= 4; lanes++)
		for (parents = 1; parents <= 12; parents++)
			for (lids = 2; lids <= 8; lids *= 2)
				for (base = 0; base < lanes * parents;
				     base++) {
					unsigned mine = 0, slot;

					if ((lanes * parents) % lids == 0 ||
					    parents < lids)
						continue;
					for (o = 0; o < lids; o++) {
						slot = oo_ring_offset_slot(
						    base, o, lids,
						    lanes * parents, parents);
						/* the base LID's lane */
						ck_assert_uint_eq(
						    slot / parents,
						    base / parents);
						mine |= 1U << (slot % parents);
					}
					/* a parent of its own for each LID */
					ck_assert_uint_eq(
					    __builtin_popcount(mine), lids);
				}
}
END_TEST

START_TEST(offset_detour_keeps_off_the_ports_own_switches)
{
	const uint8_t live[4] = { 1, 1, 0, 1 };
	const uint32_t load[4] = { 5, 3, 9, 3 };
	uint8_t avoid[4] = { 0, 0, 0, 0 };
	const uint8_t dead[4] = { 0, 0, 0, 0 };

	/* least loaded; of slots 3 and 1 (3 paths each) the first after 2 */
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, NULL, load, 4, 2), 3);
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, NULL, load, 4, 0), 1);
	/* another LID is to take slot 3 */
	avoid[3] = 1;
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, NULL, load, 4, 2), 1);
	/* every live slot taken by some LID: keep off the earlier ones */
	avoid[0] = 1;
	avoid[1] = 2;
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, NULL, load, 4, 2), 3);
	avoid[1] = 1;
	avoid[3] = 2;
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, NULL, load, 4, 2), 1);
	/* all taken by earlier LIDs: least loaded again */
	avoid[0] = avoid[1] = 2;
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, NULL, load, 4, 2), 3);
	ck_assert_int_eq(oo_window_detour_slot(dead, avoid, NULL, load, 4, 2), -1);
}
END_TEST

START_TEST(offset_detour_weighs_nearby_ranks_first)
{
	const uint8_t live[4] = { 1, 1, 0, 1 };
	const uint32_t load[4] = { 5, 3, 9, 3 };
	uint32_t near[4] = { 1, 2, 0, 2 };
	uint8_t avoid[4] = { 0, 0, 0, 0 };

	/* the fewest LIDs of nearby ranks beats the least loaded port */
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, near, load, 4, 2),
			 0);
	/* even near: least loaded, then the first after base */
	near[0] = 2;
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, near, load, 4, 2),
			 3);
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, near, load, 4, 0),
			 1);
	/* avoid still comes first: slot 0 is another LID's */
	near[0] = 0;
	avoid[0] = 1;
	ck_assert_int_eq(oo_window_detour_slot(live, avoid, near, load, 4, 2),
			 3);
}
END_TEST

/*
 * LMC-spread traffic on a model 2-level tree numbered like the plugin
 * numbers it: up slot lane * S + spine, the spine taking the same lane
 * down.  Each LID carries 1/lids of a flow; with the offsets in aligned
 * blocks no link may carry more than one flow's worth in any round.
 */
static void check_two_level_spread(unsigned L, unsigned S, unsigned T,
				   unsigned lids)
{
	unsigned H = S * T, N = L * H, k, i, o;

	for (k = 1; k < N; k++) {
		unsigned up[64][16] = { { 0 } }, down[64][16] = { { 0 } };

		for (i = 0; i < N; i++) {
			unsigned dst = (i + k) % N, sl = i / H, dl = dst / H;

			if (sl == dl)
				continue;
			for (o = 0; o < lids; o++) {
				unsigned slot = oo_offset_slot(
				    oo_coordinated_slot(dst, 1, 0, H), o,
				    lids, H);

				ck_assert_msg(++up[sl][slot] <= lids,
					      "round %u: leaf %u slot %u",
					      k, sl, slot);
				ck_assert_msg(++down[dl][slot] <= lids,
					      "round %u: down to leaf %u",
					      k, dl);
			}
		}
	}
}

START_TEST(two_level_spread_is_congestion_free)
{
	check_two_level_spread(8, 4, 1, 2);	/* ft2-8x4, LMC 1 */
	check_two_level_spread(8, 4, 1, 4);	/* LMC 2 */
	check_two_level_spread(4, 2, 2, 2);	/* trunks of 2 */
	check_two_level_spread(8, 4, 4, 4);	/* 4 links x 4 spines */
	check_two_level_spread(6, 6, 1, 4);	/* 4 does not divide 6 */
}
END_TEST

/*
 * A model 2-level fat tree: L leaves of H hosts, S spines, T parallel
 * links per leaf-spine pair, S * T = H.  Leaf up slot s * T + t leads to
 * spine s over its t-th link; a spine picks the parallel link down with
 * the same digit.  For every LID offset and every round of a shift
 * alltoall in rank order, no link may carry two flows.
 */
static void check_two_level_shift(unsigned L, unsigned S, unsigned T,
				  unsigned lid_offset)
{
	unsigned H = S * T, N = L * H, k, i;

	for (k = 1; k < N; k++) {
		unsigned up[64][16] = { { 0 } }, down[64][16] = { { 0 } };

		for (i = 0; i < N; i++) {
			unsigned dst = (i + k) % N;
			unsigned sl = i / H, dl = dst / H, slot, lane;

			if (sl == dl)
				continue;
			slot = oo_coordinated_slot(dst, 1, lid_offset, H);
			lane = oo_coordinated_slot(dst, 1, lid_offset, T);
			ck_assert_uint_eq(slot % T, lane);
			ck_assert_msg(++up[sl][slot] == 1,
				      "round %u: leaf %u up slot %u twice",
				      k, sl, slot);
			ck_assert_msg(++down[dl][slot / T * T + lane] == 1,
				      "round %u: down link to leaf %u twice",
				      k, dl);
		}
	}
}

START_TEST(two_level_shift_is_congestion_free)
{
	check_two_level_shift(8, 4, 1, 0);	/* ft2-8x4 */
	check_two_level_shift(4, 2, 2, 0);	/* trunks of 2 */
	check_two_level_shift(6, 2, 4, 0);	/* trunks of 4 */
	check_two_level_shift(8, 4, 1, 1);	/* LID offsets */
	check_two_level_shift(8, 4, 1, 3);
}
END_TEST

/*
 * k-ary 3-tree, k = 3 (27 hosts): leaf w = (a, b) holds ranks 9a+3b..+2,
 * its up slot j leads to middle (a, j); middle (a, j)'s up slot m leads to
 * top (j, m), which reaches every pod's middle (., j).  Shift alltoall in
 * rank order: at most one flow per link per round.
 */
START_TEST(three_level_shift_is_congestion_free)
{
	const unsigned k = 3, N = 27;
	unsigned r, i, o;

	for (o = 0; o < 2; o++)
		for (r = 1; r < N; r++) {
			unsigned leaf_up[9][3] = { { 0 } };
			unsigned mid_up[9][3] = { { 0 } };
			unsigned top_down[9][3] = { { 0 } };
			unsigned mid_down[9][3] = { { 0 } };

			for (i = 0; i < N; i++) {
				unsigned d = (i + r) % N;
				unsigned sleaf = i / k, dleaf = d / k;
				unsigned spod = i / (k * k), dpod = d / (k * k);
				unsigned j = oo_coordinated_slot(d, 1, o, k);
				unsigned m = oo_coordinated_slot(d, k, o, k);

				if (sleaf == dleaf)
					continue;
				ck_assert(++leaf_up[sleaf][j] == 1);
				/* middle (spod, j) */
				if (spod != dpod) {
					ck_assert(++mid_up[spod * k + j][m]
						  == 1);
					/* top (j, m) down to middle (dpod, j) */
					ck_assert(++top_down[j * k + m][dpod]
						  == 1);
				}
				/* middle (dpod, j) down to leaf dleaf */
				ck_assert(++mid_down[dpod * k + j][dleaf % k]
					  == 1);
			}
		}
}
END_TEST

/* ------------------------------------------------------------------ */

static enum oo_rule parse_ok(const char *text)
{
	struct oo_options o;
	char err[256];

	ck_assert_msg(oo_options_parse(text, &o, err, sizeof(err)) == 0,
		      "'%s' rejected: %s", text ? text : "(null)", err);
	return o.rule;
}

static void parse_bad(const char *text, const char *needle)
{
	struct oo_options o;
	char err[OO_OPTIONS_ERR_MAX];

	o.rule = OO_RULE_PLAIN;
	ck_assert_int_eq(oo_options_parse(text, &o, err, sizeof(err)), -1);
	ck_assert_int_eq(o.rule, OO_RULE_OFF);
	ck_assert_msg(strstr(err, needle) != NULL, "'%s' -> '%s' lacks '%s'",
		      text, err, needle);
}

START_TEST(options_accepted)
{
	ck_assert_int_eq(parse_ok(NULL), OO_RULE_OFF);
	ck_assert_int_eq(parse_ok(""), OO_RULE_OFF);
	ck_assert_int_eq(parse_ok("  ,  "), OO_RULE_OFF);
	ck_assert_int_eq(parse_ok("port_offsetting=on"), OO_RULE_DEFAULT);
	ck_assert_int_eq(parse_ok("port_offsetting=ON"), OO_RULE_DEFAULT);
	ck_assert_int_eq(parse_ok("port_offsetting=yes"), OO_RULE_DEFAULT);
	ck_assert_int_eq(parse_ok("port_offsetting=1"), OO_RULE_DEFAULT);
	ck_assert_int_eq(parse_ok("port_offsetting=off"), OO_RULE_OFF);
	ck_assert_int_eq(parse_ok("port_offsetting=0"), OO_RULE_OFF);
	ck_assert_int_eq(parse_ok("port_offsetting=plain"), OO_RULE_PLAIN);
	ck_assert_int_eq(parse_ok("port_offsetting=coordinated"),
			 OO_RULE_COORDINATED);
	ck_assert_int_eq(OO_RULE_DEFAULT, OO_RULE_COORDINATED);
	ck_assert_int_eq(parse_ok("osmoffset.port_offsetting=plain"),
			 OO_RULE_PLAIN);
	ck_assert_int_eq(parse_ok("other.level=3, port_offsetting=on"),
			 OO_RULE_DEFAULT);
	ck_assert_int_eq(parse_ok("port_offsetting=on port_offsetting=yes"),
			 OO_RULE_DEFAULT);
}
END_TEST

static enum oo_hop_tables hops_ok(const char *text)
{
	struct oo_options o;
	char err[256];

	ck_assert_int_eq(oo_options_parse(text, &o, err, sizeof(err)), 0);
	return o.hop_tables;
}

START_TEST(hop_tables_option)
{
	ck_assert_int_eq(hops_ok("port_offsetting=on"), OO_HOPS_FAST);
	ck_assert_int_eq(hops_ok("port_offsetting=on hop_tables=stock"),
			 OO_HOPS_STOCK);
	ck_assert_int_eq(hops_ok("osmoffset.hop_tables=FAST"), OO_HOPS_FAST);
	ck_assert_int_eq(hops_ok("hop_tables=stock,hop_tables=stock"),
			 OO_HOPS_STOCK);
	ck_assert_str_eq(oo_hop_tables_name(OO_HOPS_FAST), "fast");
	ck_assert_str_eq(oo_hop_tables_name(OO_HOPS_STOCK), "stock");
	parse_bad("hop_tables=slow", "hop_tables value 'slow'");
	parse_bad("hop_tables=fast hop_tables=stock", "given twice");
}
END_TEST

START_TEST(options_rejected)
{
	char longtok[300];

	parse_bad("port_offsetting=maybe", "'maybe'");
	parse_bad("port_offseting=on", "unknown key 'port_offseting'");
	parse_bad("port_offsetting", "key=value");
	parse_bad("port_offsetting=", "key=value");
	parse_bad("=on", "key=value");
	parse_bad("port_offsetting=on port_offsetting=off", "given twice");
	parse_bad("port_offsetting=on,bogus=1", "unknown key 'bogus'");
	memset(longtok, 'x', sizeof(longtok) - 1);
	longtok[sizeof(longtok) - 1] = '\0';
	parse_bad(longtok, "longer than");
}
END_TEST

START_TEST(rule_names)
{
	ck_assert_str_eq(oo_rule_name(OO_RULE_OFF), "off");
	ck_assert_str_eq(oo_rule_name(OO_RULE_PLAIN), "plain");
	ck_assert_str_eq(oo_rule_name(OO_RULE_COORDINATED), "coordinated");
}
END_TEST

START_TEST(natural_order_of_names)
{
	ck_assert_int_lt(oo_natural_cmp("h9", "h10"), 0);
	ck_assert_int_gt(oo_natural_cmp("h10", "h9"), 0);
	ck_assert_int_eq(oo_natural_cmp("h010", "h10"), 0);
	ck_assert_int_lt(oo_natural_cmp("node2 mlx5_0", "node10 mlx5_0"), 0);
	ck_assert_int_lt(oo_natural_cmp("a", "b"), 0);
	ck_assert_int_lt(oo_natural_cmp("h1", "h1a"), 0);
	ck_assert_int_eq(oo_natural_cmp("", ""), 0);
	ck_assert_int_lt(oo_natural_cmp("", "x"), 0);
}
END_TEST

/*
 * Up/down hop tables.  The fabric:
 *
 *            R0            rank 0 (the root)
 *           /  \
 *          X    Y          rank 1
 *           \  /
 *            Z             rank 2
 *
 * Ports: R0 1-X1, R0 2-Y1, X2-Z1, Y2-Z2.  The path Y-Z-X goes down then
 * up, so Y must not count it toward X.
 */
enum { R0, X, Y, Z, NSW };

static unsigned updn_first[NSW + 1] = { 0, 2, 4, 6, 8 };
static struct oo_updn_link updn_links[8];
static unsigned updn_rank[NSW];
static const uint64_t updn_id[NSW] = { 100, 200, 300, 400 };

static void set_link(unsigned i, unsigned to, uint8_t port, uint8_t rport)
{
	updn_links[i].to = to;
	updn_links[i].port = port;
	updn_links[i].rport = rport;
	updn_links[i].flags = OO_LINK_RANKS | OO_LINK_ROUTES |
	    OO_LINK_DIRECT | OO_LINK_HEALTHY;
	updn_links[i].down = 0;
}

static struct oo_updn_graph diamond(void)
{
	struct oo_updn_graph g = { NSW, 3, updn_first, updn_links,
				   updn_rank, updn_id, NULL };
	unsigned i;

	set_link(0, X, 1, 1);	/* R0 */
	set_link(1, Y, 2, 1);
	set_link(2, R0, 1, 1);	/* X */
	set_link(3, Z, 2, 1);
	set_link(4, R0, 1, 2);	/* Y */
	set_link(5, Z, 2, 2);
	set_link(6, X, 1, 2);	/* Z */
	set_link(7, Y, 2, 2);
	for (i = 0; i < NSW; i++)
		updn_rank[i] = OO_UPDN_NO_RANK;
	updn_rank[R0] = 0;
	return g;
}

static void assert_row(const uint8_t *hops, unsigned sw, uint8_t least,
		       uint8_t p1, uint8_t p2)
{
	const uint8_t *row = &hops[sw * 3];

	ck_assert_msg(row[0] == least && row[1] == p1 && row[2] == p2,
		      "switch %u: got %02x %02x %02x, want %02x %02x %02x",
		      sw, row[0], row[1], row[2], least, p1, p2);
}

START_TEST(updn_ranks_are_distances_from_roots)
{
	struct oo_updn_graph g = diamond();
	unsigned queue[NSW];

	ck_assert_uint_eq(oo_updn_rank(&g, queue), 2);
	ck_assert_uint_eq(updn_rank[R0], 0);
	ck_assert_uint_eq(updn_rank[X], 1);
	ck_assert_uint_eq(updn_rank[Y], 1);
	ck_assert_uint_eq(updn_rank[Z], 2);
	oo_updn_directions(&g);
	ck_assert_uint_eq(updn_links[0].down, 1);	/* R0 -> X */
	ck_assert_uint_eq(updn_links[2].down, 0);	/* X -> R0 */
	ck_assert_uint_eq(updn_links[3].down, 1);	/* X -> Z */
	ck_assert_uint_eq(updn_links[6].down, 0);	/* Z -> X */
}
END_TEST

START_TEST(updn_leaf_roots_are_left_out)
{
	/* the diamond as a two-level tree: leaves X and Y with hosts,
	   spines R0 and Z */
	struct oo_updn_graph g = diamond();
	uint8_t leaf[NSW] = { 0, 1, 1, 0 };

	/* updn's detection took every switch for a root */
	memset(updn_rank, 0, sizeof(updn_rank));
	ck_assert_uint_eq(oo_updn_drop_leaf_roots(&g, leaf, updn_rank), 2);
	ck_assert_uint_eq(updn_rank[R0], 0);
	ck_assert_uint_eq(updn_rank[Z], 0);
	ck_assert_uint_eq(updn_rank[X], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(updn_rank[Y], OO_UPDN_NO_RANK);

	/* only leaves: nothing to fall back on, they stay */
	g = diamond();
	updn_rank[R0] = OO_UPDN_NO_RANK;
	updn_rank[X] = 0;
	ck_assert_uint_eq(oo_updn_drop_leaf_roots(&g, leaf, updn_rank), 0);
	ck_assert_uint_eq(updn_rank[X], 0);

	/* a spine root (Z; a management HCA on it leaves it a spine, see
	   the rank tests) stays, a leaf root goes, and R0 joins */
	g = diamond();
	updn_rank[X] = 0;
	ck_assert_uint_eq(oo_updn_drop_leaf_roots(&g, leaf, updn_rank), 1);
	ck_assert_uint_eq(updn_rank[R0], 0);
	ck_assert_uint_eq(updn_rank[Z], 0);
	ck_assert_uint_eq(updn_rank[X], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(updn_rank[Y], OO_UPDN_NO_RANK);
}
END_TEST

START_TEST(updn_spines_beside_the_roots_join_them)
{
	/* the diamond as a two-level tree whose detection found only R0:
	   Z, over the same leaves X and Y, ranked 2 would carry nothing */
	struct oo_updn_graph g = diamond();
	uint8_t leaf[NSW] = { 0, 1, 1, 0 };
	uint8_t hops[NSW * 3], queued[NSW], down[NSW];
	unsigned queue[NSW + 1];
	struct oo_updn_work w = { hops, queued, down, queue };

	ck_assert_uint_eq(oo_updn_count_roots(&g, updn_rank), 1);
	ck_assert_uint_eq(oo_updn_add_sibling_roots(&g, leaf, updn_rank), 1);
	ck_assert_uint_eq(oo_updn_count_roots(&g, updn_rank), 2);
	ck_assert_uint_eq(updn_rank[Z], 0);
	ck_assert_uint_eq(updn_rank[R0], 0);
	ck_assert_uint_eq(updn_rank[X], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(oo_updn_rank(&g, queue), 1);
	oo_updn_directions(&g);
	oo_updn_hops(&g, X, &w);
	/* Y reaches X over either spine now, two hops each */
	assert_row(hops, Y, 2, 2, 2);

	/* nothing to add twice */
	ck_assert_uint_eq(oo_updn_add_sibling_roots(&g, leaf, updn_rank), 0);

	/* no root at all: nothing to stand beside */
	g = diamond();
	updn_rank[R0] = OO_UPDN_NO_RANK;
	ck_assert_uint_eq(oo_updn_add_sibling_roots(&g, leaf, updn_rank), 0);
	ck_assert_uint_eq(updn_rank[Z], OO_UPDN_NO_RANK);

	/* X no leaf: Z has one cable to a leaf only, and X, cabled to the
	   root, is below it, not beside it */
	g = diamond();
	leaf[X] = 0;
	ck_assert_uint_eq(oo_updn_add_sibling_roots(&g, leaf, updn_rank), 0);
	ck_assert_uint_eq(updn_rank[Z], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(updn_rank[X], OO_UPDN_NO_RANK);
}
END_TEST

/*
 * A three-level tree: leaves L0-L3, middle switches M0-M3 (M0, M1 over L0,
 * L1; M2, M3 over L2, L3), top switches T0 and T1 over every middle one,
 * but M3 lost its cable to T0.  updn's detection found T0 only.
 */
enum { L0, L1, L2, L3, M0, M1, M2, M3, T0, T1, NSW3 };

static const unsigned tree3_cables[][2] = {
	{ L0, M0 }, { L0, M1 }, { L1, M0 }, { L1, M1 },
	{ L2, M2 }, { L2, M3 }, { L3, M2 }, { L3, M3 },
	{ M0, T0 }, { M1, T0 }, { M2, T0 },
	{ M0, T1 }, { M1, T1 }, { M2, T1 }, { M3, T1 },
};

#define NCABLES3 (sizeof(tree3_cables) / sizeof(tree3_cables[0]))

static unsigned tree3_first[NSW3 + 1];
static struct oo_updn_link tree3_links[2 * NCABLES3];
static unsigned tree3_rank[NSW3];
static uint64_t tree3_id[NSW3];

/*
 * A graph of nsw switches from a list of cables: each switch's links in
 * cable order, ports numbered from 1; no root.
 */
static struct oo_updn_graph cabled(const unsigned (*cables)[2],
				   unsigned ncables, unsigned nsw,
				   unsigned *first, struct oo_updn_link *links,
				   unsigned *rank, uint64_t *id)
{
	struct oo_updn_graph g = { nsw, 8, first, links, rank, id, NULL };
	unsigned s, c, n = 0;

	for (s = 0; s < nsw; s++) {
		first[s] = n;
		for (c = 0; c < ncables; c++) {
			const unsigned *e = cables[c];
			struct oo_updn_link *l = &links[n];

			if (e[0] != s && e[1] != s)
				continue;
			memset(l, 0, sizeof(*l));
			l->to = e[0] == s ? e[1] : e[0];
			l->port = (uint8_t)(n - first[s] + 1);
			l->flags = OO_LINK_RANKS | OO_LINK_ROUTES |
			    OO_LINK_DIRECT | OO_LINK_HEALTHY;
			n++;
		}
		rank[s] = OO_UPDN_NO_RANK;
		id[s] = 100 * (s + 1);
	}
	first[nsw] = n;
	return g;
}

static struct oo_updn_graph tree3(void)
{
	struct oo_updn_graph g = cabled(tree3_cables, NCABLES3, NSW3,
					tree3_first, tree3_links, tree3_rank,
					tree3_id);

	tree3_rank[T0] = 0;
	return g;
}

START_TEST(updn_hostless_switches_are_roots_of_last_resort)
{
	struct oo_updn_graph g = tree3();
	uint8_t leaf[NSW3] = { 1, 1, 1, 1 };
	unsigned cas[NSW3] = { 4, 4, 4, 4 };
	unsigned queue[NSW3], s;

	/* the detection found no root: the middle and top switches have no
	   host of their own and become roots; the middle ones then go
	   under the tops they are cabled to */
	tree3_rank[T0] = OO_UPDN_NO_RANK;
	ck_assert_uint_eq(oo_updn_bare_roots(&g, cas, tree3_rank), 6);
	for (s = L0; s <= L3; s++)
		ck_assert_uint_eq(tree3_rank[s], OO_UPDN_NO_RANK);
	for (s = M0; s <= T1; s++)
		ck_assert_uint_eq(tree3_rank[s], 0);
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, leaf, tree3_rank),
			  4);
	ck_assert_uint_eq(oo_updn_count_roots(&g, tree3_rank), 2);
	ck_assert_uint_eq(tree3_rank[T0], 0);
	ck_assert_uint_eq(tree3_rank[T1], 0);
	ck_assert_uint_eq(oo_updn_rank(&g, queue), 2);
	ck_assert_uint_eq(tree3_rank[L0], 2);

	/* a management HCA on T0 keeps it out; a switch with no cable to
	   another switch is no root */
	g = tree3();
	tree3_rank[T0] = OO_UPDN_NO_RANK;
	cas[T0] = 1;
	tree3_first[NSW3] = tree3_first[T1];	/* T1 loses its cables */
	ck_assert_uint_eq(oo_updn_bare_roots(&g, cas, tree3_rank), 4);
	ck_assert_uint_eq(tree3_rank[T0], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(tree3_rank[T1], OO_UPDN_NO_RANK);
	for (s = M0; s <= M3; s++)
		ck_assert_uint_eq(tree3_rank[s], 0);

	/* a management HCA on M3, which is cabled to leaves with hosts:
	   no root at all (minhop may reach it where up/down would not) */
	g = tree3();
	tree3_rank[T0] = OO_UPDN_NO_RANK;
	cas[T0] = 0;
	cas[M3] = 1;
	ck_assert_uint_eq(oo_updn_bare_roots(&g, cas, tree3_rank), 0);
	ck_assert_uint_eq(oo_updn_count_roots(&g, tree3_rank), 0);

	/* hosts on every switch (a ring, a mesh): no root */
	g = tree3();
	tree3_rank[T0] = OO_UPDN_NO_RANK;
	for (s = M0; s <= T1; s++)
		cas[s] = 1;
	ck_assert_uint_eq(oo_updn_bare_roots(&g, cas, tree3_rank), 0);
	ck_assert_uint_eq(oo_updn_count_roots(&g, tree3_rank), 0);
}
END_TEST

/* Two groups of one leaf under one spine, the spines cabled together. */
enum { GL0, GL1, GS0, GS1, NSWG };

static const unsigned groups_cables[][2] = {
	{ GL0, GS0 }, { GL1, GS1 }, { GS0, GS1 },
};

START_TEST(updn_roots_of_last_resort_go_up_one_way_between_them)
{
	unsigned first[NSWG + 1], rank[NSWG], queue[NSWG], dist[NSWG];
	struct oo_updn_link links[6];
	uint64_t id[NSWG];
	unsigned cas[NSWG] = { 4, 4, 0, 0 };
	struct oo_updn_graph g = cabled(groups_cables, 3, NSWG, first, links,
					rank, id);

	ck_assert_uint_eq(oo_updn_bare_roots(&g, cas, rank), 2);
	ck_assert_uint_eq(oo_updn_rank(&g, queue), 1);
	/* as OpenSM's updn: up both ways between the two roots, so a route
	   may go on up over a third group's spine and back */
	oo_updn_directions(&g);
	ck_assert_uint_eq(links[first[GS0] + 1].down, 0);	/* GS0 -> GS1 */
	ck_assert_uint_eq(links[first[GS1] + 1].down, 0);	/* GS1 -> GS0 */
	/* one set; each has one cable to a root, GS0 comes first: the
	   centre; GS1 is a hop from it, and steps up toward it */
	ck_assert_uint_eq(oo_updn_root_centres(&g, rank, dist, queue), 1);
	ck_assert_uint_eq(dist[GS0], 0);
	ck_assert_uint_eq(dist[GS1], 1);
	ck_assert_uint_eq(dist[GL0], OO_UPDN_NO_RANK);
	g.root_dist = dist;
	oo_updn_directions(&g);
	ck_assert_uint_eq(links[first[GS0] + 1].down, 1);
	ck_assert_uint_eq(links[first[GS1] + 1].down, 0);
	/* the leaves' steps do not change */
	ck_assert_uint_eq(links[first[GL0]].down, 0);
	ck_assert_uint_eq(links[first[GS0]].down, 1);
}
END_TEST

/*
 * Three groups of one leaf under one spine, the spines in a chain TS0 -
 * TS1 - TS2; TS1, in the middle, has the largest id.
 */
enum { TL0, TL1, TL2, TS0, TS2, TS1, NSWT };

static const unsigned chain_cables[][2] = {
	{ TL0, TS0 }, { TL1, TS1 }, { TL2, TS2 }, { TS0, TS1 }, { TS1, TS2 },
};

START_TEST(updn_roots_in_a_chain_reach_each_other_over_the_centre)
{
	unsigned first[NSWT + 1], rank[NSWT], queue[NSWT + 1], dist[NSWT];
	struct oo_updn_link links[10];
	uint64_t id[NSWT];
	unsigned cas[NSWT] = { 2, 2, 2, 0, 0, 0 };
	uint8_t hops[NSWT * 8], queued[NSWT], down[NSWT];
	struct oo_updn_work w = { hops, queued, down, queue };
	struct oo_updn_graph g = cabled(chain_cables, 5, NSWT, first, links,
					rank, id);

	ck_assert_uint_eq(oo_updn_bare_roots(&g, cas, rank), 3);
	oo_updn_rank(&g, queue);
	/* up both ways between the roots: every leaf reaches every other */
	oo_updn_directions(&g);
	ck_assert_int_eq(oo_updn_reach_all(&g, cas, &w), 1);
	/* TS1, with two cables to roots, is the centre: TL0 -> TS0 -> TS1
	   goes up, TS1 -> TS2 -> TL2 down */
	ck_assert_uint_eq(oo_updn_root_centres(&g, rank, dist, queue), 1);
	ck_assert_uint_eq(dist[TS1], 0);
	ck_assert_uint_eq(dist[TS0], 1);
	ck_assert_uint_eq(dist[TS2], 1);
	g.root_dist = dist;
	oo_updn_directions(&g);
	ck_assert_int_eq(oo_updn_reach_all(&g, cas, &w), 1);
	oo_updn_hops(&g, TL2, &w);
	ck_assert_uint_eq(hops[TL0 * 8], 4);
	/* ordered by id alone (TS1 largest), TS0 -> TS1 would go down and
	   TS1 -> TS2 up again: TL0 would not reach TL2 */
	dist[TS0] = dist[TS1] = dist[TS2] = 0;
	oo_updn_directions(&g);
	ck_assert_int_eq(oo_updn_reach_all(&g, cas, &w), 0);
	oo_updn_hops(&g, TL2, &w);
	ck_assert_uint_eq(hops[TL0 * 8], OO_HOPS_NONE);
	ck_assert_uint_eq(hops[TL1 * 8], 3);	/* up, up, down */
	/* no hosts on TL2: TL0 and TL1 reach each other */
	cas[TL2] = 0;
	ck_assert_int_eq(oo_updn_reach_all(&g, cas, &w), 1);
}
END_TEST

START_TEST(updn_roots_under_roots_are_left_out)
{
	struct oo_updn_graph g = tree3();
	uint8_t leaf[NSW3] = { 1, 1, 1, 1 };
	uint8_t none[NSW3] = { 0 };
	unsigned queue[NSW3], s;

	/* the detection took the middle switches for roots too (one
	   distance from every host, as a director's line ASICs): each is
	   cabled to a top root, and goes; the top switches stay */
	for (s = M0; s <= T1; s++)
		tree3_rank[s] = 0;
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, leaf, tree3_rank),
			  4);
	for (s = L0; s <= M3; s++)
		ck_assert_uint_eq(tree3_rank[s], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(tree3_rank[T0], 0);
	ck_assert_uint_eq(tree3_rank[T1], 0);
	/* ranked under them, a step up from M0 to T0 no longer goes down
	   the other way too */
	ck_assert_uint_eq(oo_updn_rank(&g, queue), 2);
	ck_assert_uint_eq(tree3_rank[M0], 1);
	oo_updn_directions(&g);
	for (s = tree3_first[M0]; s < tree3_first[M0 + 1]; s++)
		ck_assert_uint_eq(tree3_links[s].down,
				  tree3_links[s].to == L0 ||
				  tree3_links[s].to == L1);
	for (s = tree3_first[T0]; s < tree3_first[T0 + 1]; s++)
		ck_assert_uint_eq(tree3_links[s].down, 1);

	/* roots at one level, not cabled to each other: all stay */
	g = tree3();
	tree3_rank[T0] = OO_UPDN_NO_RANK;
	tree3_rank[M0] = tree3_rank[M2] = 0;
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, leaf, tree3_rank),
			  0);
	ck_assert_uint_eq(tree3_rank[M0], 0);
	ck_assert_uint_eq(tree3_rank[M2], 0);

	/* M2 and M3, under the root T1, go; T0 is no root */
	g = tree3();
	tree3_rank[T0] = OO_UPDN_NO_RANK;
	tree3_rank[T1] = tree3_rank[M2] = tree3_rank[M3] = 0;
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, leaf, tree3_rank),
			  2);
	ck_assert_uint_eq(tree3_rank[M3], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(tree3_rank[M2], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(tree3_rank[T1], 0);

	/* no leaves: no distances to compare, the roots stay */
	g = tree3();
	tree3_rank[M0] = 0;
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, none, tree3_rank),
			  0);
	ck_assert_uint_eq(tree3_rank[M0], 0);
	ck_assert_uint_eq(tree3_rank[T0], 0);
}
END_TEST

/*
 * tree3 with a chain hanging off T1: D0 (cabled to T1 twice, a pod spine
 * that lost its edge cables) and D1 beyond it.
 */
enum { D0 = NSW3, D1, NSWD };

static const unsigned hanging_cables[][2] = {
	{ L0, M0 }, { L0, M1 }, { L1, M0 }, { L1, M1 },
	{ L2, M2 }, { L2, M3 }, { L3, M2 }, { L3, M3 },
	{ M0, T0 }, { M1, T0 }, { M2, T0 },
	{ M0, T1 }, { M1, T1 }, { M2, T1 }, { M3, T1 },
	{ T1, D0 }, { T1, D0 }, { D0, D1 },
};

#define NCABLESD (sizeof(hanging_cables) / sizeof(hanging_cables[0]))

START_TEST(updn_dead_end_roots_leave_the_roots_they_hang_off)
{
	unsigned first[NSWD + 1], rank[NSWD], s;
	struct oo_updn_link links[2 * NCABLESD];
	uint64_t id[NSWD];
	uint8_t leaf[NSWD] = { 1, 1, 1, 1 };
	struct oo_updn_graph g;

	/* every host is one distance from T0, T1, D0 and D1: all roots.
	   D0 and D1 are further from the leaves than T1, but no route
	   crosses them: T1 stays a root, and so do they */
	g = cabled(hanging_cables, NCABLESD, NSWD, first, links, rank, id);
	rank[T0] = rank[T1] = rank[D0] = rank[D1] = 0;
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, leaf, rank), 0);
	for (s = T0; s <= D1; s++)
		ck_assert_uint_eq(rank[s], 0);

	/* hosts on D1: the chain carries their routes, D0 is no dead end,
	   and T1 is further from the leaves than it: D0 goes, T1 stays */
	leaf[D1] = 1;
	g = cabled(hanging_cables, NCABLESD, NSWD, first, links, rank, id);
	rank[T0] = rank[T1] = rank[D0] = 0;
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, leaf, rank), 1);
	ck_assert_uint_eq(rank[D0], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(rank[T1], 0);
	ck_assert_uint_eq(rank[T0], 0);
}
END_TEST

/*
 * A two-level tree: leaves P0-P3 under spines Q0-Q2, each leaf cabled to
 * every spine, and an edge switch E without hosts cabled to every spine.
 */
enum { P0, P1, P2, P3, Q0, Q1, Q2, E0, NSWE };

static const unsigned empty_edge_cables[][2] = {
	{ P0, Q0 }, { P1, Q0 }, { P2, Q0 }, { P3, Q0 },
	{ P0, Q1 }, { P1, Q1 }, { P2, Q1 }, { P3, Q1 },
	{ P0, Q2 }, { P1, Q2 }, { P2, Q2 }, { P3, Q2 },
	{ E0, Q0 }, { E0, Q1 }, { E0, Q2 },
};

#define NCABLESE (sizeof(empty_edge_cables) / sizeof(empty_edge_cables[0]))

/* That tree with the switches of the bit mask roots for roots. */
static struct oo_updn_graph empty_edge_tree(unsigned *first,
					    struct oo_updn_link *links,
					    unsigned *rank, uint64_t *id,
					    unsigned roots)
{
	struct oo_updn_graph g = cabled(empty_edge_cables, NCABLESE, NSWE,
					first, links, rank, id);
	unsigned s;

	for (s = 0; s < NSWE; s++)
		if (roots >> s & 1)
			rank[s] = 0;
	return g;
}

START_TEST(updn_an_edge_without_hosts_is_no_top_over_the_spines)
{
	unsigned first[NSWE + 1], rank[NSWE], queue[NSWE], s;
	struct oo_updn_link links[2 * NCABLESE];
	uint64_t id[NSWE];
	uint8_t leaf[NSWE] = { 1, 1, 1, 1 };
	struct oo_updn_graph g;

	/* the detection took E0 for a root beside Q0 and Q1: one cable of
	   each spine's five goes to it, no core; it goes, the spines stay
	   and rank it a step below them, beside the leaves (Q2, a root it
	   missed, joins them through oo_updn_add_sibling_roots()) */
	g = empty_edge_tree(first, links, rank, id,
			    1U << Q0 | 1U << Q1 | 1U << E0);
	ck_assert_uint_eq(oo_updn_drop_edge_tops(&g, leaf, rank), 1);
	ck_assert_uint_eq(rank[E0], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, leaf, rank), 0);
	ck_assert_uint_eq(rank[Q0], 0);
	ck_assert_uint_eq(rank[Q1], 0);
	ck_assert_uint_eq(oo_updn_rank(&g, queue), 2);
	ck_assert_uint_eq(rank[E0], 1);
	for (s = P0; s <= P3; s++)
		ck_assert_uint_eq(rank[s], 1);
	ck_assert_uint_eq(rank[Q2], 2);

	/* before, the spines went under it */
	g = empty_edge_tree(first, links, rank, id,
			    1U << Q0 | 1U << Q1 | 1U << E0);
	ck_assert_uint_eq(oo_updn_drop_roots_under_roots(&g, leaf, rank), 2);
	ck_assert_uint_eq(rank[E0], 0);

	/* tree3: every middle switch sends as many cables up to T0 and T1
	   as down to its leaves; they are cores and stay */
	g = tree3();
	for (s = M0; s <= T1; s++)
		tree3_rank[s] = 0;
	ck_assert_uint_eq(oo_updn_drop_edge_tops(&g, leaf, tree3_rank), 0);
	ck_assert_uint_eq(tree3_rank[T0], 0);
	ck_assert_uint_eq(tree3_rank[T1], 0);

	/* no root above another: nothing goes */
	g = empty_edge_tree(first, links, rank, id,
			    1U << Q0 | 1U << Q1 | 1U << Q2);
	ck_assert_uint_eq(oo_updn_drop_edge_tops(&g, leaf, rank), 0);
}
END_TEST

START_TEST(updn_top_switches_beside_the_roots_join_them)
{
	struct oo_updn_graph g = tree3();
	uint8_t leaf[NSW3] = { 1, 1, 1, 1 };
	unsigned s;

	/* T1 stands beside T0; M3, cabled to no root and mostly over
	   leaves, is a level below them and stays */
	ck_assert_uint_eq(oo_updn_add_sibling_roots(&g, leaf, tree3_rank), 1);
	ck_assert_uint_eq(tree3_rank[T1], 0);
	for (s = L0; s <= M3; s++)
		ck_assert_uint_eq(tree3_rank[s], OO_UPDN_NO_RANK);

	/* roots at two levels: nothing joins */
	g = tree3();
	tree3_rank[M0] = 0;
	ck_assert_uint_eq(oo_updn_add_sibling_roots(&g, leaf, tree3_rank), 0);
	ck_assert_uint_eq(tree3_rank[T1], OO_UPDN_NO_RANK);
	ck_assert_uint_eq(tree3_rank[M3], OO_UPDN_NO_RANK);

	/* a middle switch as the only root, with as many cables up as down:
	   no level of spines to stand beside, nothing joins */
	g = tree3();
	tree3_rank[T0] = OO_UPDN_NO_RANK;
	tree3_rank[M0] = 0;
	ck_assert_uint_eq(oo_updn_add_sibling_roots(&g, leaf, tree3_rank), 0);
	for (s = L0; s <= T1; s++)
		ck_assert_uint_eq(tree3_rank[s], s == M0 ? 0 : OO_UPDN_NO_RANK);
}
END_TEST

START_TEST(updn_hops_never_turn_down_then_up)
{
	struct oo_updn_graph g = diamond();
	uint8_t hops[NSW * 3], queued[NSW], down[NSW];
	unsigned queue[NSW + 1];
	struct oo_updn_work w = { hops, queued, down, queue };

	oo_updn_rank(&g, queue);
	oo_updn_directions(&g);
	oo_updn_hops(&g, X, &w);
	assert_row(hops, X, 0, 2, 0xff);
	assert_row(hops, R0, 1, 1, 0xff);
	/* Y-Z-X would go down, then up: no count on Y's port 2 */
	assert_row(hops, Y, 2, 2, 0xff);
	/* Z-Y-R0-X goes up, up, down: 3 hops */
	assert_row(hops, Z, 1, 1, 3);

	/* the root's own ports: only down from it, never back up to it */
	oo_updn_hops(&g, R0, &w);
	assert_row(hops, R0, 0, 0xff, 0xff);
	assert_row(hops, X, 1, 1, 0xff);
	assert_row(hops, Y, 1, 1, 0xff);
	assert_row(hops, Z, 2, 2, 2);
}
END_TEST

START_TEST(minhop_distances_follow_healthy_links)
{
	struct oo_updn_graph g = diamond();
	uint8_t dist[NSW];
	unsigned queue[NSW];

	oo_minhop_distances(&g, X, dist, queue);
	ck_assert_uint_eq(dist[X], 0);
	ck_assert_uint_eq(dist[R0], 1);
	ck_assert_uint_eq(dist[Z], 1);
	ck_assert_uint_eq(dist[Y], 2);

	{
		uint8_t hops[NSW * 3];

		oo_minhop_rows(&g, X, dist, hops);
		assert_row(hops, X, 0, 2, 2);
		assert_row(hops, R0, 1, 1, 3);
		assert_row(hops, Y, 2, 2, 2);
		assert_row(hops, Z, 1, 1, 3);
	}

	/* an unhealthy last link still counts, as in OpenSM's minhop */
	updn_links[3].flags &= ~OO_LINK_HEALTHY;	/* X - Z */
	updn_links[6].flags &= ~OO_LINK_HEALTHY;
	oo_minhop_distances(&g, X, dist, queue);
	ck_assert_uint_eq(dist[Z], 1);

	/* but no path crosses one: Y is cut off from X */
	updn_links[1].flags &= ~OO_LINK_HEALTHY;	/* R0 - Y */
	updn_links[4].flags &= ~OO_LINK_HEALTHY;
	updn_links[5].flags &= ~OO_LINK_HEALTHY;	/* Y - Z */
	updn_links[7].flags &= ~OO_LINK_HEALTHY;
	oo_minhop_distances(&g, X, dist, queue);
	ck_assert_uint_eq(dist[Y], OO_HOPS_NONE);
	ck_assert_uint_eq(dist[R0], 1);
	{
		uint8_t hops[NSW * 3];

		/* Z keeps its direct (unhealthy) link to X; Y has nothing */
		oo_minhop_rows(&g, X, dist, hops);
		assert_row(hops, Z, 1, 1, 0xff);
		assert_row(hops, Y, 0xff, 0xff, 0xff);
		assert_row(hops, R0, 1, 1, 0xff);
	}
}
END_TEST

START_TEST(stock_guard_option)
{
	struct oo_options o;
	char err[256];

	ck_assert_int_eq(oo_options_parse("port_offsetting=on", &o, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(o.stock_guard, 1);
	ck_assert_int_eq(oo_options_parse("stock_guard=off port_offsetting=on",
					  &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.stock_guard, 0);
	ck_assert_int_eq(o.rule, OO_RULE_COORDINATED);
	ck_assert_int_eq(oo_options_parse("osmoffset.stock_guard=YES", &o,
					  err, sizeof(err)), 0);
	ck_assert_int_eq(o.stock_guard, 1);
	parse_bad("stock_guard=plain", "stock_guard value 'plain'");
	parse_bad("stock_guard=coordinated", "stock_guard value");
	parse_bad("stock_guard=on stock_guard=0", "given twice");
}
END_TEST

/*
 * Two leaves (or three: switches 0 to leaves - 1, hosts on ports 1 and 2,
 * port 3 up to the first spine, port 4 to the second) and two spines
 * (port 1 + i down to leaf i).  Host h hangs off leaf h / 2 and has LID
 * 1 + h; leaf l sends host h's LID (h not below it) to spine up[l][h]
 * (0: the first).  In ev_setup()'s aligned tables both leaves send both
 * remote hosts' LIDs over spine 2; in the shifted ones the second remote
 * host goes over spine 3.
 */
#define EV_SW 4
#define EV_STRIDE 5
#define EV_MAX_LEAVES 3
#define EV_MAX_SW (EV_MAX_LEAVES + 2)
#define EV_MAX_HOSTS (2 * EV_MAX_LEAVES)
struct ev_net {
	uint32_t next[EV_MAX_SW * EV_STRIDE];
	uint8_t lft[EV_MAX_SW][16];
	const uint8_t *rows[EV_MAX_SW];
	unsigned len[EV_MAX_SW];
	uint32_t host_sw[EV_MAX_HOSTS];
	uint8_t host_port[EV_MAX_HOSTS];
	uint16_t host_lid[EV_MAX_HOSTS];
	unsigned num_hosts;
	struct oo_eval_net net;
};

/* The oo_eval_net over a test net's arrays. */
static void eval_net_of(struct oo_eval_net *n, unsigned num_sw,
			unsigned stride, const uint32_t *next,
			const uint8_t *const *lft, const unsigned *len,
			const uint32_t *host_sw, const uint8_t *host_port,
			const uint16_t *host_lid, unsigned lids)
{
	n->num_sw = num_sw;
	n->stride = stride;
	n->next = next;
	n->lft = lft;
	n->lft_len = len;
	n->host_sw = host_sw;
	n->host_port = host_port;
	n->host_lid = host_lid;
	n->lids_per_port = lids;
}

static void ev_build(struct ev_net *e, unsigned leaves,
		     const uint8_t up[EV_MAX_LEAVES][EV_MAX_HOSTS])
{
	unsigned s, p, h;

	memset(e, 0, sizeof(*e));
	for (s = 0; s < EV_MAX_SW; s++) {
		for (p = 0; p < EV_STRIDE; p++)
			e->next[s * EV_STRIDE + p] = OO_EVAL_NONE;
		memset(e->lft[s], 0xff, sizeof(e->lft[s]));
		e->rows[s] = e->lft[s];
		e->len[s] = sizeof(e->lft[s]);
	}
	for (s = 0; s < leaves; s++)
		for (p = 0; p < 2; p++) {
			e->next[s * EV_STRIDE + 3 + p] = leaves + p;
			e->next[(leaves + p) * EV_STRIDE + 1 + s] = s;
		}
	e->num_hosts = 2 * leaves;
	for (h = 0; h < e->num_hosts; h++) {
		e->host_sw[h] = h / 2;
		e->host_port[h] = 1 + h % 2;
		e->host_lid[h] = 1 + h;
		/* own leaf: down to the host; other leaves: up */
		for (s = 0; s < leaves; s++)
			e->lft[s][1 + h] = (uint8_t)(s == h / 2 ?
						     1U + h % 2 :
						     3U + up[s][h]);
		e->lft[leaves][1 + h] = 1 + h / 2;
		e->lft[leaves + 1][1 + h] = 1 + h / 2;
	}
	eval_net_of(&e->net, leaves + 2, EV_STRIDE, e->next, e->rows, e->len,
		    e->host_sw, e->host_port, e->host_lid, 1);
}

static void ev_setup(struct ev_net *e, int shifted)
{
	uint8_t up[EV_MAX_LEAVES][EV_MAX_HOSTS] = { { 0 } };
	unsigned s, h;

	for (s = 0; s < 2; s++)
		for (h = 0; h < 4; h++)
			up[s][h] = shifted && h % 2;
	ev_build(e, 2, up);
}

/* oo_eval_shift() of net in order, with work of its own. */
static struct oo_eval_score net_score(const struct oo_eval_net *net,
				      const uint32_t *order, unsigned n,
				      int traffic, uint64_t budget)
{
	struct oo_eval_work wk;
	struct oo_eval_score sc;

	ck_assert_int_eq(oo_eval_work_init(&wk, net->num_sw * net->stride), 0);
	oo_eval_shift(net, order, n, traffic, budget, &wk, &sc);
	oo_eval_work_free(&wk);
	return sc;
}

static struct oo_eval_score ev_score(const struct ev_net *e,
				     const uint32_t *order, unsigned n,
				     uint64_t budget)
{
	return net_score(&e->net, order, n, 0, budget);
}

START_TEST(eval_scores_shift_rounds)
{
	static const uint32_t leaf_order[] = { 0, 1, 2, 3 };
	struct ev_net e;
	struct oo_eval_score sc;

	/* aligned: round 2 puts both remote flows on one up link */
	ev_setup(&e, 0);
	sc = ev_score(&e, leaf_order, 4, 1000);
	ck_assert_uint_eq(sc.rounds, 3);
	ck_assert_uint_eq(sc.lost, 0);
	ck_assert_double_eq_tol(sc.eff, (1.0 + 0.5 + 1.0) / 3, 1e-12);
	/* shifted: contention-free */
	ev_setup(&e, 1);
	sc = ev_score(&e, leaf_order, 4, 1000);
	ck_assert_double_eq_tol(sc.eff, 1.0, 1e-12);
	/* a budget of one round per flow set looks at rounds 1 only */
	ev_setup(&e, 0);
	sc = ev_score(&e, leaf_order, 4, 4);
	ck_assert_uint_eq(sc.rounds, 1);
	ck_assert_double_eq_tol(sc.eff, 1.0, 1e-12);
}
END_TEST

START_TEST(eval_counts_lost_flows)
{
	static const uint32_t order[] = { 0, 2 };
	struct ev_net e;
	struct oo_eval_score sc;

	/* a dead end: spine 2 has no entry for host 2's LID */
	ev_setup(&e, 0);
	e.lft[2][3] = 0xff;
	sc = ev_score(&e, order, 2, 1000);
	ck_assert_uint_eq(sc.lost, 1);
	/* a loop: spine 2 sends host 2's LID back to leaf 0 */
	e.lft[2][3] = 1;
	sc = ev_score(&e, order, 2, 1000);
	ck_assert_uint_eq(sc.lost, 1);
	/* a LID beyond a switch's table */
	ev_setup(&e, 0);
	e.len[1] = 2;
	sc = ev_score(&e, order, 2, 1000);
	ck_assert_uint_eq(sc.lost, 1);
}
END_TEST

/*
 * A chain of len switches (port 1 to the one before, port 2 to the one
 * after) with hosts hosts on each end switch (ports 3 on): hosts 0 to
 * hosts - 1 on switch 0, the others on switch len - 1.  Host h's LIDs are
 * 1 + h * lids on, and every switch sends them toward h's end.  The
 * scoring walks paths of len - 1 links, longer than a batched walk keeps
 * where len is large.
 */
#define CH_MAX_HOSTS 20
struct ch_net {
	uint32_t *next;
	uint8_t **lft;
	unsigned *len;
	uint32_t host_sw[2 * CH_MAX_HOSTS];
	uint8_t host_port[2 * CH_MAX_HOSTS];
	uint16_t host_lid[2 * CH_MAX_HOSTS];
	struct oo_eval_net net;
};

static void ch_build(struct ch_net *c, unsigned len, unsigned hosts,
		     unsigned lids)
{
	unsigned stride = 3 + hosts, lft_len = 1 + 2 * hosts * lids;
	unsigned s, h, o;

	memset(c, 0, sizeof(*c));
	c->next = malloc(sizeof(*c->next) * len * stride);
	c->lft = calloc(len, sizeof(*c->lft));
	c->len = calloc(len, sizeof(*c->len));
	ck_assert(c->next && c->lft && c->len);
	for (s = 0; s < len * stride; s++)
		c->next[s] = OO_EVAL_NONE;
	for (s = 0; s < len; s++) {
		if (s)
			c->next[s * stride + 1] = s - 1;
		if (s + 1 < len)
			c->next[s * stride + 2] = s + 1;
		c->lft[s] = malloc(lft_len);
		ck_assert(c->lft[s]);
		memset(c->lft[s], 0xff, lft_len);
		c->len[s] = lft_len;
	}
	for (h = 0; h < 2 * hosts; h++) {
		unsigned end = h < hosts ? 0 : len - 1;

		c->host_sw[h] = end;
		c->host_port[h] = (uint8_t)(3 + h % hosts);
		c->host_lid[h] = (uint16_t)(1 + h * lids);
		for (o = 0; o < lids; o++)
			for (s = 0; s < len; s++)
				c->lft[s][1 + h * lids + o] = (uint8_t)
				    (s == end ? c->host_port[h] :
				     s > end ? 1 : 2);
	}
	eval_net_of(&c->net, len, stride, c->next,
		    (const uint8_t *const *)c->lft, c->len, c->host_sw,
		    c->host_port, c->host_lid, lids);
}

static void ch_free(struct ch_net *c)
{
	unsigned s;

	for (s = 0; s < c->net.num_sw; s++)
		free(c->lft[s]);
	free(c->lft);
	free(c->len);
	free(c->next);
}

static struct oo_eval_score ch_score(const struct ch_net *c,
				     const uint32_t *order, unsigned n,
				     int traffic)
{
	return net_score(&c->net, order, n, traffic, 1000000);
}

START_TEST(eval_walks_paths_longer_than_a_batch_keeps)
{
	static const uint32_t order[] = { 0, 1, 2, 3 };
	static const unsigned lens[] = { 4, 14, 40 };
	struct ch_net c;
	struct oo_eval_score sc;
	unsigned i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		ch_build(&c, lens[i], 2, 1);
		/* round 2 runs two flows each way over every link */
		sc = ch_score(&c, order, 4, 0);
		ck_assert_uint_eq(sc.lost, 0);
		ck_assert_uint_eq(sc.rounds, 3);
		ck_assert_double_eq_tol(sc.eff, (1.0 + 0.5 + 1.0) / 3, 1e-12);
		/* a loop: the middle switch sends host 2's LID back */
		c.lft[lens[i] / 2][3] = 1;
		sc = ch_score(&c, order, 4, 0);
		ck_assert_uint_eq(sc.lost, 2);
		ch_free(&c);
	}
}
END_TEST

START_TEST(eval_loads_a_striped_flow_up_to_its_lost_lid)
{
	static const uint32_t order[] = { 0, 1, 2, 3 };
	static const unsigned lens[] = { 6, 30 };
	struct ch_net c;
	struct oo_eval_score sc;
	unsigned i, lid;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned mid = lens[i] / 2, last = lens[i] - 1;

		/* LMC 1: hosts 0-1 have LIDs 1-4, host 3 LIDs 7 and 8; the
		   flows back to hosts 0 and 1 end at their first switch:
		   lost, they load no link */
		ch_build(&c, lens[i], 2, 2);
		for (lid = 1; lid <= 4; lid++)
			c.lft[last][lid] = 0xff;
		/* host 3's second LID ends at the middle switch: in round 2
		   the links before it carry 0 -> 2's two LIDs and 1 -> 3's
		   two, the one that arrives and the one lost on the way */
		c.lft[mid][8] = 0xff;
		sc = ch_score(&c, order, 4, OO_EVAL_SPREAD);
		ck_assert_uint_eq(sc.lost, 4 + 2);
		ck_assert_double_eq_tol(sc.eff, (1.0 + 0.5 + 1.0) / 3, 1e-12);
		/* its first LID lost instead: the second is not walked, the
		   links before the middle carry three LIDs */
		c.lft[mid][8] = 2;
		c.lft[mid][7] = 0xff;
		sc = ch_score(&c, order, 4, OO_EVAL_SPREAD);
		ck_assert_uint_eq(sc.lost, 4 + 2);
		ck_assert_double_eq_tol(sc.eff, (1.0 + 2.0 / 3 + 1.0) / 3,
					1e-12);
		ch_free(&c);
	}
}
END_TEST

START_TEST(eval_rounds_of_more_flows_than_a_batch)
{
	uint32_t order[2 * CH_MAX_HOSTS];
	struct ch_net c;
	struct oo_eval_score sc;
	unsigned i, k, n = 2 * CH_MAX_HOSTS;
	double want = 0.0;

	for (i = 0; i < n; i++)
		order[i] = i;
	ch_build(&c, 5, CH_MAX_HOSTS, 2);
	/* round k sends min(k, n - k) flows each way over the chain */
	for (k = 1; k < n; k++) {
		unsigned across = k < n - k ? k : n - k;

		want += 2.0 / (2.0 * across > 2.0 ? 2.0 * across : 2.0);
	}
	sc = ch_score(&c, order, n, OO_EVAL_SPREAD);
	ck_assert_uint_eq(sc.lost, 0);
	ck_assert_uint_eq(sc.rounds, n - 1);
	ck_assert_double_eq_tol(sc.eff, want / (n - 1), 1e-12);
	/* base LIDs only: each flow weighs two on its one LID */
	sc = ch_score(&c, order, n, 0);
	ck_assert_double_eq_tol(sc.eff, want / (n - 1), 1e-12);
	ch_free(&c);
}
END_TEST

START_TEST(eval_marks_the_switches_a_block_uses)
{
	static const uint32_t order[] = { 0, 2 };
	struct ev_net e;
	uint8_t mark[EV_SW * EV_SW];
	unsigned s, d;

	ev_setup(&e, 1);
	memset(mark, 0, sizeof(mark));
	oo_eval_mark_paths(&e.net, order, 2,
			   OO_EVAL_MARK_BASE | OO_EVAL_MARK_MORE, mark);
	for (s = 0; s < EV_SW; s++)
		for (d = 0; d < EV_SW; d++) {
			/* toward leaf d: leaf 1 - d, spine 2 and d itself */
			int want = d < 2 && (s == 1 - d || s == 2 || s == d);

			ck_assert_msg(mark[s * EV_SW + d] ==
				      (want ? OO_EVAL_MARK_BASE : 0),
				      "mark[%u][%u] = %u", s, d,
				      mark[s * EV_SW + d]);
		}
}
END_TEST

/*
 * LMC 1: hosts 0 and 2 get LIDs 4-5 and 6-7; base LIDs go over spine 2,
 * base + 1 over spine 3.  Each kind of LID marks its own path only.
 */
static void ev_setup_lmc1(struct ev_net *e)
{
	unsigned h, o;

	ev_setup(e, 0);
	e->net.lids_per_port = 2;
	for (h = 0; h <= 2; h += 2) {
		e->host_lid[h] = 4 + h;
		for (o = 0; o < 2; o++) {
			unsigned lid = 4 + h + o;

			e->lft[h / 2][lid] = 1;
			e->lft[1 - h / 2][lid] = 3 + o;
			e->lft[2][lid] = 1 + h / 2;
			e->lft[3][lid] = 1 + h / 2;
		}
	}
}

START_TEST(eval_marks_base_and_further_offsets_apart)
{
	static const uint32_t order[] = { 0, 2 };
	struct ev_net e;
	uint8_t mark[EV_SW * EV_SW];
	unsigned s, d, kind;

	ev_setup_lmc1(&e);
	for (kind = OO_EVAL_MARK_BASE; kind <= OO_EVAL_MARK_MORE; kind++) {
		unsigned spine = kind == OO_EVAL_MARK_BASE ? 2 : 3;

		memset(mark, 0, sizeof(mark));
		oo_eval_mark_paths(&e.net, order, 2, (uint8_t)kind, mark);
		for (s = 0; s < EV_SW; s++)
			for (d = 0; d < EV_SW; d++) {
				int want = d < 2 && (s == 1 - d ||
						     s == spine || s == d);

				ck_assert_msg(mark[s * EV_SW + d] ==
					      (want ? kind : 0),
					      "kind %u: mark[%u][%u] = %u",
					      kind, s, d,
					      mark[s * EV_SW + d]);
			}
	}
	/* both kinds at once: the leaves carry both bits */
	memset(mark, 0, sizeof(mark));
	oo_eval_mark_paths(&e.net, order, 2,
			   OO_EVAL_MARK_BASE | OO_EVAL_MARK_MORE, mark);
	ck_assert_uint_eq(mark[0 * EV_SW + 1],
			  OO_EVAL_MARK_BASE | OO_EVAL_MARK_MORE);
	ck_assert_uint_eq(mark[2 * EV_SW + 1], OO_EVAL_MARK_BASE);
	ck_assert_uint_eq(mark[3 * EV_SW + 0], OO_EVAL_MARK_MORE);
}
END_TEST

START_TEST(eval_finds_the_lids_a_flow_loses)
{
	struct ev_net e;
	uint8_t lost[4];
	unsigned h;

	/* whole tables: no LID lost */
	ev_setup(&e, 0);
	memset(lost, 0, sizeof(lost));
	ck_assert_int_eq(oo_eval_lost_lids(&e.net, 4, lost), 0);
	ck_assert_int_eq(oo_eval_lost_pairs(&e.net, 4), 0);
	/* spine 2 a dead end for host 2's LID, a loop for host 3's; spine
	   3, which no leaf sends to here, has no entry for host 0's */
	e.lft[2][3] = 0xff;
	e.lft[2][4] = 1;
	e.lft[3][1] = 0xff;
	ck_assert_int_eq(oo_eval_lost_lids(&e.net, 4, lost), 2);
	/* both LIDs lost from the two hosts of leaf 0 */
	ck_assert_int_eq(oo_eval_lost_pairs(&e.net, 4), 4);
	for (h = 0; h < 4; h++)
		ck_assert_msg(lost[h] == (h >= 2), "host %u: %u", h, lost[h]);
	/* the shifted tables send host 3's LID over spine 3 */
	ev_setup(&e, 1);
	e.lft[2][4] = 1;
	memset(lost, 0, sizeof(lost));
	ck_assert_int_eq(oo_eval_lost_lids(&e.net, 4, lost), 0);
	/* LMC 1, hosts 0 and 2 (as host 1 here): host 2's base + 1 (LID
	   7) goes over spine 3, its base LID over spine 2 */
	ev_setup_lmc1(&e);
	e.host_sw[1] = e.host_sw[2];
	e.host_port[1] = e.host_port[2];
	e.host_lid[1] = e.host_lid[2];
	e.lft[3][7] = 0xff;
	memset(lost, 0, sizeof(lost));
	ck_assert_int_eq(oo_eval_lost_lids(&e.net, 2, lost), 1);
	ck_assert_int_eq(oo_eval_lost_pairs(&e.net, 2), 1);
	ck_assert_uint_eq(lost[1 * 2 + 1], 1);
	ck_assert_uint_eq(lost[1 * 2], 0);
	ck_assert_uint_eq(lost[0] | lost[1], 0);
}
END_TEST

/* ev_net's rows of tables, for the polish to change. */
static void ev_rows(struct ev_net *e, uint8_t **rows)
{
	unsigned s;

	for (s = 0; s < e->net.num_sw; s++)
		rows[s] = e->lft[s];
}

/* The polish of ev_net's tables over cells, its last phase on loose. */
static struct oo_polish_result
ev_polish_with(struct ev_net *e, const struct oo_polish_cell *cell,
	       unsigned n, uint64_t entries, uint64_t loose)
{
	struct oo_polish_result res;
	uint8_t *rows[EV_MAX_SW];

	ev_rows(e, rows);
	ck_assert_int_eq(oo_polish(&e->net, rows, e->num_hosts, cell, n,
				   entries, 1000000, loose, &res), 0);
	return res;
}

/* The same without the last phase. */
static struct oo_polish_result ev_polish_cells(struct ev_net *e,
					       const struct oo_polish_cell *cell,
					       unsigned n, uint64_t entries)
{
	return ev_polish_with(e, cell, n, entries, 0);
}

/* The polish of ev_net's tables over its leaf order (base LIDs). */
static struct oo_polish_result ev_polish(struct ev_net *e, uint64_t entries)
{
	static const uint32_t leaf_order[] = { 0, 1, 2, 3 };
	struct oo_polish_cell cell = { leaf_order, 4, 0, 0, 1, 0.0 };

	return ev_polish_cells(e, &cell, 1, entries);
}

/*
 * Of ev_net's tables, only leaf 0's entry for host 2 (LID 3) and leaf 1's
 * for host 0 (LID 1) differ from before: both now lead to spine 3.
 */
static void assert_moved_to_spine_3(const struct ev_net *e,
				    const struct ev_net *before)
{
	unsigned s, lid;

	ck_assert_uint_eq(e->lft[0][3], 4);
	ck_assert_uint_eq(e->lft[1][1], 4);
	for (s = 0; s < EV_SW; s++)
		for (lid = 0; lid < 8; lid++)
			if (!((s == 0 && lid == 3) || (s == 1 && lid == 1)))
				ck_assert_uint_eq(e->lft[s][lid],
						  before->lft[s][lid]);
}

START_TEST(polish_moves_an_entry_off_the_busiest_link)
{
	static const uint32_t leaf_order[] = { 0, 1, 2, 3 };
	struct ev_net e, before;
	struct oo_polish_result res;

	/* aligned: in round 2 both flows out of each leaf take spine 2 */
	ev_setup(&e, 0);
	before = e;
	res = ev_polish(&e, 1000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.movable, 2);
	/* leaf 0 sends host 2 over spine 3, then leaf 1 host 0: round 2
	   is then contention-free, and nothing else gains */
	ck_assert_uint_eq(res.moved, 2);
	assert_moved_to_spine_3(&e, &before);
	ck_assert_double_eq_tol(res.eff_before, (1.0 + 0.5 + 1.0) / 3,
				1e-12);
	ck_assert_double_eq_tol(res.eff_after, 1.0, 1e-12);
	ck_assert_double_eq_tol(ev_score(&e, leaf_order, 4, 1000).eff, 1.0,
				1e-12);
	/* contention-free tables stay as they are */
	ev_setup(&e, 1);
	before = e;
	res = ev_polish(&e, 1000);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_int_eq(memcmp(e.lft, before.lft, sizeof(e.lft)), 0);
}
END_TEST

/*
 * ev_net with doubled cables: spine 3 gone, each leaf's port 4 a second
 * cable to spine 2 (its ports 3 and 4 down to leaves 0 and 1), which
 * sends host 1's and host 3's LIDs down those.  Both ways from a leaf to
 * a remote host meet at spine 2 and go on over the same link: a move
 * changes the load of the cables alone, and a trial only looks.
 */
static void ev_setup_doubled(struct ev_net *e)
{
	ev_setup(e, 0);
	e->next[0 * EV_STRIDE + 4] = 2;
	e->next[1 * EV_STRIDE + 4] = 2;
	e->next[2 * EV_STRIDE + 3] = 0;
	e->next[2 * EV_STRIDE + 4] = 1;
	e->next[3 * EV_STRIDE + 1] = OO_EVAL_NONE;
	e->next[3 * EV_STRIDE + 2] = OO_EVAL_NONE;
	e->lft[2][2] = 3;
	e->lft[2][4] = 4;
}

START_TEST(polish_moves_to_the_second_cable_of_a_pair)
{
	static const uint32_t leaf_order[] = { 0, 1, 2, 3 };
	struct ev_net e;
	struct oo_polish_result res;

	/* round 2 puts both remote flows of a leaf on its port 3; each
	   leaf moves one remote LID to its second cable (port 4) */
	ev_setup_doubled(&e);
	res = ev_polish(&e, 1000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.moved, 2);
	ck_assert_uint_eq(e.lft[0][3], 4);
	ck_assert_uint_eq(e.lft[0][4], 3);
	ck_assert_uint_eq(e.lft[1][1], 4);
	ck_assert_uint_eq(e.lft[1][2], 3);
	ck_assert_double_eq_tol(ev_score(&e, leaf_order, 4, 1000).eff, 1.0,
				1e-12);
	/* the budget's work as when a trial loaded both ways and took
	   them back: the rounds (8 flows over 2 links); 2 trials (both ways
	   twice) and 2 moves (once) of 2 ranks' flows, over both ways of 2
	   links each; the route counts (4 routes over 2 links); the second
	   phase's look at those 4 (each out of the counts and back) */
	ck_assert_uint_eq(res.work, 16 + 2 * (2 + 1) * 2 * (2 + 2) + 8 +
			  4 * 2 * 2);
}
END_TEST

START_TEST(polish_leaves_transit_switches_lost_flows_and_big_nets_alone)
{
	struct ev_net e, before;
	struct oo_polish_result res;

	/* spine 2 sends host 0's LID down to leaf 1, which forwards it
	   up to spine 3: that LID is transit traffic at leaf 1, and port 4
	   busy with it, so leaf 1 moves neither that LID nor another to
	   spine 3; leaf 0 alone moves, host 2's LID to spine 3 */
	ev_setup(&e, 0);
	e.lft[2][1] = 2;
	e.lft[1][1] = 4;
	before = e;
	res = ev_polish(&e, 1000);
	ck_assert_uint_eq(res.movable, 2);
	ck_assert_int_eq(memcmp(e.lft[1], before.lft[1], 8), 0);
	ck_assert_uint_eq(res.moved, 1);
	ck_assert_uint_eq(e.lft[0][3], 4);
	/* 3 rounds of 8 links do not fit in 23 loads */
	ev_setup(&e, 0);
	before = e;
	res = ev_polish(&e, 23);
	ck_assert_int_eq(res.status, OO_POLISH_TOO_BIG);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_int_eq(memcmp(e.lft, before.lft, sizeof(e.lft)), 0);
	/* spine 2 a dead end for host 2's LID: the flows of hosts 0 and 1
	   to it load nothing and leaf 0's entry for it stays; leaf 1 still
	   sends host 0 over spine 3 */
	ev_setup(&e, 0);
	e.lft[2][3] = 0xff;
	res = ev_polish(&e, 1000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.lost, 2);
	ck_assert_uint_eq(res.moved, 1);
	ck_assert_uint_eq(e.lft[0][3], 3);
	ck_assert_uint_eq(e.lft[1][1], 4);
}
END_TEST

/*
 * The route counts even out where no round of the steering cells
 * loses: a job on hosts 0 and 2 steers (contention-free either way), the
 * whole leaf order is held.  Both leaves send both remote LIDs over
 * spine 2; each moves one of them to spine 3.
 */
START_TEST(polish_evens_route_counts_where_no_round_loses)
{
	static const uint32_t job[] = { 0, 2 }, all[] = { 0, 1, 2, 3 };
	struct oo_polish_cell cell[2] = {
		{ job, 2, 0, 0, 1, 0.0 }, { all, 4, 0, 1, 0, 0.0 },
	};
	struct ev_net e, before;
	struct oo_polish_result res;

	ev_setup(&e, 0);
	before = e;
	res = ev_polish_cells(&e, cell, 2, 1000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.moved, 2);
	ck_assert_uint_eq(res.balanced, 2);
	assert_moved_to_spine_3(&e, &before);
	ck_assert_double_eq_tol(res.eff_before, 1.0, 1e-12);
	ck_assert_double_eq_tol(res.eff_after, 1.0, 1e-12);
	/* the whole leaf order gains: its second round is contention-free */
	ck_assert_double_eq_tol(ev_score(&e, all, 4, 1000).eff, 1.0, 1e-12);
	/* counts already even: nothing moves */
	ev_setup(&e, 1);
	before = e;
	res = ev_polish_cells(&e, cell, 2, 1000);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_uint_eq(res.balanced, 0);
	ck_assert_int_eq(memcmp(e.lft, before.lft, sizeof(e.lft)), 0);
}
END_TEST

/*
 * The mean shift efficiency of e's tables over all n! orders of hosts
 * 0..n-1 (n <= EV_MAX_HOSTS; Heap's algorithm).
 */
static double ev_every_order(const struct ev_net *e, unsigned n)
{
	uint32_t order[EV_MAX_HOSTS];
	unsigned c[EV_MAX_HOSTS] = { 0 }, i = 0, count = 1;
	double sum;

	for (i = 0; i < n; i++)
		order[i] = i;
	sum = ev_score(e, order, n, 100000).eff;
	i = 0;
	while (i < n) {
		if (c[i] < i) {
			unsigned j = i % 2 ? c[i] : 0, t = order[j];

			order[j] = order[i];
			order[i] = t;
			sum += ev_score(e, order, n, 100000).eff;
			count++;
			c[i]++;
			i = 0;
		} else {
			c[i++] = 0;
		}
	}
	return sum / count;
}

/*
 * Every leaf sends every remote LID over spine 3; a job on hosts 0, 2
 * and 4 steers, a shuffle of all six does not.  Evening the route counts
 * moves six entries, and the job stays contention-free.  The last phase
 * then moves two more of leaf 1, whose counts stay as even: host 1's
 * LID (2) to spine 3, where leaf 2 sends it too, and host 4's (5) to
 * spine 4, where leaf 0 does.  Fewer flows of a round can meet on the
 * spines' links down: the mean over all 720 rank orders rises.
 */
START_TEST(polish_parts_the_routes_a_random_round_runs_at_once)
{
	static const uint8_t up[EV_MAX_LEAVES][EV_MAX_HOSTS] = { { 0 } };
	static const uint8_t evened[3][6] = {
		{ 1, 2, 4, 4, 4, 3 }, { 4, 4, 1, 2, 3, 3 },
		{ 4, 3, 3, 3, 1, 2 },
	};
	static const uint32_t job[] = { 0, 2, 4 },
	    shuffle[] = { 3, 0, 5, 1, 4, 2 };
	struct oo_polish_cell cell[2] = {
		{ job, 3, 0, 0, 1, 0.0 }, { shuffle, 6, 0, 1, 0, 0.0 },
	};
	struct ev_net t;
	struct oo_polish_result res;
	unsigned s, h;

	/* without the last phase */
	ev_build(&t, 3, up);
	res = ev_polish_with(&t, cell, 2, 100000, 0);
	ck_assert_uint_eq(res.balanced, 6);
	ck_assert_uint_eq(res.parted, 0);
	ck_assert_uint_eq(res.moved, 6);
	for (s = 0; s < 3; s++)
		for (h = 0; h < 6; h++)
			ck_assert_uint_eq(t.lft[s][1 + h], evened[s][h]);
	ck_assert_double_eq_tol(ev_every_order(&t, 6), 0.626667, 1e-6);
	/* with it */
	ev_build(&t, 3, up);
	res = ev_polish_with(&t, cell, 2, 100000, 1000000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.balanced, 6);
	ck_assert_uint_eq(res.parted, 2);
	ck_assert_uint_eq(res.moved, 8);
	for (s = 0; s < 3; s++)
		for (h = 0; h < 6; h++)
			ck_assert_uint_eq(t.lft[s][1 + h],
					  s == 1 && h == 1 ? 3 :
					  s == 1 && h == 4 ? 4 :
					  evened[s][h]);
	ck_assert_double_eq_tol(ev_score(&t, job, 3, 1000).eff, 1.0, 1e-12);
	ck_assert_double_eq_tol(ev_every_order(&t, 6), 0.686667, 1e-6);
}
END_TEST

/* oo_polish_even() of ev_net's tables over cells, within budget. */
static struct oo_polish_result ev_even(struct ev_net *e,
				       const struct oo_polish_cell *cell,
				       unsigned n, uint64_t budget)
{
	struct oo_polish_result res;
	uint8_t *rows[EV_MAX_SW];

	ev_rows(e, rows);
	ck_assert_int_eq(oo_polish_even(&e->net, rows, e->num_hosts, cell, n,
					100000, budget, &res), 0);
	return res;
}

/*
 * Leaf 0 sends three remote LIDs over spine 3 and one over spine 4.  A
 * job on hosts 3, 5, 0 and 4 steers (0.667 however its entries go), a
 * shuffle of all six does not.  Evening the counts moves host 4's LID
 * (5) to spine 4: no round of the job is slower, but one has one more
 * link at its busiest load.  The polish, whose second phase holds the
 * ties, refuses it, its third phase on or off; oo_polish_even() takes
 * it.  The mean over all 720 rank orders rises.  With no budget nothing
 * moves.
 */
START_TEST(polish_even_evens_route_counts_past_a_rounds_ties)
{
	static const uint8_t up[EV_MAX_LEAVES][EV_MAX_HOSTS] = {
		{ 0, 0, 1, 0, 0, 0 }, { 0, 1, 0, 0, 0, 1 },
		{ 0, 1, 1, 0, 0, 0 },
	};
	static const uint32_t job[] = { 3, 5, 0, 4 },
	    shuffle[] = { 4, 3, 5, 2, 0, 1 };
	struct oo_polish_cell cell[2] = {
		{ job, 4, 0, 0, 1, 0.0 }, { shuffle, 6, 0, 1, 0, 0.0 },
	};
	struct ev_net t, before;
	struct oo_polish_result res;
	unsigned s, lid;

	ev_build(&t, 3, up);
	before = t;
	ck_assert_double_eq_tol(ev_score(&t, job, 4, 1000).eff, 2.0 / 3,
				1e-12);
	ck_assert_double_eq_tol(ev_every_order(&t, 6), 0.696667, 1e-6);
	res = ev_polish_cells(&t, cell, 2, 100000);
	ck_assert_uint_eq(res.moved, 0);
	res = ev_polish_with(&t, cell, 2, 100000, 1000000);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_int_eq(memcmp(t.lft, before.lft, sizeof(t.lft)), 0);
	res = ev_even(&t, cell, 2, 0);
	ck_assert_uint_eq(res.moved, 0);
	res = ev_even(&t, cell, 2, 1000000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.balanced, 1);
	ck_assert_uint_eq(res.moved, 1);
	for (s = 0; s < t.net.num_sw; s++)
		for (lid = 0; lid < 16; lid++)
			ck_assert_uint_eq(t.lft[s][lid],
					  s == 0 && lid == 5 ? 4 :
					  before.lft[s][lid]);
	ck_assert_double_eq_tol(ev_score(&t, job, 4, 1000).eff, 2.0 / 3,
				1e-12);
	ck_assert_double_eq_tol(ev_every_order(&t, 6), 0.706667, 1e-6);
	/* evened already: nothing more */
	res = ev_even(&t, cell, 2, 1000000);
	ck_assert_uint_eq(res.moved, 0);
}
END_TEST

/*
 * Two leaves (switches 0 and 1, hosts on ports 1 and 2, LIDs 1 + host)
 * under one spine (switch 2), each cabled to it twice: leaf l's ports 3
 * and 4 lead to spine ports 1 + 2l and 2 + 2l.  Every entry up takes the
 * first cable; the spine sends host h's LID down cable down[h] (0: the
 * first).
 */
#define CAB_STRIDE 5
struct cab_net {
	uint32_t next[3 * CAB_STRIDE];
	uint8_t lft[3][8];
	uint8_t *rows[3];
	unsigned len[3];
	uint32_t host_sw[4];
	uint8_t host_port[4];
	uint16_t host_lid[4];
	struct oo_eval_net net;
};

static void cab_build(struct cab_net *c, const uint8_t down[4])
{
	unsigned s, p, h;

	memset(c, 0, sizeof(*c));
	for (s = 0; s < 3; s++) {
		for (p = 0; p < CAB_STRIDE; p++)
			c->next[s * CAB_STRIDE + p] = OO_EVAL_NONE;
		c->rows[s] = c->lft[s];
		c->len[s] = sizeof(c->lft[s]);
	}
	for (s = 0; s < 2; s++)
		for (p = 0; p < 2; p++) {
			c->next[s * CAB_STRIDE + 3 + p] = 2;
			c->next[2 * CAB_STRIDE + 1 + 2 * s + p] = s;
		}
	for (h = 0; h < 4; h++) {
		c->host_sw[h] = h / 2;
		c->host_port[h] = 1 + h % 2;
		c->host_lid[h] = 1 + h;
		for (s = 0; s < 2; s++)
			c->lft[s][1 + h] = (uint8_t)(s == h / 2 ?
						     1U + h % 2 : 3U);
		c->lft[2][1 + h] = (uint8_t)(1U + 2 * (h / 2) + down[h]);
	}
	eval_net_of(&c->net, 3, CAB_STRIDE, c->next,
		    (const uint8_t *const *)c->rows, c->len, c->host_sw,
		    c->host_port, c->host_lid, 1);
}

/*
 * The spine sends both LIDs of each leaf down one cable of two, and each
 * leaf sends both remote LIDs up its first cable.  Over the leaf order
 * (steering), the counts even out: leaf 0 sends host 2's LID and leaf 1
 * host 0's up its second cable, the spine sends them down theirs, and
 * every round runs at one flow per link (round 2 ran at two).  Only
 * entries toward other switches over a cable of a pair move.  Evened:
 * nothing more; with no budget, nothing.  oo_polish_has_cables() tells
 * this net from ev_net's, whose leaves have one cable to each spine.
 */
START_TEST(polish_cables_evens_parallel_cables)
{
	static const uint8_t one_cable[4] = { 0, 0, 0, 0 };
	static const uint32_t leaf_order[] = { 0, 1, 2, 3 };
	struct oo_polish_cell cell = { leaf_order, 4, 0, 0, 1, 0.0 };
	struct oo_polish_result res;
	struct cab_net c, before;
	struct ev_net single;
	unsigned s, lid;

	ev_setup(&single, 0);
	ck_assert_int_eq(oo_polish_has_cables(&single.net), 0);
	cab_build(&c, one_cable);
	ck_assert_int_eq(oo_polish_has_cables(&c.net), 1);
	before = c;
	ck_assert_double_eq_tol(net_score(&c.net, leaf_order, 4, 0,
					  1000).eff, 5.0 / 6, 1e-12);
	ck_assert_int_eq(oo_polish_cables(&c.net, c.rows, 4, &cell, 1,
					  100000, 0, &res), 0);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_int_eq(memcmp(c.lft, before.lft, sizeof(c.lft)), 0);
	ck_assert_int_eq(oo_polish_cables(&c.net, c.rows, 4, &cell, 1,
					  100000, 1000000, &res), 0);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.moved, 4);
	ck_assert_uint_eq(res.balanced, 4);
	for (s = 0; s < 3; s++)
		for (lid = 0; lid < 8; lid++)
			ck_assert_uint_eq(c.lft[s][lid],
					  s == 0 && lid == 3 ? 4 :
					  s == 1 && lid == 1 ? 4 :
					  s == 2 && lid == 1 ? 2 :
					  s == 2 && lid == 3 ? 4 :
					  before.lft[s][lid]);
	ck_assert_double_eq_tol(net_score(&c.net, leaf_order, 4, 0,
					  1000).eff, 1.0, 1e-12);
	before = c;
	ck_assert_int_eq(oo_polish_cables(&c.net, c.rows, 4, &cell, 1,
					  100000, 1000000, &res), 0);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_int_eq(memcmp(c.lft, before.lft, sizeof(c.lft)), 0);
}
END_TEST

/*
 * Four leaves (0-3, one host each, LIDs 1-4: port 1 to the host, port 2
 * up) under two middle switches (4 over leaves 0-1, 5 over leaves 2-3:
 * ports 1-2 down), each cabled to both tops (6, 7: port 3 to top 6,
 * port 4 to top 7; a top's port 1 to middle 4, port 2 to middle 5).
 * Every route between the halves crosses top 6.  With chain, LIDs 7 and
 * 8 (no host) add the dependencies middle 5 (from top 7) -> top 6 ->
 * middle 4 -> top 7: a route from middle 4 over top 7 down to middle 5
 * would close a cycle with them.
 */
#define WAY_STRIDE 5
#define WAY_SW 8
struct way_net {
	uint32_t next[WAY_SW * WAY_STRIDE];
	uint8_t rport[WAY_SW * WAY_STRIDE];
	uint8_t lft[WAY_SW][9];
	uint8_t *rows[WAY_SW];
	unsigned len[WAY_SW];
	uint32_t host_sw[4];
	uint8_t host_port[4];
	uint16_t host_lid[4];
	struct oo_eval_net net;
	struct oo_reach_net reach;
};

static void way_link(struct way_net *w, unsigned a, unsigned pa, unsigned b,
		     unsigned pb)
{
	w->next[a * WAY_STRIDE + pa] = b;
	w->rport[a * WAY_STRIDE + pa] = (uint8_t)pb;
	w->next[b * WAY_STRIDE + pb] = a;
	w->rport[b * WAY_STRIDE + pb] = (uint8_t)pa;
}

static void way_build(struct way_net *w, int chain)
{
	unsigned s, h, lid, mid, other;

	memset(w, 0, sizeof(*w));
	for (s = 0; s < WAY_SW; s++) {
		for (h = 0; h < WAY_STRIDE; h++)
			w->next[s * WAY_STRIDE + h] = OO_EVAL_NONE;
		w->rows[s] = w->lft[s];
		w->len[s] = sizeof(w->lft[s]);
	}
	for (h = 0; h < 4; h++)
		way_link(w, h, 2, 4 + h / 2, 1 + h % 2);
	for (s = 4; s < 6; s++) {
		way_link(w, s, 3, 6, s - 3);
		way_link(w, s, 4, 7, s - 3);
	}
	for (h = 0; h < 4; h++) {
		lid = 1 + h;
		mid = 4 + h / 2;
		other = 5 - h / 2;
		w->host_sw[h] = h;
		w->host_port[h] = 1;
		w->host_lid[h] = (uint16_t)lid;
		for (s = 0; s < 4; s++)
			w->lft[s][lid] = (uint8_t)(s == h ? 1 : 2);
		w->lft[mid][lid] = (uint8_t)(1 + h % 2);
		w->lft[other][lid] = 3;
		w->lft[6][lid] = w->lft[7][lid] = (uint8_t)(mid - 3);
	}
	if (chain) {
		w->lft[5][7] = 3;
		w->lft[6][7] = 1;
		w->lft[4][7] = 4;
		w->lft[7][8] = 2;
		w->lft[5][8] = 3;
	}
	eval_net_of(&w->net, WAY_SW, WAY_STRIDE, w->next,
		    (const uint8_t *const *)w->rows, w->len, w->host_sw,
		    w->host_port, w->host_lid, 1);
	w->reach.num_sw = WAY_SW;
	w->reach.stride = WAY_STRIDE;
	w->reach.next = w->next;
	w->reach.rport = w->rport;
	w->reach.lft = w->rows;
	w->reach.lft_len = w->len;
	w->reach.lids_per_port = 1;
}

/*
 * Of w's tables, only the entries of middle switch 5 for LID 1 and (with
 * both) of middle switch 4 for LID 3 differ from before: over top 7.
 */
static void assert_ways_moved(const struct way_net *w,
			      const struct way_net *before, int both)
{
	unsigned s, lid;

	for (s = 0; s < WAY_SW; s++)
		for (lid = 0; lid < 9; lid++)
			ck_assert_uint_eq(w->lft[s][lid],
					  (s == 5 && lid == 1) ||
					  (both && s == 4 && lid == 3) ? 4 :
					  before->lft[s][lid]);
}

/*
 * The middle switches send every LID between the halves up to top 6, and
 * round 2 of the leaf order runs two flows over each middle switch's
 * cable to it.  The evening of the cables finds no parallel cable and
 * moves nothing; over the ways (oo_polish_ways()), middle switch 5 sends
 * LID 1 and middle switch 4 LID 3 over top 7 instead (the first move of
 * each that evens the counts), and every round runs at one flow per
 * link.  Where the route of LID 3 (or 4) over top 7 would close a
 * cycle with the dependencies in the graph, it stays, and only LID 1
 * moves; the tables stay free of cycles, which that route would close.
 */
START_TEST(polish_ways_evens_free_of_loops)
{
	static const uint32_t leaf_order[] = { 0, 1, 2, 3 };
	struct oo_polish_cell cell = { leaf_order, 4, 0, 0, 1, 0.0 };
	struct oo_polish_result res;
	struct way_net w, before;
	struct oo_cdg g;

	way_build(&w, 0);
	before = w;
	ck_assert_double_eq_tol(net_score(&w.net, leaf_order, 4, 0,
					  1000).eff, 5.0 / 6, 1e-12);
	ck_assert_int_eq(oo_polish_cables(&w.net, w.rows, 4, &cell, 1,
					  100000, 1000000, &res), 0);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_int_eq(memcmp(w.lft, before.lft, sizeof(w.lft)), 0);
	ck_assert_int_eq(oo_cdg_init(&g, &w.reach), 1);
	ck_assert_int_eq(oo_polish_ways(&w.net, w.rows, 4, &cell, 1,
					100000, 1000000, &g, &res), 0);
	oo_cdg_free(&g);
	ck_assert_uint_eq(res.moved, 2);
	assert_ways_moved(&w, &before, 1);
	ck_assert_double_eq_tol(net_score(&w.net, leaf_order, 4, 0,
					  1000).eff, 1.0, 1e-12);
	ck_assert_int_eq(oo_reach_acyclic(&w.reach), 1);

	way_build(&w, 1);
	before = w;
	ck_assert_int_eq(oo_cdg_init(&g, &w.reach), 1);
	ck_assert_int_eq(oo_polish_ways(&w.net, w.rows, 4, &cell, 1,
					100000, 1000000, &g, &res), 0);
	oo_cdg_free(&g);
	ck_assert_uint_eq(res.moved, 1);
	assert_ways_moved(&w, &before, 0);
	ck_assert_double_eq_tol(net_score(&w.net, leaf_order, 4, 0,
					  1000).eff, 5.0 / 6, 1e-12);
	ck_assert_int_eq(oo_reach_acyclic(&w.reach), 1);
	w.lft[4][3] = 4;
	ck_assert_int_eq(oo_reach_acyclic(&w.reach), 0);
}
END_TEST

/*
 * Of e's tables, only two entries differ from before: switch sw[i]'s for
 * LID lid[i], now port[i].
 */
static void assert_two_moved(const struct ev_net *e,
			     const struct ev_net *before, const unsigned sw[2],
			     const unsigned lid[2], const unsigned port[2])
{
	unsigned s, l, n = 0;

	for (s = 0; s < e->net.num_sw; s++)
		for (l = 0; l < 8; l++) {
			if (e->lft[s][l] == before->lft[s][l])
				continue;
			ck_assert_uint_lt(n, 2);
			ck_assert_uint_eq(s, sw[n]);
			ck_assert_uint_eq(l, lid[n]);
			ck_assert_uint_eq(e->lft[s][l], port[n]);
			n++;
		}
	ck_assert_uint_eq(n, 2);
}

/*
 * Two jobs steer, each a group of its own.  No single move raises one
 * without lowering the other, but leaf 0 swapping the spines of hosts 2
 * and 3 raises the first (0.75 -> 0.875) and keeps the second
 * contention-free.
 */
START_TEST(polish_swaps_two_entries_where_no_single_move_gains)
{
	static const uint8_t up[EV_MAX_LEAVES][EV_MAX_HOSTS] = {
		{ 0, 0, 0, 1, 0, 0 }, { 0, 1, 0, 0, 1, 1 },
		{ 1, 1, 0, 0, 0, 0 },
	};
	static const uint32_t a[] = { 5, 1, 0, 4, 2 }, b[] = { 3, 1, 2, 0 };
	struct oo_polish_cell cell[2] = {
		{ a, 5, 0, 0, 1, 0.0 }, { b, 4, 0, 1, 1, 0.0 },
	};
	/* LIDs 3 and 4 (hosts 2 and 3) at leaf 0: spines 3 and 4 swapped */
	static const unsigned sw[2] = { 0, 0 }, lid[2] = { 3, 4 },
	    port[2] = { 4, 3 };
	struct ev_net t, before;
	struct oo_polish_result res;

	ev_build(&t, 3, up);
	before = t;
	res = ev_polish_cells(&t, cell, 2, 100000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.swapped, 2);
	ck_assert_uint_eq(res.moved, 2 + res.balanced);
	ck_assert_uint_eq(res.rescued, 0);
	ck_assert_double_eq_tol(res.eff_before, 0.75 + 1.0, 1e-12);
	ck_assert_double_eq_tol(res.eff_after, 0.875 + 1.0, 1e-12);
	ck_assert_double_eq_tol(ev_score(&t, a, 5, 1000000).eff, 0.875, 1e-12);
	ck_assert_double_eq_tol(ev_score(&t, b, 4, 1000000).eff, 1.0, 1e-12);
	assert_two_moved(&t, &before, sw, lid, port);
}
END_TEST

/*
 * Two jobs steer, each a group of its own, at 0.7 and 0.8.  No move
 * raises one without lowering the other, so without floors nothing
 * moves.  With the first 0.05 below its floor (0.75) and the second 0.2
 * above its own (0.6), the last stage spends the second's lead: leaf 0
 * sends host 4 over spine 3 (0.8 and 0.6), leaf 1 host 1 over spine 4
 * (1.0 and 0.7), then swaps host 1 back with host 5 (1.0 and 0.6).
 */
START_TEST(polish_spends_a_lead_to_raise_a_group_below_its_floor)
{
	static const uint8_t up[EV_MAX_LEAVES][EV_MAX_HOSTS] = {
		{ 0, 0, 0, 1, 1, 1 }, { 1, 0, 0, 0, 0, 0 },
		{ 1, 0, 0, 1, 0, 0 },
	};
	static const uint32_t a[] = { 5, 4, 3, 1, 0, 2 },
	    b[] = { 5, 2, 4, 1, 0, 3 };
	struct oo_polish_cell cell[2] = {
		{ a, 6, 0, 0, 1, 0.0 }, { b, 6, 0, 1, 1, 0.0 },
	};
	/* leaf 0 sends host 4 (LID 5) over spine 3, leaf 1 host 5 (LID 6)
	   over spine 4 */
	static const unsigned sw[2] = { 0, 1 }, lid[2] = { 5, 6 },
	    port[2] = { 3, 4 };
	struct ev_net t, before;
	struct oo_polish_result res;

	ev_build(&t, 3, up);
	before = t;
	res = ev_polish_cells(&t, cell, 2, 100000);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_int_eq(memcmp(t.lft, before.lft, sizeof(t.lft)), 0);
	ck_assert_double_eq_tol(res.eff_before, 0.7 + 0.8, 1e-12);
	cell[0].lead = 0.7 - 0.75;
	cell[1].lead = 0.8 - 0.6;
	res = ev_polish_cells(&t, cell, 2, 100000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.rescued, 4);
	ck_assert_uint_eq(res.swapped, 2);
	ck_assert_uint_eq(res.moved, 4);
	ck_assert_double_eq_tol(res.eff_after, 1.0 + 0.6, 1e-12);
	ck_assert_double_eq_tol(ev_score(&t, a, 6, 1000000).eff, 1.0, 1e-12);
	ck_assert_double_eq_tol(ev_score(&t, b, 6, 1000000).eff, 0.6, 1e-12);
	assert_two_moved(&t, &before, sw, lid, port);
	/* a floor out of reach (1.2): the last stage's moves are taken
	   back, the tables stay as they were */
	ev_build(&t, 3, up);
	cell[0].lead = 0.7 - 1.2;
	res = ev_polish_cells(&t, cell, 2, 100000);
	ck_assert_uint_gt(res.undone, 0);
	ck_assert_uint_eq(res.rescued, 0);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_double_eq_tol(res.eff_after, 0.7 + 0.8, 1e-12);
	ck_assert_int_eq(memcmp(t.lft, before.lft, sizeof(t.lft)), 0);
}
END_TEST

/*
 * A cell that does not steer (a random order's sample) is a group that
 * no move may lower, but the polish loads its rounds only for trials
 * whose gain in the steering cells would take them: it changes no move
 * it does not block, and costs less than a cell that steers.  Where
 * every move that raises job a lowers job b, b blocks them all as well
 * when it does not steer, and a alone moves.
 */
START_TEST(polish_weighs_random_samples_only_for_trials_that_gain)
{
	static const uint8_t swap_up[EV_MAX_LEAVES][EV_MAX_HOSTS] = {
		{ 0, 0, 0, 1, 0, 0 }, { 0, 1, 0, 0, 1, 1 },
		{ 1, 1, 0, 0, 0, 0 },
	};
	static const uint8_t lead_up[EV_MAX_LEAVES][EV_MAX_HOSTS] = {
		{ 0, 0, 0, 1, 1, 1 }, { 1, 0, 0, 0, 0, 0 },
		{ 1, 0, 0, 1, 0, 0 },
	};
	static const uint32_t a[] = { 5, 1, 0, 4, 2 }, b[] = { 3, 1, 2, 0 },
	    c[] = { 5, 4, 3, 1, 0, 2 }, d[] = { 5, 2, 4, 1, 0, 3 };
	struct oo_polish_cell cell[3] = {
		{ a, 5, 0, 0, 1, 0.0 }, { b, 4, 0, 1, 1, 0.0 },
		{ a, 5, 0, 2, 0, 0.0 },
	};
	struct oo_polish_cell lead[2] = {
		{ c, 6, 0, 0, 1, 0.0 }, { d, 6, 0, 1, 0, 0.0 },
	};
	struct ev_net t, steered, before;
	struct oo_polish_result alone, res;

	ev_build(&steered, 3, swap_up);
	alone = ev_polish_cells(&steered, cell, 2, 100000);
	ck_assert_uint_eq(alone.swapped, 2);
	/* a copy of job a that does not steer: the same two moves */
	ev_build(&t, 3, swap_up);
	res = ev_polish_cells(&t, cell, 3, 100000);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.moved, alone.moved);
	ck_assert_uint_eq(res.swapped, alone.swapped);
	ck_assert_int_eq(memcmp(t.lft, steered.lft, sizeof(t.lft)), 0);
	ck_assert_double_eq_tol(res.eff_after, alone.eff_after, 1e-12);
	/* its rounds are those of job a, loaded to start, for the moves
	   and for the trials that gain (104 links), not for every trial
	   (256, about half of what both jobs take: 536) */
	ck_assert_uint_gt(res.work, alone.work);
	ck_assert_uint_lt(res.work - alone.work, alone.work / 4);
	/* job b lowered by every move that raises job a, steering or not:
	   nothing moves */
	ev_build(&t, 3, lead_up);
	before = t;
	res = ev_polish_cells(&t, lead, 2, 100000);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_int_eq(memcmp(t.lft, before.lft, sizeof(t.lft)), 0);
	/* without job b, job a gains */
	res = ev_polish_cells(&t, lead, 1, 100000);
	ck_assert_uint_gt(res.moved, 0);
	ck_assert_double_eq_tol(res.eff_after, 1.0, 1e-12);
}
END_TEST

/*
 * ev_net at LMC 1 with every host's two LIDs (host h: 8 + 2h and 9 + 2h),
 * both leaves sending every remote LID over spine 2: in round 2 of the
 * leaf order each leaf's link up to it carries two flows, base and
 * further LIDs alike.
 */
static void ev_setup_lmc1_aligned(struct ev_net *e)
{
	unsigned s, h, o;

	ev_setup(e, 0);
	e->net.lids_per_port = 2;
	for (s = 0; s < EV_SW; s++)
		memset(e->lft[s], 0xff, sizeof(e->lft[s]));
	for (h = 0; h < 4; h++) {
		e->host_lid[h] = (uint16_t)(8 + 2 * h);
		for (o = 0; o < 2; o++) {
			unsigned lid = 8 + 2 * h + o;

			e->lft[h / 2][lid] = (uint8_t)(1 + h % 2);
			e->lft[1 - h / 2][lid] = 3;
			e->lft[2][lid] = (uint8_t)(1 + h / 2);
			e->lft[3][lid] = (uint8_t)(1 + h / 2);
		}
	}
}

START_TEST(polish_offsets_moves_the_further_offsets_alone)
{
	static const uint32_t leaf_order[] = { 0, 1, 2, 3 };
	struct oo_polish_cell cell[2] = {
		{ leaf_order, 4, 0, 0, 1, 0.0 },
		{ leaf_order, 4, OO_EVAL_SPREAD, 1, 1, 0.0 },
	};
	struct ev_net e, before;
	struct oo_polish_result res;
	uint8_t *rows[EV_MAX_SW];
	unsigned s, h, lid, base_moved = 0;

	ev_setup_lmc1_aligned(&e);
	before = e;
	for (s = 0; s < EV_SW; s++)
		rows[s] = e.lft[s];
	ck_assert_int_eq(oo_polish_offsets(&e.net, rows, 4, cell, 2, 1000,
					   1000000, 0, &res), 0);
	/* each leaf sends both remote hosts' further LIDs over spine 3:
	   round 2 of the striped traffic is then contention-free; the base
	   LIDs, which would gain as much, stay over spine 2 */
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	ck_assert_uint_eq(res.moved, 4);
	for (s = 0; s < EV_SW; s++)
		for (lid = 0; lid < sizeof(e.lft[s]); lid++) {
			h = (lid - 8) / 2;
			if (s < 2 && lid >= 8 && lid % 2 && h / 2 != s)
				ck_assert_uint_eq(e.lft[s][lid], 4);
			else
				ck_assert_uint_eq(e.lft[s][lid],
						  before.lft[s][lid]);
		}
	ck_assert_double_eq_tol(net_score(&e.net, leaf_order, 4,
					  OO_EVAL_SPREAD, 1000).eff, 1.0,
				1e-12);
	ck_assert_double_eq_tol(net_score(&e.net, leaf_order, 4, 0,
					  1000).eff, (1.0 + 0.5 + 1.0) / 3,
				1e-12);
	/* oo_polish() moves the base LIDs too */
	ev_setup_lmc1_aligned(&e);
	ck_assert_int_eq(oo_polish(&e.net, rows, 4, cell, 2, 1000, 1000000,
				   0, &res), 0);
	for (s = 0; s < 2; s++)
		for (h = 0; h < 4; h++)
			if (h / 2 != s)
				base_moved += e.lft[s][8 + 2 * h] != 3;
	ck_assert_uint_ne(base_moved, 0);
	ck_assert_double_eq_tol(net_score(&e.net, leaf_order, 4, 0,
					  1000).eff, 1.0, 1e-12);
}
END_TEST

/* oo_polish_kicks() on ev_net's tables over cells, kicks of them. */
static struct oo_polish_result ev_kicks(struct ev_net *e,
				       const struct oo_polish_cell *cell,
				       unsigned n, uint64_t budget,
				       unsigned kicks, unsigned first_offset)
{
	struct oo_polish_result res;
	uint8_t *rows[EV_MAX_SW];

	ev_rows(e, rows);
	ck_assert_int_eq(oo_polish_kicks(&e->net, rows, e->num_hosts, cell, n,
					 100000, budget, kicks, first_offset,
					 &res), 0);
	return res;
}

/*
 * Three leaves, the leaf order alone.  The polish stops at 0.9: leaf 0
 * sends hosts 2 and 4 over spine 3, hosts 3 and 5 over spine 4, and no
 * single move or swap of one switch raises a round.  A kick that moves
 * some of leaf 0's entries at random, mended by the sweeps, finds the
 * contention-free tables: leaf 0 with its four entries the other way
 * round, the other leaves as they were; no entry is hot then, and the
 * search stops.  The same kicks again give the same tables.
 */
START_TEST(polish_kicks_leave_a_local_optimum)
{
	static const uint8_t up[EV_MAX_LEAVES][EV_MAX_HOSTS] = {
		{ 0, 0, 0, 1, 0, 1 }, { 0 }, { 0 },
	};
	static const uint32_t leaf_order[] = { 0, 1, 2, 3, 4, 5 };
	static const uint8_t leaf0[] = { 1, 2, 4, 3, 4, 3 };
	struct oo_polish_cell cell = { leaf_order, 6, 0, 0, 1, 0.0 };
	struct ev_net t, polished, again;
	struct oo_polish_result res;
	unsigned s, h;

	ev_build(&t, 3, up);
	res = ev_polish_cells(&t, &cell, 1, 100000);
	ck_assert_double_eq_tol(res.eff_after, 0.9, 1e-12);
	for (h = 0; h < 6; h++)
		ck_assert_uint_eq(t.lft[0][1 + h], h < 2 ? 1 + h : 3 + h % 2);
	polished = t;
	res = ev_kicks(&t, &cell, 1, 1000000, 50, 0);
	ck_assert_int_eq(res.status, OO_POLISH_DONE);
	/* the third kick gets there; the fourth finds no link at a round's
	   busiest load above one flow, and the search ends */
	ck_assert_uint_eq(res.kicks, 3);
	ck_assert_uint_eq(res.kicked, 1);
	ck_assert_uint_eq(res.moved, 4);
	ck_assert_double_eq_tol(res.eff_before, 0.9, 1e-12);
	ck_assert_double_eq_tol(res.eff_after, 1.0, 1e-12);
	ck_assert_double_eq_tol(ev_score(&t, leaf_order, 6, 1000000).eff, 1.0,
				1e-12);
	for (h = 0; h < 6; h++)
		ck_assert_uint_eq(t.lft[0][1 + h], leaf0[h]);
	for (s = 1; s < t.net.num_sw; s++)
		ck_assert_int_eq(memcmp(t.lft[s], polished.lft[s],
					sizeof(t.lft[s])), 0);
	/* (an ev_net points into itself: built anew, not copied) */
	ev_build(&again, 3, up);
	ev_polish_cells(&again, &cell, 1, 100000);
	ev_kicks(&again, &cell, 1, 1000000, 50, 0);
	ck_assert_int_eq(memcmp(again.lft, t.lft, sizeof(t.lft)), 0);
	/* no kicks, no budget, or no LID offset that may move: as before */
	for (h = 0; h < 3; h++) {
		ev_build(&again, 3, up);
		ev_polish_cells(&again, &cell, 1, 100000);
		res = ev_kicks(&again, &cell, 1, h == 1 ? 0 : 1000000,
			       h == 0 ? 0 : 50, h == 2 ? 1 : 0);
		ck_assert_uint_eq(res.kicked, 0);
		ck_assert_uint_eq(res.moved, 0);
		ck_assert_int_eq(memcmp(again.lft, polished.lft,
					sizeof(t.lft)), 0);
	}
}
END_TEST

/*
 * The leaf order steers, a random order does not.  Alone, the leaf order
 * polishes to 1.0; with the random order, which no move may lower, the
 * polish stops at 0.9, and every kick that raises the leaf order lowers
 * the random order: the kicks move entries (work is done) and take each
 * back, and the tables and both scores stay as the polish left them.
 */
START_TEST(polish_kicks_lower_no_group)
{
	static const uint8_t up[EV_MAX_LEAVES][EV_MAX_HOSTS] = {
		{ 0, 0, 0, 1, 0, 0 }, { 0 }, { 0 },
	};
	static const uint32_t a[] = { 0, 1, 2, 3, 4, 5 },
	    b[] = { 5, 2, 4, 1, 0, 3 };
	struct oo_polish_cell cell[2] = {
		{ a, 6, 0, 0, 1, 0.0 }, { b, 6, 0, 1, 0, 0.0 },
	};
	struct ev_net t, polished;
	struct oo_polish_result res;
	double random_before;

	ev_build(&t, 3, up);
	res = ev_polish_cells(&t, cell, 1, 100000);
	ck_assert_double_eq_tol(res.eff_after, 1.0, 1e-12);
	ev_build(&t, 3, up);
	res = ev_polish_cells(&t, cell, 2, 100000);
	ck_assert_double_eq_tol(res.eff_after, 0.9, 1e-12);
	polished = t;
	random_before = ev_score(&t, b, 6, 1000000).eff;
	res = ev_kicks(&t, cell, 2, 1000000, 50, 0);
	ck_assert_uint_eq(res.kicks, 50);
	ck_assert_uint_eq(res.kicked, 0);
	ck_assert_uint_eq(res.moved, 0);
	ck_assert_uint_gt(res.work, 0);
	ck_assert_double_eq_tol(res.eff_after, 0.9, 1e-12);
	ck_assert_int_eq(memcmp(t.lft, polished.lft, sizeof(t.lft)), 0);
	ck_assert_double_eq_tol(ev_score(&t, a, 6, 1000000).eff, 0.9, 1e-12);
	ck_assert_double_eq_tol(ev_score(&t, b, 6, 1000000).eff,
				random_before, 1e-12);
}
END_TEST

START_TEST(eval_worse_and_shuffle)
{
	struct oo_eval_score a = { 0.9, 1, 3 }, b = { 0.5, 0, 3 };
	uint32_t x[50], y[50], seen[50];
	unsigned i;

	ck_assert(oo_eval_worse(&a, &b));	/* a flow lost weighs most */
	ck_assert(!oo_eval_worse(&b, &a));
	a.lost = 0;
	ck_assert(!oo_eval_worse(&a, &b));
	ck_assert(oo_eval_worse(&b, &a));
	b.eff = a.eff;
	ck_assert(!oo_eval_worse(&a, &b) && !oo_eval_worse(&b, &a));

	for (i = 0; i < 50; i++)
		x[i] = y[i] = i;
	oo_eval_shuffle(x, 50, 1);
	oo_eval_shuffle(y, 50, 1);
	ck_assert_mem_eq(x, y, sizeof(x));
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 50; i++)
		seen[x[i]]++;
	for (i = 0; i < 50; i++)
		ck_assert_uint_eq(seen[i], 1);
	oo_eval_shuffle(y, 50, 2);
	ck_assert(memcmp(x, y, sizeof(x)));
}
END_TEST

/*
 * Leaf orders with the leaves shuffled: hosts 10..19 over leaves of 3, 3,
 * 2 and 2 hosts (key: the leaf), listed in leaf order, one host (18) out
 * of its place in the input to check that runs, not keys, are moved.
 */
START_TEST(eval_shuffle_runs_keeps_each_leaf_together)
{
	uint32_t key[20] = { 0 };
	uint32_t order[10] = { 10, 11, 12, 13, 14, 15, 16, 17, 19, 18 };
	uint32_t run[10], a[10], b[10], c[10], seen[20] = { 0 };
	unsigned i, r, moved = 0;

	for (i = 10; i < 20; i++)
		key[i] = i < 13 ? 0 : i < 16 ? 1 : i < 18 ? 2 : 3;
	r = oo_eval_shuffle_runs(order, key, 10, 1, run, a);
	ck_assert_uint_eq(r, 4);
	for (i = 0; i < 10; i++)
		seen[a[i]]++;
	for (i = 10; i < 20; i++)
		ck_assert_uint_eq(seen[i], 1);
	/* each leaf's hosts next to each other, in the order given */
	for (i = 0; i < 10; i++) {
		unsigned j = 0;

		while (order[j] != a[i])
			j++;
		if (i && key[a[i]] == key[a[i - 1]])
			ck_assert_uint_eq(order[j - 1], a[i - 1]);
		else
			ck_assert(!j || key[order[j - 1]] != key[order[j]]);
	}
	ck_assert_uint_eq(oo_eval_shuffle_runs(order, key, 10, 1, run, b), 4);
	ck_assert_mem_eq(a, b, sizeof(a));
	for (i = 2; i < 12 && !moved; i++) {
		oo_eval_shuffle_runs(order, key, 10, i, run, c);
		moved = memcmp(a, c, sizeof(a)) != 0;
	}
	ck_assert(moved);
	/* one leaf: nothing to shuffle */
	ck_assert_uint_eq(oo_eval_shuffle_runs(order, key, 3, 5, run, c), 1);
	ck_assert_mem_eq(c, order, 3 * sizeof(*c));
}
END_TEST

START_TEST(aggregation_nodes_are_known_by_name)
{
	ck_assert(oo_is_aggregation_node("Mellanox Technologies "
					 "Aggregation Node"));
	ck_assert(oo_is_aggregation_node("sw-l1-03 AGGREGATION NODE"));
	ck_assert(!oo_is_aggregation_node("node07 HCA-1"));
	ck_assert(!oo_is_aggregation_node("Aggregation"));
	ck_assert(!oo_is_aggregation_node(NULL));
}
END_TEST

/*
 * A switch graph for oo_rank_tree(): cables (a, port a, b, port b) and
 * hosts per switch; switches are ordered by index.
 */
#define RG_MAX_SW 16
#define RG_STRIDE 16
struct rg {
	unsigned first[RG_MAX_SW + 1];
	struct oo_rank_link link[RG_MAX_SW * RG_STRIDE];
	unsigned hosts[RG_MAX_SW];
	unsigned order[RG_MAX_SW];
	struct oo_rank_graph g;
	struct oo_rank_tree t;
};

static void rg_graph(struct rg *r, unsigned num_sw, const unsigned *hosts,
		     const unsigned (*cable)[4], unsigned cables)
{
	unsigned s, port, c, n = 0;

	memset(r, 0, sizeof(*r));
	for (s = 0; s < num_sw; s++) {
		r->first[s] = n;
		r->hosts[s] = hosts[s];
		r->order[s] = s;
		for (port = 1; port < RG_STRIDE; port++)
			for (c = 0; c < cables; c++) {
				const unsigned *k = cable[c];

				if (k[0] == s && k[1] == port) {
					r->link[n].to = k[2];
					r->link[n++].port = (uint8_t)port;
				} else if (k[2] == s && k[3] == port) {
					r->link[n].to = k[0];
					r->link[n++].port = (uint8_t)port;
				}
			}
	}
	r->first[num_sw] = n;
	r->g.num_sw = num_sw;
	r->g.stride = RG_STRIDE;
	r->g.first = r->first;
	r->g.link = r->link;
	r->g.hosts = r->hosts;
	r->g.order = r->order;
}

static void rg_build(struct rg *r, unsigned num_sw, const unsigned *hosts,
		     const unsigned (*cable)[4], unsigned cables)
{
	rg_graph(r, num_sw, hosts, cable, cables);
	ck_assert_int_eq(oo_rank_tree(&r->g, &r->t), 0);
}

static int rg_slot(const struct rg *r, unsigned s, unsigned port)
{
	return r->t.slot[s * RG_STRIDE + port];
}

/*
 * Four leaves (0-3, hosts on ports 1-4, up ports 5-8) and four spines
 * (4-7, down ports 1-4); leaf l, up port 5 + j goes to spine 4 + j.
 */
static unsigned two_level_cables(unsigned (*cable)[4], int drop)
{
	unsigned l, j, n = 0;

	for (l = 0; l < 4; l++)
		for (j = 0; j < 4; j++) {
			if (drop && l == 1 && j == 2)
				continue;	/* a missing cable */
			cable[n][0] = l;
			cable[n][1] = 5 + j;
			cable[n][2] = 4 + j;
			cable[n][3] = 1 + l;
			n++;
		}
	return n;
}

START_TEST(rank_two_level_tree)
{
	static const unsigned hosts[8] = { 4, 4, 4, 4, 0, 0, 0, 0 };
	unsigned cable[16][4], l, j;
	struct rg r;

	rg_build(&r, 8, hosts, cable, two_level_cables(cable, 0));
	ck_assert_uint_eq(r.t.num_levels, 2);
	for (l = 0; l < 4; l++) {
		ck_assert_uint_eq(r.t.level[l], 0);
		ck_assert_uint_eq(r.t.level[4 + l], 1);
		ck_assert_uint_eq(r.t.rank[4 + l], l);
		ck_assert_uint_eq(r.t.slots[l], 4);
		for (j = 0; j < 4; j++)
			ck_assert_int_eq(rg_slot(&r, l, 5 + j), (int)j);
	}
	ck_assert_uint_eq(r.t.level_slots[0], 4);
	ck_assert_uint_eq(r.t.divisor[1], 4);
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(rank_missing_cable_leaves_a_hole)
{
	static const unsigned hosts[8] = { 4, 4, 4, 4, 0, 0, 0, 0 };
	unsigned cable[16][4];
	struct rg r;

	rg_build(&r, 8, hosts, cable, two_level_cables(cable, 1));
	/* leaf 1 keeps slots 0, 1 and 3: slot 2 (spine 6) is a hole */
	ck_assert_uint_eq(r.t.slots[1], 4);
	ck_assert_int_eq(rg_slot(&r, 1, 5), 0);
	ck_assert_int_eq(rg_slot(&r, 1, 6), 1);
	ck_assert_int_eq(rg_slot(&r, 1, 7), -1);
	ck_assert_int_eq(rg_slot(&r, 1, 8), 3);
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(rank_hosts_on_a_spine_keep_it_a_spine)
{
	/* two management HCAs on spine 5 */
	static const unsigned hosts[8] = { 4, 4, 4, 4, 0, 2, 0, 0 };
	unsigned cable[16][4], l;
	struct rg r;

	rg_build(&r, 8, hosts, cable, two_level_cables(cable, 0));
	ck_assert_uint_eq(r.t.num_levels, 2);
	for (l = 0; l < 4; l++) {
		ck_assert_uint_eq(r.t.level[l], 0);
		ck_assert_uint_eq(r.t.level[4 + l], 1);
		ck_assert_uint_eq(r.t.slots[l], 4);
	}
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(rank_hosts_on_a_core_keep_it_a_core)
{
	/*
	 * Three levels: pod A (leaves 0, 1; pod spines 4, 5), pod B (leaves
	 * 2, 3; pod spines 6, 7), cores 8 (over 4 and 6) and 9 (over 5 and
	 * 7).  A management HCA on core 8, which is cabled to pod spines
	 * only, and one host on leaf 3: the core stays a core (it is above
	 * the leaves of both pods), the sparse leaf stays a leaf.
	 */
	static const unsigned hosts[10] = { 4, 4, 4, 1, 0, 0, 0, 0, 1, 0 };
	static const unsigned cable[][4] = {
		{ 0, 5, 4, 1 }, { 0, 6, 5, 1 }, { 1, 5, 4, 2 },
		{ 1, 6, 5, 2 }, { 2, 5, 6, 1 }, { 2, 6, 7, 1 },
		{ 3, 5, 6, 2 }, { 3, 6, 7, 2 },
		{ 4, 3, 8, 1 }, { 6, 3, 8, 2 }, { 5, 3, 9, 1 },
		{ 7, 3, 9, 2 },
	};
	uint8_t leaf[10];
	unsigned s;
	struct rg r;

	rg_build(&r, 10, hosts, cable, 12);
	ck_assert_uint_eq(r.t.num_levels, 3);
	for (s = 0; s < 4; s++)
		ck_assert_uint_eq(r.t.level[s], 0);
	for (s = 4; s < 8; s++)
		ck_assert_uint_eq(r.t.level[s], 1);
	ck_assert_uint_eq(r.t.level[8], 2);
	ck_assert_uint_eq(r.t.level[9], 2);
	/* what updn's leaf-root rule asks */
	ck_assert_int_eq(oo_rank_leaves(&r.g, leaf), 0);
	for (s = 0; s < 10; s++)
		ck_assert_uint_eq(leaf[s], s < 4);
	ck_assert_uint_eq(r.t.level_slots[0], 2);
	ck_assert_uint_eq(r.t.level_slots[1], 1);
	ck_assert_uint_eq(r.t.divisor[1], 2);
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(rank_hosts_on_a_line_asic_over_one_edge_keep_it_a_line)
{
	/*
	 * A small director: line ASICs 2 and 3 (a management HCA on each)
	 * over one edge each (0 and 1, four hosts), fabric ASICs 4 and 5
	 * over both lines.  A line has as many cables to a leaf as hosts:
	 * not more, so it is taken for a spine by its few hosts (a quarter
	 * of a typical leaf's), not for a leaf that would leave updn no
	 * root (shape 29 of docs/shapes.md fell back to minhop).
	 */
	static const unsigned hosts[6] = { 4, 4, 1, 1, 0, 0 };
	static const unsigned level[6] = { 0, 0, 1, 1, 2, 2 };
	static const unsigned cable[][4] = {
		{ 0, 5, 2, 1 }, { 1, 5, 3, 1 },
		{ 2, 2, 4, 1 }, { 2, 3, 5, 1 }, { 3, 2, 4, 2 },
		{ 3, 3, 5, 2 },
	};
	uint8_t leaf[6];
	unsigned s;
	struct rg r;

	rg_build(&r, 6, hosts, cable, 6);
	ck_assert_uint_eq(r.t.num_levels, 3);
	ck_assert_int_eq(oo_rank_leaves(&r.g, leaf), 0);
	for (s = 0; s < 6; s++) {
		ck_assert_uint_eq(r.t.level[s], level[s]);
		ck_assert_uint_eq(leaf[s], s < 2);
	}
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(rank_jobs_run_on_the_leaves_only)
{
	/*
	 * Four leaves and four spines, two management HCAs on spine 5: the
	 * jobs run on the leaves' hosts.  Without those HCAs, the same.
	 */
	static const unsigned mgmt[8] = { 4, 4, 4, 4, 0, 2, 0, 0 };
	static const unsigned none[8] = { 4, 4, 4, 4, 0, 0, 0, 0 };
	unsigned cable[16][4], n = two_level_cables(cable, 0), s;
	uint8_t job[8];
	struct rg r;

	rg_graph(&r, 8, mgmt, cable, n);
	ck_assert_int_eq(oo_rank_job_switches(&r.g, job), 0);
	for (s = 0; s < 8; s++)
		ck_assert_uint_eq(job[s], s < 4);
	rg_graph(&r, 8, none, cable, n);
	ck_assert_int_eq(oo_rank_job_switches(&r.g, job), 0);
	for (s = 0; s < 8; s++)
		ck_assert_uint_eq(job[s], s < 4);
}
END_TEST

START_TEST(rank_jobs_cross_a_trunk_from_a_lone_host)
{
	/*
	 * The 2008 mail's fabric: switch 0 with one host joined to switch 1
	 * with four by four parallel cables.  The ranking takes switch 0 for
	 * a spine (more cables to host switches than hosts); the lone host
	 * still runs jobs, or no job would cross the trunk.
	 */
	static const unsigned hosts[2] = { 1, 4 };
	static const unsigned cable[][4] = {
		{ 0, 2, 1, 5 }, { 0, 3, 1, 6 }, { 0, 4, 1, 7 }, { 0, 5, 1, 8 },
	};
	uint8_t job[2];
	struct rg r;

	rg_graph(&r, 2, hosts, cable, 4);
	ck_assert_int_eq(oo_rank_leaves(&r.g, job), 0);
	ck_assert_uint_eq(job[0], 0);
	ck_assert_uint_eq(job[1], 1);
	ck_assert_int_eq(oo_rank_job_switches(&r.g, job), 0);
	ck_assert_uint_eq(job[0], 1);
	ck_assert_uint_eq(job[1], 1);
}
END_TEST

START_TEST(rank_tapered_edges_number_their_own_links)
{
	/*
	 * Four edges with two uplinks each (taper 2:1): edge e goes to
	 * spines 4 + e % 4 and 4 + (e + 1) % 4, ports 5 and 6.  The
	 * nominal parents are all four spines; each edge numbers its own
	 * two links 0 and 1 instead of leaving two dead slots.
	 */
	static const unsigned hosts[8] = { 4, 4, 4, 4, 0, 0, 0, 0 };
	unsigned cable[8][4], e, n = 0;
	struct rg r;

	for (e = 0; e < 4; e++) {
		unsigned a = e % 4, b = (e + 1) % 4;

		cable[n][0] = e; cable[n][1] = 5;
		cable[n][2] = 4 + a; cable[n][3] = 1 + e;
		n++;
		cable[n][0] = e; cable[n][1] = 6;
		cable[n][2] = 4 + b; cable[n][3] = 5 + e;
		n++;
	}
	rg_build(&r, 8, hosts, cable, n);
	for (e = 0; e < 4; e++) {
		int s5 = rg_slot(&r, e, 5), s6 = rg_slot(&r, e, 6);

		ck_assert_uint_eq(r.t.slots[e], 2);
		ck_assert(s5 >= 0 && s5 < 2 && s6 >= 0 && s6 < 2 && s5 != s6);
	}
	ck_assert_uint_eq(r.t.level_slots[0], 2);
	ck_assert_uint_eq(r.t.divisor[1], 2);
	oo_rank_tree_free(&r.t);
}
END_TEST

/*
 * Three pods (leaf 4 p, pod spines 4 p + 1..3), cores 12-15: pod spine j
 * (0-2) is cabled twice to each of cores 12 + j and 13 + j (ports 2, 3
 * lane 0, ports 4, 5 lane 1), but for the cables missing() names (pod,
 * spine, lane, core - 12 - j).
 */
static void windowed_pods(struct rg *r,
			  int (*missing)(unsigned, unsigned, unsigned,
					 unsigned))
{
	static const unsigned hosts[16] = { 4, 0, 0, 0, 4, 0, 0, 0,
					    4, 0, 0, 0, 0, 0, 0, 0 };
	unsigned cable[48][4], core_port[4] = { 1, 1, 1, 1 };
	unsigned p, j, lane, k, n = 0;

	for (p = 0; p < 3; p++)
		for (j = 0; j < 3; j++) {
			unsigned sp = 4 * p + 1 + j;

			cable[n][0] = 4 * p; cable[n][1] = 5 + j;
			cable[n][2] = sp; cable[n][3] = 1;
			n++;
			for (lane = 0; lane < 2; lane++)
				for (k = 0; k < 2; k++) {
					if (missing(p, j, lane, k))
						continue;
					cable[n][0] = sp;
					cable[n][1] = 2 + 2 * lane + k;
					cable[n][2] = 12 + j + k;
					cable[n][3] = core_port[j + k]++;
					n++;
				}
		}
	rg_build(r, 16, hosts, cable, n);
}

static int first_lane_to_core_13_missing(unsigned p, unsigned j,
					 unsigned lane, unsigned k)
{
	return p == 0 && j == 1 && lane == 0 && k == 0;
}

static int second_lane_to_core_14_missing_twice(unsigned p, unsigned j,
						unsigned lane, unsigned k)
{
	return p < 2 && j == 1 && lane == 1 && k == 1;
}

START_TEST(rank_windowed_spines_number_lanes_alike)
{
	/*
	 * windowed_pods(): the nominal parents of the level span the
	 * windows and every spine has at most half the level's slots.
	 * Pod 0's middle spine misses one of its two
	 * cables to core 13.  Its slots must lead to the parents the same
	 * slots lead to at the other pods' middle spines, with a hole for
	 * the missing cable, rather than renumbering its links 0, 1, 2.
	 */
	unsigned k, p;
	struct rg r;

	windowed_pods(&r, first_lane_to_core_13_missing);
	ck_assert_uint_eq(r.t.num_levels, 3);
	ck_assert_uint_eq(r.t.level[2], 1);
	ck_assert_uint_eq(r.t.level[12], 2);
	ck_assert_uint_eq(r.t.level_slots[1], 4);
	for (p = 0; p < 3; p++)
		ck_assert_uint_eq(r.t.slots[4 * p + 2], 4);
	/* the full pods: lane 0 then lane 1, cores 13 and 14 in order */
	ck_assert_int_eq(rg_slot(&r, 6, 2), 0);
	ck_assert_int_eq(rg_slot(&r, 6, 3), 1);
	ck_assert_int_eq(rg_slot(&r, 6, 4), 2);
	ck_assert_int_eq(rg_slot(&r, 6, 5), 3);
	for (k = 2; k <= 5; k++)
		ck_assert_int_eq(rg_slot(&r, 10, k), rg_slot(&r, 6, k));
	/* pod 0: its one link to core 13 (port 4) is lane 0, slot 0;
	   slot 2 (core 13, lane 1) is a hole */
	ck_assert_int_eq(rg_slot(&r, 2, 2), -1);
	ck_assert_int_eq(rg_slot(&r, 2, 4), 0);
	ck_assert_int_eq(rg_slot(&r, 2, 3), 1);
	ck_assert_int_eq(rg_slot(&r, 2, 5), 3);
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(rank_windowed_spines_share_a_short_design)
{
	/*
	 * windowed_pods(), all cables there except that the middle spines of
	 * pods 0 and 1 lack their second cable to core 14 (port 5).  Most
	 * middle spines lack it, so their design is 3 slots (core 13, core 14,
	 * core 13 again), short of the level's 4: it stays the peers' design
	 * rather than each spine numbering its own links, and pod 2's second
	 * cable to core 14, which most of its peers lack, takes no slot.
	 */
	unsigned p;
	struct rg r;

	windowed_pods(&r, second_lane_to_core_14_missing_twice);
	ck_assert_uint_eq(r.t.num_levels, 3);
	ck_assert_uint_eq(r.t.level_slots[1], 4);
	for (p = 0; p < 3; p++) {
		unsigned sp = 4 * p + 2;

		ck_assert_uint_eq(r.t.slots[sp], 3);
		ck_assert_int_eq(rg_slot(&r, sp, 2), 0);
		ck_assert_int_eq(rg_slot(&r, sp, 3), 1);
		ck_assert_int_eq(rg_slot(&r, sp, 4), 2);
		ck_assert_int_eq(rg_slot(&r, sp, 5), -1);
	}
	/* the outer spines keep their 4 slots */
	ck_assert_uint_eq(r.t.slots[1], 4);
	ck_assert_int_eq(rg_slot(&r, 1, 5), 3);
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(rank_director_is_three_levels)
{
	/*
	 * Two edges (0, 1) with hosts, each cabled to both line ASICs (2,
	 * 3) of a director; each line ASIC to both fabric ASICs (4, 5) by
	 * two parallel internal links.
	 */
	static const unsigned hosts[6] = { 8, 8, 0, 0, 0, 0 };
	static const unsigned cable[][4] = {
		{ 0, 9, 2, 1 }, { 0, 10, 3, 1 }, { 1, 9, 2, 2 },
		{ 1, 10, 3, 2 },
		{ 2, 11, 4, 1 }, { 2, 12, 5, 1 }, { 2, 13, 4, 2 },
		{ 2, 14, 5, 2 },
		{ 3, 11, 4, 3 }, { 3, 12, 5, 3 }, { 3, 13, 4, 4 },
		{ 3, 14, 5, 4 },
	};
	struct rg r;

	rg_build(&r, 6, hosts, cable, 12);
	ck_assert_uint_eq(r.t.num_levels, 3);
	ck_assert_uint_eq(r.t.level[1], 0);
	ck_assert_uint_eq(r.t.level[3], 1);
	ck_assert_uint_eq(r.t.level[5], 2);
	ck_assert_uint_eq(r.t.level_trunks[1], 2);
	/* lanes: fabric 4 lane 0, fabric 5 lane 0, then lane 1 */
	ck_assert_int_eq(rg_slot(&r, 2, 11), 0);
	ck_assert_int_eq(rg_slot(&r, 2, 12), 1);
	ck_assert_int_eq(rg_slot(&r, 2, 13), 2);
	ck_assert_int_eq(rg_slot(&r, 2, 14), 3);
	/* the edges' 2 slots, then the line ASICs' 4 without their lanes */
	ck_assert_uint_eq(r.t.divisor[2], 2 * 2);
	oo_rank_tree_free(&r.t);
}
END_TEST

/*
 * Three leaves (0-2) cabled twice to each of two spines (3, 4), leaf 0 a
 * third time to spine 3: the widest trunk has 3 links, the design 2.
 */
static const unsigned doubled_hosts[5] = { 4, 4, 4, 0, 0 };
static const unsigned doubled_cable[][4] = {
	{ 0, 5, 3, 1 }, { 0, 6, 3, 2 }, { 0, 7, 4, 1 }, { 0, 8, 4, 2 },
	{ 0, 9, 3, 7 },
	{ 1, 5, 3, 3 }, { 1, 6, 3, 4 }, { 1, 7, 4, 3 }, { 1, 8, 4, 4 },
	{ 2, 5, 3, 5 }, { 2, 6, 3, 6 }, { 2, 7, 4, 5 }, { 2, 8, 4, 6 },
};

START_TEST(rank_lanes_follow_the_widest_trunk)
{
	struct rg r;

	rg_build(&r, 5, doubled_hosts, doubled_cable, 13);
	ck_assert_uint_eq(r.t.level_widest[0], 3);
	ck_assert_uint_eq(r.t.level_trunks[0], 3);
	ck_assert_uint_eq(r.t.level_slots[0], 6);
	/* spine 3 lane 2, then spine 4 lane 2: dead at leaves 1 and 2 */
	ck_assert_int_eq(rg_slot(&r, 0, 9), 4);
	ck_assert_int_eq(rg_slot(&r, 1, 8), 3);
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(rank_lanes_by_design_leave_the_extra_cable_out)
{
	struct rg r;

	rg_graph(&r, 5, doubled_hosts, doubled_cable, 13);
	r.g.design_lanes = 1;
	ck_assert_int_eq(oo_rank_tree(&r.g, &r.t), 0);
	ck_assert_uint_eq(r.t.level_widest[0], 3);
	ck_assert_uint_eq(r.t.level_trunks[0], 2);
	ck_assert_uint_eq(r.t.level_slots[0], 4);
	ck_assert_uint_eq(r.t.slots[0], 4);
	/* slot = lane * 2 + spine position */
	ck_assert_int_eq(rg_slot(&r, 1, 5), 0);
	ck_assert_int_eq(rg_slot(&r, 1, 6), 2);
	ck_assert_int_eq(rg_slot(&r, 1, 7), 1);
	ck_assert_int_eq(rg_slot(&r, 1, 8), 3);
	ck_assert_int_eq(rg_slot(&r, 0, 6), 2);
	ck_assert_int_eq(rg_slot(&r, 0, 9), -1);
	/* 2 slots per leaf without their lanes */
	ck_assert_uint_eq(r.t.divisor[1], 2);
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(design_lanes_are_what_two_thirds_of_trunks_have)
{
	/* trunks[w]: trunks of exactly w links */
	static const unsigned third_doubled[5] = { 0, 2, 49, 42, 9 };
	static const unsigned most_doubled[5] = { 0, 2, 26, 60, 40 };
	static const unsigned single[2] = { 0, 12 };
	static const unsigned two_in_three[4] = { 0, 1, 0, 2 };
	static const unsigned none[3] = { 0, 0, 0 };

	ck_assert_uint_eq(oo_design_lanes(third_doubled, 4), 2);
	ck_assert_uint_eq(oo_design_lanes(most_doubled, 4), 3);
	ck_assert_uint_eq(oo_design_lanes(single, 1), 1);
	/* exactly two thirds have 3 or more: 3 */
	ck_assert_uint_eq(oo_design_lanes(two_in_three, 3), 3);
	ck_assert_uint_eq(oo_design_lanes(none, 2), 0);
}
END_TEST

START_TEST(extra_lane_turns_over_the_wide_trunk)
{
	/* a trunk of 3 links at a level of 2 lanes */
	ck_assert_uint_eq(oo_extra_lane(0, 2, 3, 0), 0);
	ck_assert_uint_eq(oo_extra_lane(1, 2, 3, 0), 1);
	ck_assert_uint_eq(oo_extra_lane(0, 2, 3, 1), 2);
	ck_assert_uint_eq(oo_extra_lane(1, 2, 3, 1), 0);
	ck_assert_uint_eq(oo_extra_lane(0, 2, 3, 2), 1);
	/* no wider than the lanes, or not one of them: the lane itself */
	ck_assert_uint_eq(oo_extra_lane(1, 2, 2, 5), 1);
	ck_assert_uint_eq(oo_extra_lane(2, 2, 3, 1), 2);
	ck_assert_uint_eq(oo_extra_lane(0, 0, 3, 1), 0);
}
END_TEST

START_TEST(apart_offsets_go_around_the_slots)
{
	/* 20 slots, 4 LIDs a port: a quarter of the ring apart */
	ck_assert_uint_eq(oo_apart_offset_slot(3, 1, 4, 20), 8);
	ck_assert_uint_eq(oo_apart_offset_slot(3, 3, 4, 20), 18);
	ck_assert_uint_eq(oo_apart_offset_slot(18, 1, 4, 20), 3);
	/* 9 slots: floor(o * 9 / 4) */
	ck_assert_uint_eq(oo_apart_offset_slot(0, 1, 4, 9), 2);
	ck_assert_uint_eq(oo_apart_offset_slot(0, 2, 4, 9), 4);
	ck_assert_uint_eq(oo_apart_offset_slot(8, 3, 4, 9), 5);
	ck_assert_uint_eq(oo_apart_offset_slot(5, 0, 4, 9), 5);
	ck_assert_uint_eq(oo_apart_offset_slot(5, 1, 4, 0), 0);
}
END_TEST

START_TEST(free_digit_moves_past_taken_ones)
{
	/* four edges of one pod below a line with 5 slots above it: the
	   digits of ranks 0, 5, 10, 15 would all be 0 */
	uint8_t taken[5] = { 0 };
	static const unsigned want[4] = { 0, 0, 0, 0 };
	static const unsigned got[4] = { 0, 1, 2, 3 };
	unsigned i, d;

	for (i = 0; i < 4; i++) {
		d = oo_free_digit(taken, 5, want[i]);
		ck_assert_uint_eq(d, got[i]);
		taken[d] = 1;
	}
	/* free where wanted: kept; around the end of the ring */
	ck_assert_uint_eq(oo_free_digit(taken, 5, 4), 4);
	taken[4] = 1;
	taken[0] = 0;
	ck_assert_uint_eq(oo_free_digit(taken, 5, 3), 0);
	/* all taken: the wanted one, reduced to the slots */
	taken[0] = 1;
	ck_assert_uint_eq(oo_free_digit(taken, 5, 7), 2);
	ck_assert_uint_eq(oo_free_digit(taken, 0, 7), 0);
}
END_TEST

START_TEST(rank_without_hosts_has_no_levels)
{
	static const unsigned hosts[2] = { 0, 0 };
	static const unsigned cable[][4] = { { 0, 1, 1, 1 } };
	struct rg r;

	rg_build(&r, 2, hosts, cable, 1);
	ck_assert_uint_eq(r.t.num_levels, 0);
	ck_assert_uint_eq(r.t.level[0], OO_NO_LEVEL);
	oo_rank_tree_free(&r.t);
}
END_TEST

START_TEST(sibling_lane_takes_the_same_parent)
{
	/* 2 lanes of 4 parents: slot 5 (parent 1, lane 1) dead */
	uint8_t cand[8] = { 0, 1, 2, 3, 4, OO_SLOT_DEAD, 6, 7 };
	uint8_t cut[8] = { 0 };

	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 8, 2, 5), 1);
	ck_assert_int_eq(oo_sibling_lane(cand, cut, NULL, 8, 2, 5), 1);
	/* its sibling dead or cut too: none */
	cut[1] = 1;
	ck_assert_int_eq(oo_sibling_lane(cand, cut, NULL, 8, 2, 5), -1);
	cand[1] = OO_SLOT_DEAD;
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 8, 2, 5), -1);
	/* 3 lanes of 2: the first live one after it, around the ring */
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 6, 3, 1), 3);
	cand[3] = OO_SLOT_DEAD;
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 6, 3, 1), -1);
	cand[5] = 5;
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 6, 3, 1), 5);
	/* one lane, lanes not dividing the slots, out of range: none */
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 8, 1, 5), -1);
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 7, 2, 5), -1);
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 8, 2, 8), -1);
}
END_TEST

START_TEST(sibling_lane_takes_the_least_loaded_cable)
{
	/* 4 lanes of 2 parents: parent 0 on slots 0, 2, 4, 6; slot 6 dead */
	uint8_t cand[8] = { 0, 1, 2, 3, 4, 5, OO_SLOT_DEAD, 7 };
	uint32_t load[8] = { 5, 0, 3, 0, 3, 0, 0, 0 };
	uint8_t cut[8] = { 0, 0, 0, 0, 1, 0, 0, 0 };

	/* without loads the first live lane around the ring; with them the
	   one that carries the fewest LIDs so far, the first of a tie */
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, NULL, 8, 4, 6), 0);
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, load, 8, 4, 6), 2);
	load[2] = 4;
	ck_assert_int_eq(oo_sibling_lane(cand, NULL, load, 8, 4, 6), 4);
	/* a cut lane is no candidate, however light */
	ck_assert_int_eq(oo_sibling_lane(cand, cut, load, 8, 4, 6), 2);
}
END_TEST

START_TEST(lanes_align_only_where_runs_repeat_the_parents)
{
	/* 3 lanes of 4 parents (switches 1-4), one cable missing */
	uint16_t parent[12] = { 1, 2, 3, 4, 1, 0, 3, 4, 1, 2, 3, 4 };
	/* one edge numbering its own 6 cables to each of 2 spines */
	uint16_t own[12] = { 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2 };

	ck_assert(oo_lanes_align(parent, 12, 3));
	/* 6 "lanes" of 2 slots: slot 2 leads to switch 3, not 1 */
	ck_assert(!oo_lanes_align(parent, 12, 6));
	ck_assert(!oo_lanes_align(parent, 12, 2));
	/* a cable to the wrong switch breaks the runs */
	parent[9] = 3;
	ck_assert(!oo_lanes_align(parent, 12, 3));
	/* the edge's own numbering runs over 6 lanes of 2 (and 2 of 6) */
	ck_assert(oo_lanes_align(own, 12, 6));
	ck_assert(oo_lanes_align(own, 12, 2));
	ck_assert(!oo_lanes_align(own, 12, 4));
	/* one lane, lanes not dividing the slots: no lanes to align */
	ck_assert(!oo_lanes_align(own, 12, 1));
	ck_assert(!oo_lanes_align(own, 12, 5));
	ck_assert(!oo_lanes_align(own, 0, 2));
}
END_TEST

START_TEST(far_slot_keeps_off_the_neighbours)
{
	/* 8 slots, slot 2 dead: the farthest live slots are 5, 6, 7 */
	uint8_t cand[8] = { 0, 1, OO_SLOT_DEAD, 3, 4, 5, 6, 7 };
	uint32_t load[8] = { 0 };
	unsigned cursor = 0;

	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 5);
	ck_assert_uint_eq(cursor, 6);
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 6);
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 7);
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 5);
	/*
	 * slot 6 dead too: the farthest live slots (5, 7) are 3 away, so
	 * those 2 away (0, 4) are candidates too; 1 and 3 never are
	 */
	cand[6] = OO_SLOT_DEAD;
	cursor = 6;
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 7);
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 0);
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 4);
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 5);
	/* a port two base LIDs above the least loaded is passed over */
	load[0] = load[4] = load[5] = 2;
	load[1] = load[3] = 1;
	load[7] = 3;
	cursor = 0;
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 0);
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), 4);
	/* four slots, slot 1 dead: only slot 3 is farthest */
	{
		uint8_t four[4] = { 0, OO_SLOT_DEAD, 2, 3 };
		uint32_t even[4] = { 0 };

		cursor = 0;
		ck_assert_int_eq(oo_far_slot(four, even, 4, 1, &cursor), 3);
		even[3] = 2;
		ck_assert_int_eq(oo_far_slot(four, even, 4, 1, &cursor), 0);
	}
	/* nothing live */
	memset(cand, OO_SLOT_DEAD, sizeof(cand));
	ck_assert_int_eq(oo_far_slot(cand, load, 8, 2, &cursor), -1);
}
END_TEST

START_TEST(live_slot_renumbers_the_coordinated_rule)
{
	unsigned live, lids, o, r, base;

	/* 3 live slots of 4: ranks 28..31 take 1, 2, 0, 1 (rank mod 3) */
	ck_assert_uint_eq(oo_live_slot(28, 1, 0, 1, 3), 1);
	ck_assert_uint_eq(oo_live_slot(29, 1, 0, 1, 3), 2);
	ck_assert_uint_eq(oo_live_slot(30, 1, 0, 1, 3), 0);
	ck_assert_uint_eq(oo_live_slot(31, 1, 0, 1, 3), 1);
	/* one level up: the digit is rank / divisor */
	ck_assert_uint_eq(oo_live_slot(13, 4, 0, 1, 3), 0);
	ck_assert_uint_eq(oo_live_slot(13, 0, 0, 1, 3), 1);
	/* LMC 1 over 3 live slots: the other LID lies 2 further on */
	ck_assert_uint_eq(oo_live_slot(28, 1, 1, 2, 3), 0);
	/* LMC 2 over 3 live slots: 1 further on per offset */
	ck_assert_uint_eq(oo_live_slot(29, 1, 1, 4, 3), 0);
	ck_assert_uint_eq(oo_live_slot(29, 1, 3, 4, 3), 2);
	/* LMC 2 over 6 live slots: ceil(o * 6 / 4) = 0, 2, 3, 5 on */
	ck_assert_uint_eq(oo_live_slot(1, 1, 1, 4, 6), 3);
	ck_assert_uint_eq(oo_live_slot(1, 1, 2, 4, 6), 4);
	ck_assert_uint_eq(oo_live_slot(1, 1, 3, 4, 6), 0);
	/* 2^LMC divides live: o * live / lids further on, around them all */
	ck_assert_uint_eq(oo_live_slot(7, 1, 1, 2, 6), 4);
	ck_assert_uint_eq(oo_live_slot(9, 1, 3, 4, 8), 7);
	ck_assert_uint_eq(oo_live_slot(5, 1, 1, 2, 4), 3);
	/* nothing live; no LIDs per port given */
	ck_assert_uint_eq(oo_live_slot(5, 1, 0, 1, 0), 0);
	ck_assert_uint_eq(oo_live_slot(5, 1, 1, 0, 3), 2);
	for (live = 1; live <= 17; live++) {
		/* live consecutive ranks take each live slot once */
		unsigned seen = 0;

		for (r = 40; r < 40 + live; r++)
			seen |= 1U << oo_live_slot(r, 1, 0, 1, live);
		ck_assert_uint_eq(seen, (1U << live) - 1);
		/* a destination's LIDs take distinct live slots */
		for (lids = 1; lids <= 8 && lids <= live; lids *= 2)
			for (r = 0; r < 50; r++) {
				seen = 0;
				for (o = 0; o < lids; o++) {
					base = oo_live_slot(r, 1, o, lids,
							    live);
					ck_assert_uint_lt(base, live);
					ck_assert(!(seen & 1U << base));
					seen |= 1U << base;
				}
			}
	}
}
END_TEST

/*
 * How unevenly a sender with live links toward one leaf splits the LIDs
 * of its hosts (consecutive ranks from first on) over them: the most
 * LIDs a link takes less the fewest; take[] gets each link's count.
 */
static unsigned live_split_gap(unsigned first, unsigned hosts, unsigned lids,
			       unsigned live, unsigned *take)
{
	unsigned r, o, s, most = 0, least = ~0U;

	memset(take, 0, live * sizeof(*take));
	for (r = first; r < first + hosts; r++)
		for (o = 0; o < lids; o++)
			take[oo_live_slot(r, 1, o, lids, live)]++;
	for (s = 0; s < live; s++) {
		if (take[s] > most)
			most = take[s];
		if (take[s] < least)
			least = take[s];
	}
	return most - least;
}

/*
 * Whatever the number of a leaf's hosts and their first rank, a sender
 * with live links toward them splits all their LIDs over those links as
 * evenly as the count allows: no link takes two more than another.
 * (12x6 seed 4 of docs/degraded.md: 6 hosts at LMC 1 over 4 live spines
 * took them 4, 4, 2 and 2, each host's pair of LIDs an aligned block.)
 */
START_TEST(live_slots_split_a_leafs_lids_evenly)
{
	unsigned live, lids, hosts, first, s;
	unsigned take[OO_MAX_SLOTS];

	for (live = 1; live <= 16; live++)
		for (lids = 1; lids <= 8 && lids <= live; lids *= 2)
			for (hosts = 1; hosts <= 3 * live; hosts++)
				for (first = 0; first < live; first++)
					ck_assert_uint_le(
						live_split_gap(first, hosts,
							       lids, live,
							       take), 1);
	/* the case of the note: 6 hosts, LMC 1, 4 live links: 3 each */
	ck_assert_uint_eq(live_split_gap(66, 6, 2, 4, take), 0);
	for (s = 0; s < 4; s++)
		ck_assert_uint_eq(take[s], 3);
}
END_TEST

/*
 * A leaf with 4 spines, 3 lanes each (slot = lane * 4 + spine), toward a
 * leaf cabled to spines 1 and 3 only: 6 live slots, whole parents dead.
 */
START_TEST(offsets_take_block_of_whole_live_parents)
{
	uint8_t cand[12], cut[12] = { 0 };
	unsigned s;

	for (s = 0; s < 12; s++)
		cand[s] = s % 4 == 1 || s % 4 == 3 ? (uint8_t)s : OO_SLOT_DEAD;
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 2), 1);
	ck_assert_int_eq(oo_offsets_take_live_block(cand, cut, 12, 4, 2), 1);
	/* 2^LMC must divide the 6 live slots */
	ck_assert_int_eq(oo_offsets_take_live_block(cand, cut, 12, 4, 4), 0);
	/* a cut lane */
	cut[5] = 1;
	ck_assert_int_eq(oo_offsets_take_live_block(cand, cut, 12, 4, 2), 0);
	/* one lane of spine 1 missing: not whole parents */
	cand[9] = OO_SLOT_DEAD;
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 2), 0);
	/* more than half live: spine 0 back, 9 of 12 */
	for (s = 0; s < 12; s++)
		cand[s] = s % 4 != 2 ? (uint8_t)s : OO_SLOT_DEAD;
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 1), 0);
	/* all live, all dead, parents not dividing the slots */
	for (s = 0; s < 12; s++)
		cand[s] = (uint8_t)s;
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 2), 0);
	memset(cand, OO_SLOT_DEAD, sizeof(cand));
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 2), 0);
	cand[0] = 0;
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 5, 1), 0);
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 0, 1), 0);
	/* spine 0 with one of its 3 lanes only, then with all 3 */
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 1), 0);
	cand[4] = 4;
	cand[8] = 8;
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 1), 1);
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 3), 1);
	ck_assert_int_eq(oo_offsets_take_live_block(cand, NULL, 12, 4, 2), 0);
}
END_TEST

/* Down candidates by child: children 7 (two links), 9 (one), 4 (three). */
static const uint16_t grouped_children[6] = { 7, 7, 9, 4, 4, 4 };

START_TEST(child_lane_picks_the_group_then_the_link)
{
	ck_assert_int_eq(oo_child_lane(grouped_children, 6, 0, 0), 0);
	ck_assert_int_eq(oo_child_lane(grouped_children, 6, 0, 1), 1);
	ck_assert_int_eq(oo_child_lane(grouped_children, 6, 3, 3), 1);
	ck_assert_int_eq(oo_child_lane(grouped_children, 6, 1, 5), 2);
	ck_assert_int_eq(oo_child_lane(grouped_children, 6, 2, 2), 5);
	ck_assert_int_eq(oo_child_lane(grouped_children, 6, 5, 4), 4);
	ck_assert_int_eq(oo_child_lane(grouped_children, 0, 1, 1), -1);
}
END_TEST

START_TEST(mirror_link_follows_the_destinations_up_path)
{
	static const uint16_t apart[4] = { 4, 9, 4, 4 };

	ck_assert_int_eq(oo_mirror_link(grouped_children, 6, 9, 0), 2);
	ck_assert_int_eq(oo_mirror_link(grouped_children, 6, 9, 5), 2);
	ck_assert_int_eq(oo_mirror_link(grouped_children, 6, 7, 0), 0);
	ck_assert_int_eq(oo_mirror_link(grouped_children, 6, 7, 3), 1);
	ck_assert_int_eq(oo_mirror_link(grouped_children, 6, 4, 4), 4);
	/* links to one child need not be next to each other */
	ck_assert_int_eq(oo_mirror_link(apart, 4, 4, 1), 2);
	ck_assert_int_eq(oo_mirror_link(apart, 4, 4, 4), 2);
	ck_assert_int_eq(oo_mirror_link(apart, 4, 4, 5), 3);
	/* no candidate leads there, or the up path is not known (0) */
	ck_assert_int_eq(oo_mirror_link(grouped_children, 6, 5, 0), -1);
	ck_assert_int_eq(oo_mirror_link(grouped_children, 6, 0, 0), -1);
	ck_assert_int_eq(oo_mirror_link(grouped_children, 0, 7, 0), -1);
}
END_TEST

START_TEST(peers_parent_is_the_one_most_senders_use)
{
	/* a leaf: port 0 none, 1 and 2 to parent 5, 3 to 6, 4 a host, 5 to 8 */
	static const uint16_t remote[6] = { 0, 5, 5, 6, 0, 8 };
	static const uint16_t most6[5] = { 6, 5, 6, 9, 6 };
	static const uint16_t tie[4] = { 8, 5, 5, 8 };
	/* parallel links count one vote per sender, not one per link */
	static const uint16_t one_each[3] = { 5, 6, 6 };
	static const uint16_t strangers[3] = { 0, 9, 12 };

	ck_assert_uint_eq(oo_peers_parent(most6, 5, remote, 6), 6);
	ck_assert_uint_eq(oo_peers_parent(tie, 4, remote, 6), 5);
	ck_assert_uint_eq(oo_peers_parent(one_each, 3, remote, 6), 6);
	/* senders that name no parent of the leaf, or no sender */
	ck_assert_uint_eq(oo_peers_parent(strangers, 3, remote, 6), 0);
	ck_assert_uint_eq(oo_peers_parent(most6, 0, remote, 6), 0);
	/* the ports looked at are the leaf's only */
	ck_assert_uint_eq(oo_peers_parent(tie, 4, remote, 3), 5);
	ck_assert_uint_eq(oo_peers_parent(strangers + 1, 1, remote, 6), 0);
}
END_TEST

START_TEST(excess_lanes_are_cut)
{
	/*
	 * 3 parents, 2 lanes each (slot s -> parent s % 3 + 1); slot 4 is
	 * dead.  Parent 1 has one link on toward the target, parent 2 two,
	 * parent 3 no known limit.
	 */
	uint16_t remote[6] = { 1, 2, 3, 1, 0, 3 };
	uint8_t cap[6] = { 1, 2, 0, 1, 2, 0 };
	uint8_t cut[6];

	ck_assert_uint_eq(oo_cut_excess_lanes(remote, cap, 6, cut), 1);
	ck_assert_int_eq(cut[0], 0);
	ck_assert_int_eq(cut[3], 1);
	ck_assert_int_eq(cut[1] | cut[2] | cut[4] | cut[5], 0);
	/* a parent without links on (cap 0 = unknown) keeps its lanes */
	cap[0] = cap[3] = 0;
	ck_assert_uint_eq(oo_cut_excess_lanes(remote, cap, 6, cut), 0);
	/* lane 0 stays: of 4 lanes to parent 7 (cap 1), three are cut, their
	   LIDs going to parents 8 and 9 (no limit) */
	{
		uint16_t four[6] = { 7, 8, 9, 7, 7, 7 };
		uint8_t one[6] = { 0, 0, 0, 1, 1, 1 };

		ck_assert_uint_eq(oo_cut_excess_lanes(four, one, 6, cut), 3);
		ck_assert_int_eq(cut[0] | cut[1] | cut[2], 0);
		ck_assert_int_eq(cut[3] & cut[4] & cut[5], 1);
	}
	/*
	 * No cut where it does not pay: every parent capped alike (the
	 * slots left would carry as much as the capped links do), or all
	 * lanes to one parent.
	 */
	{
		uint16_t even[6] = { 1, 2, 3, 1, 2, 3 };
		uint8_t one[6] = { 1, 1, 1, 1, 1, 1 };
		uint16_t three[3] = { 7, 7, 7 };

		ck_assert_uint_eq(oo_cut_excess_lanes(even, one, 6, cut), 0);
		ck_assert_int_eq(cut[3] | cut[4] | cut[5], 0);
		ck_assert_uint_eq(oo_cut_excess_lanes(three, one, 3, cut), 0);
	}
}
END_TEST

START_TEST(dead_slots_of_a_leaf_fill_its_live_ones)
{
	/*
	 * 3 parents, 2 lanes (slot s -> parent s % 3 + 1); the leaf has no
	 * link to parent 3 (slots 2 and 5 dead).  Two LIDs per destination.
	 */
	const uint8_t live[6] = { 1, 1, 0, 1, 1, 0 };
	const uint16_t parent[6] = { 1, 2, 3, 1, 2, 3 };
	uint16_t slot[8] = { 0, 1, 2, 3, 4, 5, 0, 1 };
	uint8_t none[6] = { 0 };

	ck_assert_uint_eq(oo_fill_dead_slots(slot, 8, 2, live, parent, 6), 1);
	/* a base LID keeps its slot: the senders' own detours place it */
	ck_assert_uint_eq(slot[2], 2);
	/* slots 3 and 4 carry one LID each; slot 4's parent is the
	   destination's other LID's, so slot 3 */
	ck_assert_uint_eq(slot[5], 3);
	ck_assert_uint_eq(slot[0], 0);
	ck_assert_uint_eq(slot[7], 1);
	/* nothing live: nothing moves */
	slot[5] = 5;
	ck_assert_uint_eq(oo_fill_dead_slots(slot, 8, 2, none, parent, 6), 0);
	ck_assert_uint_eq(slot[5], 5);
	/* LMC 0: base LIDs only, none moves */
	ck_assert_uint_eq(oo_fill_dead_slots(slot, 8, 1, live, parent, 6), 0);
}
END_TEST

START_TEST(dead_slots_spread_a_leafs_lids_evenly)
{
	/*
	 * 9 parents, 2 lanes (18 slots, slot s -> parent s % 9), a leaf
	 * missing parents 3 and 7 and one lane to parent 5 (slots 3, 12, 7,
	 * 16, 14 dead), 16 destinations, 4 LIDs each in slots (r + o) % 18.
	 */
	uint8_t live[18];
	uint16_t parent[18], slot[64];
	unsigned count[18] = { 0 }, s, i, lo = 99, hi = 0, moved = 0;

	for (s = 0; s < 18; s++) {
		live[s] = s % 9 != 3 && s % 9 != 7 && s != 14;
		parent[s] = (uint16_t)(s % 9 + 1);
	}
	for (i = 0; i < 64; i++) {
		slot[i] = (uint16_t)((i / 4 + i % 4) % 18);
		moved += i % 4 && !live[slot[i]];
	}
	ck_assert_uint_eq(oo_fill_dead_slots(slot, 64, 4, live, parent, 18),
			  moved);
	for (i = 0; i < 64; i++) {
		if (!(i % 4) && !live[slot[i]])
			continue;
		ck_assert(live[slot[i]]);
		count[slot[i]]++;
	}
	for (s = 0; s < 18; s++)
		if (live[s]) {
			lo = count[s] < lo ? count[s] : lo;
			hi = count[s] > hi ? count[s] : hi;
		}
	/* the 13 live slots take the LIDs as evenly as they can */
	ck_assert_uint_le(hi - lo, 1);
	/* the four LIDs of a destination come down four links */
	for (i = 0; i < 64; i += 4) {
		unsigned a, b;

		for (a = i; a < i + 4; a++)
			for (b = a + 1; b < i + 4; b++)
				ck_assert_uint_ne(slot[a], slot[b]);
	}
}
END_TEST


/*
 * The reach pass on two leaves (L0 = 0, L1 = 1) under two spines (S0 = 2,
 * S1 = 3).  Ports: leaves 1 host, 3 -> S0, 4 -> S1; spines 1 -> L0,
 * 2 -> L1, 3 -> a CA (management HCA m on S0).  LIDs: switches 1-4, h0 5,
 * h1 6, m 7.  The tables are what updn with the spines as roots leaves:
 * S1 has no entry for m (down to a leaf, up to S0), nor the two spines
 * for each other's LID.
 */
#define RN_SW 4
#define RN_STRIDE 5
#define RN_LIDS 8
#define RN_LMC_LIDS 14		/* LIDs of reach_model_crossed_lmc() */

struct reach_model {
	uint32_t next[RN_SW * RN_STRIDE];
	uint8_t rport[RN_SW * RN_STRIDE];
	uint8_t lft[RN_SW][RN_LMC_LIDS];
	uint8_t *rows[RN_SW];
	unsigned len[RN_SW];
	uint16_t sw_lid[RN_SW];
	uint32_t dest_sw[5];
	uint8_t dest_port[5];
	uint16_t dest_lid[5];
	struct oo_reach_net net;
};

static void reach_link(struct reach_model *m, unsigned a, unsigned pa,
		       unsigned b, unsigned pb)
{
	m->next[a * RN_STRIDE + pa] = b;
	m->rport[a * RN_STRIDE + pa] = (uint8_t)pb;
	m->next[b * RN_STRIDE + pb] = a;
	m->rport[b * RN_STRIDE + pb] = (uint8_t)pa;
}

static void reach_model_init(struct reach_model *m)
{
	static const uint8_t updn[RN_SW][RN_LIDS] = {
		/*  -  L0 L1 S0 S1 h0 h1 m */
		{ 255, 0, 3, 3, 4, 1, 3, 3 },		/* L0 */
		{ 255, 3, 0, 3, 4, 3, 1, 3 },		/* L1 */
		{ 255, 1, 2, 0, 255, 1, 2, 3 },		/* S0 */
		{ 255, 1, 2, 255, 0, 1, 2, 255 },	/* S1 */
	};
	unsigned s;

	memset(m, 0, sizeof(*m));
	for (s = 0; s < RN_SW * RN_STRIDE; s++)
		m->next[s] = OO_EVAL_NONE;
	reach_link(m, 0, 3, 2, 1);
	reach_link(m, 0, 4, 3, 1);
	reach_link(m, 1, 3, 2, 2);
	reach_link(m, 1, 4, 3, 2);
	for (s = 0; s < RN_SW; s++) {
		memset(m->lft[s], OO_LFT_NONE, RN_LMC_LIDS);
		memcpy(m->lft[s], updn[s], RN_LIDS);
		m->rows[s] = m->lft[s];
		m->len[s] = RN_LIDS;
		m->sw_lid[s] = (uint16_t)(s + 1);
	}
	m->dest_sw[0] = 0; m->dest_port[0] = 1; m->dest_lid[0] = 5;
	m->dest_sw[1] = 1; m->dest_port[1] = 1; m->dest_lid[1] = 6;
	m->dest_sw[2] = 2; m->dest_port[2] = 3; m->dest_lid[2] = 7;
	m->net.num_sw = RN_SW;
	m->net.stride = RN_STRIDE;
	m->net.next = m->next;
	m->net.rport = m->rport;
	m->net.lft = m->rows;
	m->net.lft_len = m->len;
	m->net.sw_lid = m->sw_lid;
	m->net.num_dests = 3;
	m->net.dest_sw = m->dest_sw;
	m->net.dest_port = m->dest_port;
	m->net.dest_lid = m->dest_lid;
	m->net.lids_per_port = 1;
}

/*
 * The tables of m are before's but for S1's entry for m (LID 7), and have
 * no credit loop.
 */
static void assert_only_s1_filled_m(struct reach_model *m,
				    const struct reach_model *before)
{
	unsigned s, lid;

	for (s = 0; s < RN_SW; s++)
		for (lid = 0; lid < RN_LIDS; lid++)
			if (s != 3 || lid != 7)
				ck_assert_uint_eq(m->lft[s][lid],
						  before->lft[s][lid]);
	ck_assert_int_eq(oo_reach_acyclic(&m->net), 1);
}

START_TEST(reach_fills_a_ca_on_a_spine_through_a_leaf)
{
	struct reach_model m, before;
	struct oo_reach_result res;

	reach_model_init(&m);
	reach_model_init(&before);
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 1);
	/* with both hosts on L0, L1 has no CA and is the turn switch */
	{
		struct reach_model m2;
		struct oo_reach_result r2;

		reach_model_init(&m2);
		m2.dest_sw[1] = 0;	/* h1 now hangs off L0 port 2 */
		m2.dest_port[1] = 2;
		m2.lft[0][6] = 2;
		m2.lft[1][6] = 3;
		m2.lft[2][6] = 1;
		m2.lft[3][6] = 1;
		ck_assert_int_eq(oo_reach_fill(&m2.net, &r2), 0);
		ck_assert_uint_eq(m2.lft[3][7], 2);
	}
	ck_assert_int_eq(oo_reach_fill(&m.net, &res), 0);
	ck_assert_uint_eq(res.lids, 1);
	ck_assert_uint_eq(res.filled, 1);
	ck_assert_uint_eq(res.left, 0);
	ck_assert_int_eq(res.cyclic, 0);
	/* S1 sends m down to L0, which sends it up to S0: L0 and L1 tie as
	   turn switches (as many hops, one CA each), L0 comes first */
	ck_assert_uint_eq(m.lft[3][7], 1);
	assert_only_s1_filled_m(&m, &before);
}
END_TEST

START_TEST(reach_leaves_a_lid_no_switch_reaches)
{
	struct reach_model m;
	struct oo_reach_result res;
	unsigned s;

	reach_model_init(&m);
	for (s = 0; s < RN_SW; s++)
		m.lft[s][7] = OO_LFT_NONE;
	ck_assert_int_eq(oo_reach_fill(&m.net, &res), 0);
	ck_assert_uint_eq(res.filled, 0);
	ck_assert_uint_eq(res.left, RN_SW);
	for (s = 0; s < RN_SW; s++)
		ck_assert_uint_eq(m.lft[s][7], OO_LFT_NONE);
}
END_TEST

/*
 * m0 = LID 7 on S0 port 3, m1 = LID 4 taken as a CA on S1: S1 turns m0 at
 * L0, S0 turns m1 at L1, and the hosts cross over: L0 -> S0 -> L1 -> S1 ->
 * L0 -> S0 is a ring of channels that wait on each other with no LFT loop
 * at all.
 */
static void reach_model_ring(struct reach_model *m)
{
	reach_model_init(m);
	m->lft[3][7] = 1;	/* S1: m0 down to L0 */
	m->lft[0][7] = 3;	/* L0: up to S0 */
	m->lft[2][4] = 2;	/* S0: S1's LID down to L1 */
	m->lft[1][4] = 4;	/* L1: up to S1 */
	m->lft[0][6] = 3;	/* L0 -> h1 over S0 */
	m->lft[1][5] = 4;	/* L1 -> h0 over S1 */
}

START_TEST(reach_finds_credit_loops)
{
	struct reach_model m;

	reach_model_ring(&m);
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 0);
	/* both turns at L0: no ring */
	m.lft[2][4] = 1;
	m.lft[0][4] = 4;
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 1);
	/* a routing loop is a credit loop too */
	m.lft[1][5] = 3;
	m.lft[2][5] = 2;
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 0);
}
END_TEST

START_TEST(cdg_ca_routes_hold_what_cas_traffic_takes_alone)
{
	struct reach_model m;

	/* the ring needs S1's entry for m and S1's own LID 4: no CA's
	   traffic takes either */
	reach_model_ring(&m);
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 0);
	ck_assert_int_eq(oo_cdg_ca_routes_acyclic(&m.net), 1);
	/* a CA m1 on S1 port 3 with LID 4: S1 sends toward m, S0 toward
	   m1, and the CAs' own routes close the ring */
	m.dest_sw[3] = 3;
	m.dest_port[3] = 3;
	m.dest_lid[3] = 4;
	m.net.num_dests = 4;
	ck_assert_int_eq(oo_cdg_ca_routes_acyclic(&m.net), 0);
	/* both turns at L0: no ring */
	m.lft[2][4] = 1;
	m.lft[0][4] = 4;
	ck_assert_int_eq(oo_cdg_ca_routes_acyclic(&m.net), 1);
	/* a forwarding loop between L1 and S0 on h0's way is one too */
	m.lft[1][5] = 3;
	m.lft[2][5] = 2;
	ck_assert_int_eq(oo_cdg_ca_routes_acyclic(&m.net), 0);
}
END_TEST

/* Every dependency of g points forward in its order. */
static void assert_cdg_ordered(const struct oo_cdg *g,
			       const struct reach_model *m)
{
	size_t u;
	unsigned q;

	for (u = 0; u < g->nodes; u++)
		for (q = 0; q < g->stride; q++) {
			size_t b = u * g->stride + q, at, v;

			if (!(g->bits[b / 8] >> (b % 8) & 1))
				continue;
			at = u / g->stride * g->stride + q;
			v = (size_t)m->next[at] * g->stride + m->rport[at];
			ck_assert_msg(g->ord[u] < g->ord[v],
				      "channel %zu (at %u) waits for %zu (at %u)",
				      u, g->ord[u], v, g->ord[v]);
		}
}

START_TEST(cdg_adds_lids_and_refuses_a_loop)
{
	struct reach_model m;
	struct oo_cdg g;
	uint8_t *bits;
	size_t len;

	/* the hosts cross over (see reach_finds_credit_loops) and S1 turns
	   m0 at L0: no ring yet */
	reach_model_init(&m);
	m.lft[0][6] = 3;
	m.lft[1][5] = 4;
	m.lft[3][7] = 1;
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 1);
	ck_assert_int_eq(oo_cdg_init(&g, &m.net), 1);
	assert_cdg_ordered(&g, &m);
	len = g.nodes * g.stride / 8 + 1;
	bits = malloc(len);
	ck_assert_ptr_nonnull(bits);
	memcpy(bits, g.bits, len);
	/* S0 turns S1's LID at L1: the ring closes; nothing is added */
	m.lft[2][4] = 2;
	m.lft[1][4] = 4;
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 0);
	ck_assert_int_eq(oo_cdg_add_lid(&g, 4), 0);
	ck_assert_int_eq(memcmp(bits, g.bits, len), 0);
	assert_cdg_ordered(&g, &m);
	/* both turns at L0: no ring; its dependencies go in, in order */
	m.lft[2][4] = 1;
	m.lft[0][4] = 4;
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 1);
	ck_assert_int_eq(oo_cdg_add_lid(&g, 4), 1);
	ck_assert_int_ne(memcmp(bits, g.bits, len), 0);
	assert_cdg_ordered(&g, &m);
	free(bits);
	oo_cdg_free(&g);
	/* tables with a ring already: init says so */
	m.lft[2][4] = 2;
	m.lft[1][4] = 4;
	m.lft[0][4] = 3;
	ck_assert_int_eq(oo_cdg_init(&g, &m.net), 0);
	oo_cdg_free(&g);
}
END_TEST

START_TEST(reach_all_option)
{
	struct oo_options o;
	char err[256];

	ck_assert_int_eq(oo_options_parse("port_offsetting=on", &o, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(o.reach_all, 1);
	ck_assert_int_eq(oo_options_parse("reach_all=off port_offsetting=on",
					  &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.reach_all, 0);
	ck_assert_int_eq(o.stock_guard, 1);
	parse_bad("reach_all=plain", "reach_all value 'plain'");
	parse_bad("reach_all=on reach_all=off", "reach_all is given twice");
}
END_TEST

/* An on/off option of a variant the stock guard tries: its field. */
struct variant_option {
	const char *key;
	size_t field;		/* offsetof(struct oo_options, ...) */
	const char *bad;	/* a value it refuses */
};

static const struct variant_option guard_variants[] = {
	{ "offsets_apart", offsetof(struct oo_options, offsets_apart), "2" },
	{ "digits_apart", offsetof(struct oo_options, digits_apart), "ranks" },
	{ "keep_live", offsetof(struct oo_options, keep_live), "renumber" },
	{ "polish", offsetof(struct oo_options, polish), "twice" },
	{ "polish_cables", offsetof(struct oo_options, polish_cables),
	  "doubled" },
};

static int option_field(const struct oo_options *o, size_t field)
{
	return *(const int *)((const char *)o + field);
}

/*
 * An on/off option of the table tab (n entries), all of which are set to
 * by_default by default: KEY set the other way (off, no, 0 or on, yes, 1)
 * turns it alone; a bad value or the key twice with different values is
 * refused, naming it.
 */
static void assert_on_off_option(const struct variant_option *v,
				 const struct variant_option *tab, unsigned n,
				 int by_default)
{
	static const char *const word[2][3] = {
		{ "off", "no", "0" }, { "on", "yes", "1" }
	};
	const char *const *set = word[!by_default];
	struct oo_options o;
	char text[64], want[96], err[256];
	unsigned i, j;

	ck_assert_int_eq(oo_options_parse("port_offsetting=on", &o, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(option_field(&o, v->field), by_default);
	for (i = 0; i < 3; i++) {
		snprintf(text, sizeof(text), "port_offsetting=on %s=%s",
			 v->key, set[i]);
		ck_assert_int_eq(oo_options_parse(text, &o, err, sizeof(err)),
				 0);
		ck_assert_int_eq(option_field(&o, v->field), !by_default);
		for (j = 0; j < n; j++)
			if (tab[j].field != v->field)
				ck_assert_int_eq(option_field(&o, tab[j].field),
						 by_default);
		ck_assert_int_eq(o.stock_guard, 1);
	}
	snprintf(text, sizeof(text), "%s=%s", v->key, v->bad);
	snprintf(want, sizeof(want), "%s value '%s' is not one of on, off",
		 v->key, v->bad);
	parse_bad(text, want);
	snprintf(text, sizeof(text), "%s=%s %s=%s", v->key, word[0][0],
		 v->key, word[1][0]);
	snprintf(want, sizeof(want), "%s is given twice, as off and as on",
		 v->key);
	parse_bad(text, want);
}

/* On by default (guard_variants): KEY=off turns it alone off. */
static void assert_variant_option(const struct variant_option *v)
{
	assert_on_off_option(v, guard_variants, sizeof(guard_variants) /
			     sizeof(guard_variants[0]), 1);
}

START_TEST(design_lanes_option)
{
	struct oo_options o;
	char err[256];
	unsigned i;

	ck_assert_int_eq(oo_options_parse("port_offsetting=on", &o, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(o.design_lanes, 1);
	ck_assert_int_eq(oo_options_parse("design_lanes=off port_offsetting=on",
					  &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.design_lanes, 0);
	ck_assert_int_eq(o.stock_guard, 1);
	parse_bad("design_lanes=widest", "design_lanes value 'widest' is "
		  "not one of on, off");
	parse_bad("design_lanes=on design_lanes=no",
		  "design_lanes is given twice, as on and as off");
	for (i = 0; i < sizeof(guard_variants) / sizeof(guard_variants[0]);
	     i++)
		assert_variant_option(&guard_variants[i]);
}
END_TEST

/* The options off by default (spine_cas, leaf_shuffles, polish_even). */
static const struct variant_option guard_extras[] = {
	{ "spine_cas", offsetof(struct oo_options, spine_cas), "mgmt" },
	{ "leaf_shuffles", offsetof(struct oo_options, leaf_shuffles),
	  "some" },
	{ "polish_even", offsetof(struct oo_options, polish_even), "half" },
	{ "polish_ways", offsetof(struct oo_options, polish_ways), "cores" },
};

/*
 * Off by default (guard_extras): KEY=on turns it alone on, the others
 * off by default staying off, the guard and the polish on.
 */
static void assert_extra_option(const struct variant_option *v)
{
	struct oo_options o;
	char err[256];

	assert_on_off_option(v, guard_extras, sizeof(guard_extras) /
			     sizeof(guard_extras[0]), 0);
	ck_assert_int_eq(oo_options_parse("port_offsetting=on", &o, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(o.polish, 1);
}

START_TEST(spine_cas_option)
{
	assert_extra_option(&guard_extras[0]);
}
END_TEST

START_TEST(leaf_shuffles_option)
{
	assert_extra_option(&guard_extras[1]);
}
END_TEST

START_TEST(polish_even_option)
{
	assert_extra_option(&guard_extras[2]);
}
END_TEST

START_TEST(polish_ways_option)
{
	assert_extra_option(&guard_extras[3]);
}
END_TEST

/*
 * The reach model with the hosts crossing over (L0 sends h1 over S0, L1
 * sends h0 over S1) and a second management HCA m1 on S1 port 3 (it takes
 * S1's LID 4), which S0 sends down to L1 and L1 up to S1.  S1 has no entry
 * for m; L1 has no LID of its own, so only L0 can be its turn switch, and
 * S1 -> L0 -> S0 closes the ring L0 -> S0 -> L1 -> S1 -> L0 (see
 * reach_finds_credit_loops) on one lane.
 */
static void reach_model_crossed(struct reach_model *m)
{
	reach_model_init(m);
	m->lft[0][6] = 3;
	m->lft[1][5] = 4;
	m->lft[2][4] = 2;
	m->lft[3][4] = 3;
	m->sw_lid[1] = 0;
	m->dest_sw[3] = 3;
	m->dest_port[3] = 3;
	m->dest_lid[3] = 4;
	m->net.num_dests = 4;
}

/* fill leaves S1's hole for m (LID 7) on m's model: res as it says. */
static void assert_s1_keeps_its_hole(struct reach_model *m,
				     int (*fill)(const struct oo_reach_net *,
						 struct oo_reach_result *),
				     struct oo_reach_result *res)
{
	ck_assert_int_eq(fill(&m->net, res), 0);
	ck_assert_uint_eq(res->left, 1);
	ck_assert_uint_eq(m->lft[3][7], OO_LFT_NONE);
}

/*
 * reach_model_crossed() with L1 sending m up to S1 as well: S1's other
 * neighbour then gets to m through S1 alone, and the turn at L0 is the
 * only way on from S1 (it closes the ring).
 */
static void reach_model_crossed_shut(struct reach_model *m)
{
	reach_model_crossed(m);
	m->lft[1][7] = 4;
}

/*
 * In reach_model_crossed() S1's hole for m has a way on through L1 (no
 * turn switch, L1 having no LID of its own) that closes no loop; a second
 * cable between L0 and S1 (L0 port 2, S1 port 4) is another: the turn at
 * L0 takes the cable S1 sends L0's own LID by, whose channel closes the
 * ring, and the other one's does not.
 */
START_TEST(reach_fills_a_hole_toward_a_neighbour_by_port)
{
	struct reach_model m, before;
	struct oo_reach_result res;
	struct oo_sl_map map;

	/* the turn at L0 closes the ring; the guard's measures stop there */
	reach_model_crossed(&m);
	assert_s1_keeps_its_hole(&m, oo_reach_fill_no_retry, &res);
	reach_model_crossed(&m);
	assert_s1_keeps_its_hole(&m, oo_reach_fill, &res);
	/* the pass as OpenSM runs it sends m from S1 to L1, and L1 up to S0
	   (one lane) */
	reach_model_crossed(&m);
	reach_model_crossed(&before);
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 1, &res, &map), 0);
	ck_assert_ptr_null(map.row);
	ck_assert_uint_eq(res.left, 0);
	ck_assert_uint_eq(res.left_ca, 0);
	ck_assert_uint_eq(res.filled, 1);
	ck_assert_uint_eq(m.lft[3][7], 2);
	assert_only_s1_filled_m(&m, &before);
	/* L1 sends m over S1: no way on through it */
	reach_model_crossed_shut(&m);
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 1, &res, &map), 0);
	ck_assert_uint_eq(res.left, 1);
	ck_assert_uint_eq(m.lft[3][7], OO_LFT_NONE);
	/* a second cable L0-S1, and L1 with two CAs (h2 on port 2, LID 2)
	   ranks after L0: the second cable, not the first */
	reach_model_crossed(&m);
	reach_link(&m, 0, 2, 3, 4);
	m.dest_sw[4] = 1;
	m.dest_port[4] = 2;
	m.dest_lid[4] = 2;
	m.lft[1][2] = 2;
	m.net.num_dests = 5;
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 1, &res, &map), 0);
	ck_assert_uint_eq(res.left_ca, 0);
	ck_assert_uint_eq(m.lft[3][7], 4);
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 1);
	m.lft[3][7] = 1;
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 0);
}
END_TEST

START_TEST(reach_puts_a_turn_that_closes_a_loop_on_vl1)
{
	struct reach_model m, one;
	struct oo_reach_result res;
	struct oo_sl_map map;
	struct oo_cdg g;
	unsigned s, lid;

	/* one lane: the hole stays */
	reach_model_crossed_shut(&one);
	assert_s1_keeps_its_hole(&one, oo_reach_fill, &res);
	ck_assert_uint_eq(res.layered, 0);
	/* two lanes: S1 sends m down to L0, and the routes from S1 and L1
	   that only this entry delivers take SL 1 */
	reach_model_crossed_shut(&m);
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 2, &res, &map), 0);
	ck_assert_uint_eq(res.left, 0);
	ck_assert_uint_eq(res.left_ca, 0);
	ck_assert_uint_eq(res.filled, 1);
	ck_assert_uint_eq(res.layered, 2);
	ck_assert_uint_eq(res.top_sl, 1);
	ck_assert_uint_eq(m.lft[3][7], 1);
	for (s = 0; s < RN_SW; s++)
		for (lid = 0; lid < RN_LIDS; lid++) {
			ck_assert_uint_eq(oo_sl_map_get(&map, s, lid),
					  (s == 3 || s == 1) && lid == 7);
			if (s != 3 || lid != 7)
				ck_assert_uint_eq(m.lft[s][lid],
						  one.lft[s][lid]);
		}
	ck_assert_uint_eq(oo_sl_map_get(&map, 99, 7), 0);
	ck_assert_uint_eq(oo_sl_map_get(&map, 3, 9999), 0);
	/* on one lane the tables would loop; VL1 alone does not, nor VL0
	   without S1's route to m */
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 0);
	ck_assert_int_eq(oo_cdg_init_empty(&g, &m.net), 0);
	oo_cdg_begin(&g);
	ck_assert_int_eq(oo_cdg_add_route(&g, 3, 7), 1);
	oo_cdg_free(&g);
	ck_assert_int_eq(oo_cdg_init_empty(&g, &m.net), 0);
	oo_cdg_begin(&g);
	for (s = 0; s < RN_SW; s++)
		for (lid = 1; lid < RN_LIDS; lid++)
			if (!oo_sl_map_get(&map, s, lid))
				ck_assert_int_eq(oo_cdg_add_route(&g, s, lid),
						 1);
	oo_cdg_free(&g);
	oo_sl_map_free(&map);
	ck_assert_ptr_null(map.row);
	/* vls 1: no layered pass */
	reach_model_crossed_shut(&m);
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 1, &res, &map), 0);
	ck_assert_uint_eq(res.left, 1);
	ck_assert_ptr_null(map.row);
}
END_TEST

/*
 * reach_model_crossed_shut() at LMC 1: h0 has LIDs 8-9, h1 10-11, m 12-13
 * and m1 4-5, each routed as its one LID was.  S1 has no entry for m's
 * LIDs, and the only way on, the turn at L0, closes the ring.  With
 * base_reached, L1 sends m's base LID 12 up to S0, and S1 sends it down
 * to L1: nothing else is sent from S1 to L1 and on, so no ring closes.
 * Without shut, reach_model_crossed(): L1 sends both of m's LIDs up to
 * S0, and S1 has that way on for LID 13 too.
 */
static void reach_model_crossed_lmc(struct reach_model *m, int base_reached,
				    int shut)
{
	static const struct {
		unsigned to, from;
	} moves[] = {
		{ 8, 5 }, { 9, 5 }, { 10, 6 }, { 11, 6 }, { 12, 7 },
		{ 13, 7 }, { 5, 4 },
	};
	unsigned s, i;

	if (shut)
		reach_model_crossed_shut(m);
	else
		reach_model_crossed(m);
	for (s = 0; s < RN_SW; s++) {
		for (i = 0; i < sizeof(moves) / sizeof(moves[0]); i++)
			m->lft[s][moves[i].to] = m->lft[s][moves[i].from];
		m->lft[s][6] = OO_LFT_NONE;
		m->lft[s][7] = OO_LFT_NONE;
		m->len[s] = RN_LMC_LIDS;
	}
	m->dest_lid[0] = 8;
	m->dest_lid[1] = 10;
	m->dest_lid[2] = 12;
	m->net.lids_per_port = 2;
	if (base_reached) {
		m->lft[1][12] = 3;
		m->lft[3][12] = 2;
	}
}

START_TEST(reach_lends_a_lid_the_routes_of_its_ports_other_lid)
{
	static const uint8_t minor[4] = { 0, 0, 0, 1 };
	struct reach_model m, before;
	struct oo_reach_result res;
	struct oo_sl_map map;
	unsigned s, lid;

	/* both of m's LIDs short of S1: neither lends, both holes stay */
	reach_model_crossed_lmc(&m, 0, 1);
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 1, &res, &map), 0);
	ck_assert_uint_eq(res.borrowed, 0);
	ck_assert_uint_eq(res.left_ca, 2);
	ck_assert_uint_eq(m.lft[3][12], OO_LFT_NONE);
	ck_assert_uint_eq(m.lft[3][13], OO_LFT_NONE);
	/* the base LID reaches S1: the guard's measure leaves LID 13's hole
	   (it weighs tables by what they reach on their own) */
	reach_model_crossed_lmc(&m, 1, 1);
	ck_assert_int_eq(oo_reach_fill(&m.net, &res), 0);
	ck_assert_uint_eq(res.borrowed, 0);
	ck_assert_uint_eq(res.left_ca, 1);
	ck_assert_uint_eq(m.lft[3][13], OO_LFT_NONE);
	/* the pass on the tables that stay: LID 13 takes the base LID's
	   entries everywhere */
	reach_model_crossed_lmc(&m, 1, 1);
	reach_model_crossed_lmc(&before, 1, 1);
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 1);
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 1, &res, &map), 0);
	ck_assert_ptr_null(map.row);
	ck_assert_uint_eq(res.borrowed, 1);
	ck_assert_uint_eq(res.left, 0);
	ck_assert_uint_eq(res.left_ca, 0);
	ck_assert_uint_eq(res.filled, 0);
	for (s = 0; s < RN_SW; s++)
		for (lid = 0; lid < RN_LMC_LIDS; lid++)
			ck_assert_uint_eq(m.lft[s][lid], lid == 13 ?
					  before.lft[s][12] :
					  before.lft[s][lid]);
	ck_assert_uint_eq(m.lft[3][13], 2);
	ck_assert_int_eq(oo_reach_acyclic(&m.net), 1);
	/* L1 sends LID 13 up to S0 and m1 is a SHARP node: only it is short
	   of LID 13, which hosts' traffic reaches; LID 13 keeps its own
	   routes, and S1 gets the way on through L1 (the pass's last
	   step) */
	reach_model_crossed_lmc(&m, 1, 0);
	m.net.dest_minor = minor;
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 1, &res, &map), 0);
	ck_assert_uint_eq(res.borrowed, 0);
	ck_assert_uint_eq(res.left_ca, 0);
	ck_assert_uint_eq(m.lft[3][13], 2);
	ck_assert_uint_eq(m.lft[1][13], 3);
	/* with a second lane, the layered pass turns LID 13 at L0 on VL1
	   (the routes from S1 and from L1): it keeps its own way, nothing
	   is borrowed */
	reach_model_crossed_lmc(&m, 1, 1);
	ck_assert_int_eq(oo_reach_fill_vls(&m.net, 2, &res, &map), 0);
	ck_assert_uint_eq(res.borrowed, 0);
	ck_assert_uint_eq(res.left_ca, 0);
	ck_assert_uint_eq(res.layered, 2);
	ck_assert_uint_eq(m.lft[3][13], 1);
	ck_assert_uint_eq(oo_sl_map_get(&map, 3, 13), 1);
	ck_assert_uint_eq(oo_sl_map_get(&map, 1, 13), 1);
	ck_assert_uint_eq(oo_sl_map_get(&map, 3, 12), 0);
	oo_sl_map_free(&map);
}
END_TEST

START_TEST(cdg_routes_are_taken_back_together)
{
	struct reach_model m;
	struct oo_cdg g;
	uint8_t *bits;
	size_t len;

	/* the crossed hosts' routes, S0 -> L1 -> S1 for m1 and S1 -> L0 ->
	   S0 for m: a ring */
	reach_model_crossed(&m);
	m.lft[3][7] = 1;
	ck_assert_int_eq(oo_cdg_init_empty(&g, &m.net), 0);
	len = g.nodes * g.stride / 8 + 1;
	bits = calloc(len, 1);
	ck_assert_ptr_nonnull(bits);
	ck_assert_int_eq(memcmp(bits, g.bits, len), 0);
	oo_cdg_begin(&g);
	ck_assert_int_eq(oo_cdg_add_route(&g, 0, 6), 1);	/* L0 -> h1 */
	ck_assert_int_eq(oo_cdg_add_route(&g, 1, 5), 1);	/* L1 -> h0 */
	ck_assert_int_eq(oo_cdg_add_route(&g, 2, 4), 1);	/* S0 -> m1 */
	ck_assert_int_ne(memcmp(bits, g.bits, len), 0);
	assert_cdg_ordered(&g, &m);
	memcpy(bits, g.bits, len);
	/* the third closes the ring: refused, the other two stay */
	ck_assert_int_eq(oo_cdg_add_route(&g, 3, 7), 0);
	ck_assert_int_eq(memcmp(bits, g.bits, len), 0);
	assert_cdg_ordered(&g, &m);
	/* a route with no switch-to-switch dependency adds nothing */
	ck_assert_int_eq(oo_cdg_add_route(&g, 2, 7), 1);
	ck_assert_int_eq(memcmp(bits, g.bits, len), 0);
	/* the set since oo_cdg_begin() goes back together */
	oo_cdg_rollback(&g);
	memset(bits, 0, len);
	ck_assert_int_eq(memcmp(bits, g.bits, len), 0);
	ck_assert_int_eq(oo_cdg_add_route(&g, 3, 7), 1);
	free(bits);
	oo_cdg_free(&g);
}
END_TEST

START_TEST(reach_vls_option)
{
	struct oo_options o;
	char err[256];

	ck_assert_int_eq(oo_options_parse("port_offsetting=on", &o, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(o.reach_vls, 1);
	ck_assert_int_eq(oo_options_parse("port_offsetting=on reach_vls=4",
					  &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.reach_vls, 4);
	ck_assert_int_eq(oo_options_parse("reach_vls=8 reach_vls=8", &o, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(o.reach_vls, 8);
	parse_bad("reach_vls=0", "reach_vls value '0' is not a number");
	parse_bad("reach_vls=9", "from 1 to 8");
	parse_bad("reach_vls=2x", "reach_vls value '2x'");
	parse_bad("reach_vls=-2", "reach_vls value '-2'");
	parse_bad("reach_vls=2 reach_vls=3", "reach_vls is given twice, as 2 "
		  "and as 3");
}
END_TEST

START_TEST(polish_kicks_option)
{
	struct oo_options o;
	char err[256];

	ck_assert_int_eq(oo_options_parse("port_offsetting=on", &o, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(o.polish_kicks, 0);
	ck_assert_int_eq(oo_options_parse("port_offsetting=on "
					  "polish_kicks=200", &o, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(o.polish_kicks, 200);
	ck_assert_uint_eq(o.reach_vls, 1);
	ck_assert_int_eq(oo_options_parse("osmoffset.polish_kicks=100000 "
					  "reach_vls=2", &o, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(o.polish_kicks, 100000);
	ck_assert_uint_eq(o.reach_vls, 2);
	ck_assert_int_eq(oo_options_parse("polish_kicks=0", &o, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(o.polish_kicks, 0);
	parse_bad("polish_kicks=100001", "polish_kicks value '100001' is not "
		  "a number of kicks from 0 to 100000");
	parse_bad("polish_kicks=-1", "polish_kicks value '-1'");
	parse_bad("polish_kicks=on", "polish_kicks value 'on'");
	parse_bad("polish_kicks=5 polish_kicks=6", "polish_kicks is given "
		  "twice, as 5 and as 6");
	parse_bad("polish_kickz=5", "polish, polish_even, polish_cables, "
		  "polish_ways, polish_kicks, spine_cas");
}
END_TEST

/*
 * An unknown key as long as a token may be: the message names it and
 * every known key, to the last, in OO_OPTIONS_ERR_MAX bytes.
 */
START_TEST(options_unknown_key_names_all)
{
	char text[160], want[160];

	memset(text, 'k', 124);
	strcpy(text + 124, "=on");
	snprintf(want, sizeof(want), "unknown key '%.124s' (known: "
		 "port_offsetting, hop_tables", text);
	parse_bad(text, want);
	parse_bad(text, "polish_ways, polish_kicks, spine_cas, "
		  "leaf_shuffles)");
}
END_TEST

static Suite *osmoffset_suite(void)
{
	Suite *s = suite_create("osmoffset");
	TCase *sel = tcase_create("select");
	TCase *crd = tcase_create("coordinated");
	TCase *opt = tcase_create("options");
	TCase *hop = tcase_create("hop tables");
	TCase *ev = tcase_create("stock guard");
	TCase *rk = tcase_create("tree ranking");
	TCase *rc = tcase_create("reach");

	tcase_add_test(sel, rotation_start_follows_paths_routed);
	tcase_add_test(sel, select_prefers_least_loaded);
	tcase_add_test(sel, select_prefers_unused_remote_node);
	tcase_add_test(sel, seed_example_port_by_port);
	tcase_add_test(sel, seed_example_base_first);
	tcase_add_loop_test(sel, every_offset_spreads_evenly, 0, 4);
	tcase_add_test(sel, select_balances_each_offset_first);
	tcase_add_test(sel, down_port_is_never_chosen);
	tcase_add_test(sel, lmc_paths_take_different_remote_nodes);
	tcase_add_test(sel, no_candidate_gives_no_path);
	suite_add_tcase(s, sel);

	tcase_add_test(crd, divisors_multiply_parents);
	tcase_add_test(crd, divisors_saturate);
	tcase_add_test(crd, coordinated_slots_are_digits_of_the_rank);
	tcase_add_test(crd, two_level_shift_is_congestion_free);
	tcase_add_test(crd, three_level_shift_is_congestion_free);
	tcase_add_test(crd, offset_slots_stay_in_aligned_blocks);
	tcase_add_test(crd, stride_slots_spread_a_ports_lids_around_the_ring);
	tcase_add_test(crd, ring_offsets_keep_the_lane_and_spread_the_parents);
	tcase_add_test(crd, offsets_beside_base_take_the_next_neighbours);
	tcase_add_test(crd, offset_detour_keeps_off_the_ports_own_switches);
	tcase_add_test(crd, far_slot_keeps_off_the_neighbours);
	tcase_add_test(crd, sibling_lane_takes_the_same_parent);
	tcase_add_test(crd, sibling_lane_takes_the_least_loaded_cable);
	tcase_add_test(crd, extra_lane_turns_over_the_wide_trunk);
	tcase_add_test(crd, apart_offsets_go_around_the_slots);
	tcase_add_test(crd, free_digit_moves_past_taken_ones);
	tcase_add_test(crd, lanes_align_only_where_runs_repeat_the_parents);
	tcase_add_test(crd, live_slot_renumbers_the_coordinated_rule);
	tcase_add_test(crd, live_slots_split_a_leafs_lids_evenly);
	tcase_add_test(crd, offsets_take_block_of_whole_live_parents);
	tcase_add_test(crd, child_lane_picks_the_group_then_the_link);
	tcase_add_test(crd, mirror_link_follows_the_destinations_up_path);
	tcase_add_test(crd, peers_parent_is_the_one_most_senders_use);
	tcase_add_test(crd, excess_lanes_are_cut);
	tcase_add_test(crd, dead_slots_of_a_leaf_fill_its_live_ones);
	tcase_add_test(crd, dead_slots_spread_a_leafs_lids_evenly);
	tcase_add_test(crd, offset_detour_weighs_nearby_ranks_first);
	tcase_add_test(crd, two_level_spread_is_congestion_free);
	suite_add_tcase(s, crd);

	tcase_add_test(hop, updn_ranks_are_distances_from_roots);
	tcase_add_test(hop, updn_hops_never_turn_down_then_up);
	tcase_add_test(hop, updn_leaf_roots_are_left_out);
	tcase_add_test(hop, updn_spines_beside_the_roots_join_them);
	tcase_add_test(hop, updn_top_switches_beside_the_roots_join_them);
	tcase_add_test(hop, updn_roots_under_roots_are_left_out);
	tcase_add_test(hop, updn_hostless_switches_are_roots_of_last_resort);
	tcase_add_test(hop,
		       updn_roots_of_last_resort_go_up_one_way_between_them);
	tcase_add_test(hop,
		       updn_roots_in_a_chain_reach_each_other_over_the_centre);
	tcase_add_test(hop, updn_dead_end_roots_leave_the_roots_they_hang_off);
	tcase_add_test(hop, updn_an_edge_without_hosts_is_no_top_over_the_spines);
	tcase_add_test(hop, minhop_distances_follow_healthy_links);
	suite_add_tcase(s, hop);

	tcase_add_test(opt, options_accepted);
	tcase_add_test(opt, options_rejected);
	tcase_add_test(opt, hop_tables_option);
	tcase_add_test(opt, rule_names);
	tcase_add_test(opt, natural_order_of_names);
	tcase_add_test(opt, stock_guard_option);
	tcase_add_test(opt, reach_all_option);
	tcase_add_test(opt, design_lanes_option);
	tcase_add_test(opt, spine_cas_option);
	tcase_add_test(opt, leaf_shuffles_option);
	tcase_add_test(opt, polish_even_option);
	tcase_add_test(opt, polish_ways_option);
	tcase_add_test(opt, reach_vls_option);
	tcase_add_test(opt, polish_kicks_option);
	tcase_add_test(opt, options_unknown_key_names_all);
	suite_add_tcase(s, opt);

	tcase_add_test(ev, eval_scores_shift_rounds);
	tcase_add_test(ev, eval_counts_lost_flows);
	tcase_add_test(ev, eval_walks_paths_longer_than_a_batch_keeps);
	tcase_add_test(ev, eval_loads_a_striped_flow_up_to_its_lost_lid);
	tcase_add_test(ev, eval_rounds_of_more_flows_than_a_batch);
	tcase_add_test(ev, eval_finds_the_lids_a_flow_loses);
	tcase_add_test(ev, eval_marks_the_switches_a_block_uses);
	tcase_add_test(ev, eval_marks_base_and_further_offsets_apart);
	tcase_add_test(ev, eval_worse_and_shuffle);
	tcase_add_test(ev, eval_shuffle_runs_keeps_each_leaf_together);
	tcase_add_test(ev, polish_moves_an_entry_off_the_busiest_link);
	tcase_add_test(ev, polish_moves_to_the_second_cable_of_a_pair);
	tcase_add_test(ev,
		       polish_leaves_transit_switches_lost_flows_and_big_nets_alone);
	tcase_add_test(ev, polish_evens_route_counts_where_no_round_loses);
	tcase_add_test(ev, polish_parts_the_routes_a_random_round_runs_at_once);
	tcase_add_test(ev, polish_even_evens_route_counts_past_a_rounds_ties);
	tcase_add_test(ev, polish_cables_evens_parallel_cables);
	tcase_add_test(ev, polish_ways_evens_free_of_loops);
	tcase_add_test(ev, polish_swaps_two_entries_where_no_single_move_gains);
	tcase_add_test(ev,
		       polish_spends_a_lead_to_raise_a_group_below_its_floor);
	tcase_add_test(ev,
		       polish_weighs_random_samples_only_for_trials_that_gain);
	tcase_add_test(ev, polish_offsets_moves_the_further_offsets_alone);
	tcase_add_test(ev, polish_kicks_leave_a_local_optimum);
	tcase_add_test(ev, polish_kicks_lower_no_group);
	tcase_add_test(ev, aggregation_nodes_are_known_by_name);
	suite_add_tcase(s, ev);

	tcase_add_test(rk, rank_two_level_tree);
	tcase_add_test(rk, rank_missing_cable_leaves_a_hole);
	tcase_add_test(rk, rank_hosts_on_a_spine_keep_it_a_spine);
	tcase_add_test(rk, rank_hosts_on_a_core_keep_it_a_core);
	tcase_add_test(rk,
		       rank_hosts_on_a_line_asic_over_one_edge_keep_it_a_line);
	tcase_add_test(rk, rank_jobs_run_on_the_leaves_only);
	tcase_add_test(rk, rank_jobs_cross_a_trunk_from_a_lone_host);
	tcase_add_test(rk, rank_tapered_edges_number_their_own_links);
	tcase_add_test(rk, rank_windowed_spines_number_lanes_alike);
	tcase_add_test(rk, rank_windowed_spines_share_a_short_design);
	tcase_add_test(rk, rank_director_is_three_levels);
	tcase_add_test(rk, rank_lanes_follow_the_widest_trunk);
	tcase_add_test(rk, rank_lanes_by_design_leave_the_extra_cable_out);
	tcase_add_test(rk, design_lanes_are_what_two_thirds_of_trunks_have);
	tcase_add_test(rk, rank_without_hosts_has_no_levels);
	suite_add_tcase(s, rk);

	tcase_add_test(rc, reach_fills_a_ca_on_a_spine_through_a_leaf);
	tcase_add_test(rc, reach_leaves_a_lid_no_switch_reaches);
	tcase_add_test(rc, reach_finds_credit_loops);
	tcase_add_test(rc, cdg_adds_lids_and_refuses_a_loop);
	tcase_add_test(rc, cdg_ca_routes_hold_what_cas_traffic_takes_alone);
	tcase_add_test(rc, cdg_routes_are_taken_back_together);
	tcase_add_test(rc, reach_fills_a_hole_toward_a_neighbour_by_port);
	tcase_add_test(rc, reach_puts_a_turn_that_closes_a_loop_on_vl1);
	tcase_add_test(rc, reach_lends_a_lid_the_routes_of_its_ports_other_lid);
	suite_add_tcase(s, rc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(osmoffset_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
