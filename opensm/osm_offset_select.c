/*
 * osmoffset - the port-selection rule, free of OpenSM types
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 */

#include <ctype.h>
#include <string.h>

#include "osmoffset.h"

unsigned oo_rotation_start(const struct oo_candidate *cand, unsigned n)
{
	uint64_t routed = 0;
	unsigned i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		routed += cand[i].paths;
	return (unsigned)((routed / n) % n);
}

static int better_candidate(const struct oo_candidate *a,
			    const struct oo_candidate *b)
{
	if (a->reuse != b->reuse)
		return a->reuse < b->reuse;
	if (a->offset_paths != b->offset_paths)
		return a->offset_paths < b->offset_paths;
	return a->paths < b->paths;
}

int oo_select_candidate(const struct oo_candidate *cand, unsigned n,
			unsigned start)
{
	unsigned i, idx;
	int best = -1;

	if (!n)
		return -1;
	for (i = 0; i < n; i++) {
		idx = (start + i) % n;
		if (best < 0 || better_candidate(&cand[idx], &cand[best]))
			best = (int)idx;
	}
	return best;
}

unsigned oo_coordinated_slot(uint32_t rank, uint64_t divisor,
			     unsigned lid_offset, unsigned slots)
{
	if (!slots)
		return 0;
	if (!divisor)
		divisor = 1;
	return (unsigned)((rank / divisor + lid_offset) % slots);
}

unsigned oo_offset_slot(unsigned base, unsigned lid_offset, unsigned lids,
			unsigned slots)
{
	unsigned start;

	if (!slots)
		return 0;
	if (lids > 1 && slots % lids == 0) {
		start = base - base % lids;
		return start + (base - start + lid_offset) % lids;
	}
	return (base + lid_offset) % slots;
}

/* base moved ceil(lid_offset * slots / lids) slots on, around them all */
static unsigned slot_ahead(unsigned base, unsigned lid_offset, unsigned lids,
			   unsigned slots)
{
	return (unsigned)((base + ((uint64_t)lid_offset * slots + lids - 1) /
			   lids) % slots);
}

unsigned oo_stride_slot(unsigned base, unsigned lid_offset, unsigned lids,
			unsigned slots)
{
	if (!slots || !lids)
		return 0;
	if (slots % lids == 0)
		return oo_offset_slot(base, lid_offset, lids, slots);
	return slot_ahead(base, lid_offset, lids, slots);
}

unsigned oo_ring_offset_slot(unsigned base, unsigned lid_offset,
			     unsigned lids, unsigned slots, unsigned parents)
{
	if (parents && parents == slots)
		return oo_stride_slot(base, lid_offset, lids, slots);
	if (parents && lids && slots % parents == 0 && slots % lids &&
	    parents >= lids)
		return base - base % parents +
		    oo_stride_slot(base % parents, lid_offset, lids, parents);
	return oo_offset_slot(base, lid_offset, lids, slots);
}

int oo_beside_base(const uint32_t *cand, unsigned n, uint32_t base,
		   unsigned lid_offset)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (cand[i] == base)
			return (int)((i + lid_offset) % n);
	return -1;
}

unsigned oo_live_slot(uint32_t rank, uint64_t divisor, unsigned lid_offset,
		      unsigned lids, unsigned live)
{
	unsigned base = oo_coordinated_slot(rank, divisor, 0, live);

	if (!live || !lid_offset || !lids)
		return base;
	return slot_ahead(base, lid_offset, lids, live);
}

int oo_window_detour_slot(const uint8_t *live, const uint8_t *avoid,
			  const uint32_t *near, const uint32_t *load,
			  unsigned slots, unsigned base)
{
	unsigned level, j;

	for (level = 0; level <= 2; level++) {
		int best = -1;

		for (j = 1; j <= slots; j++) {
			unsigned s = (base + j) % slots;

			if (!live[s] || avoid[s] > level)
				continue;
			if (best < 0 || (near && near[s] < near[best]) ||
			    ((!near || near[s] == near[best]) &&
			     load[s] < load[best]))
				best = (int)s;
		}
		if (best >= 0)
			return best;
	}
	return -1;
}

static unsigned ring_distance(unsigned a, unsigned b, unsigned slots)
{
	unsigned d = a > b ? a - b : b - a;

	return d < slots - d ? d : slots - d;
}

int oo_far_slot(const uint8_t *cand, const uint32_t *load, unsigned slots,
		unsigned dead, unsigned *cursor)
{
	unsigned j, s, far = 0, near;
	uint32_t least = UINT32_MAX;

	for (s = 0; s < slots; s++)
		if (cand[s] != OO_SLOT_DEAD && load[s] < least)
			least = load[s];
	for (s = 0; s < slots; s++)
		if (cand[s] != OO_SLOT_DEAD && load[s] <= least + 1 &&
		    ring_distance(s, dead, slots) > far)
			far = ring_distance(s, dead, slots);
	near = far > slots / 8 ? far - slots / 8 : 0;
	for (j = 0; j < slots; j++) {
		s = (*cursor + j) % slots;
		if (cand[s] != OO_SLOT_DEAD && load[s] <= least + 1 &&
		    ring_distance(s, dead, slots) >= near) {
			*cursor = s + 1;
			return (int)s;
		}
	}
	return -1;
}

int oo_sibling_lane(const uint8_t *cand, const uint8_t *cut,
		    const uint32_t *load, unsigned slots, unsigned lanes,
		    unsigned slot)
{
	unsigned step, k;
	int best = -1;

	if (lanes < 2 || !slots || slots % lanes || slot >= slots)
		return -1;
	step = slots / lanes;
	for (k = 1; k < lanes; k++) {
		unsigned s = (slot + k * step) % slots;

		if (cand[s] == OO_SLOT_DEAD || (cut && cut[s]))
			continue;
		if (!load)
			return (int)s;
		if (best < 0 || load[s] < load[best])
			best = (int)s;
	}
	return best;
}

int oo_lanes_align(const uint16_t *parent, unsigned slots, unsigned lanes)
{
	unsigned step, s, k;

	if (lanes < 2 || !slots || slots % lanes)
		return 0;
	step = slots / lanes;
	for (s = 0; s < step; s++) {
		uint16_t first = 0;

		for (k = 0; k < lanes; k++) {
			uint16_t p = parent[s + k * step];

			if (!p)
				continue;
			if (first && p != first)
				return 0;
			first = p;
		}
	}
	return 1;
}

unsigned oo_extra_lane(unsigned lane, unsigned lanes, unsigned width,
		       uint64_t turn)
{
	if (!lanes || width <= lanes || lane >= lanes)
		return lane;
	return (unsigned)((turn * lanes + lane) % width);
}

unsigned oo_apart_offset_slot(unsigned base, unsigned lid_offset,
			      unsigned lids, unsigned slots)
{
	if (!slots || !lids)
		return 0;
	return (unsigned)((base + (uint64_t)lid_offset * slots / lids) %
			  slots);
}

unsigned oo_free_digit(const uint8_t *taken, unsigned slots, unsigned want)
{
	unsigned j;

	if (!slots)
		return 0;
	want %= slots;
	for (j = 0; j < slots; j++)
		if (!taken[(want + j) % slots])
			return (want + j) % slots;
	return want;
}

int oo_offsets_take_live_block(const uint8_t *cand, const uint8_t *cut,
			       unsigned slots, unsigned parents,
			       unsigned lids)
{
	unsigned s, live = 0;

	if (!parents || !lids || slots % parents)
		return 0;
	for (s = 0; s < slots; s++) {
		int dead = cand[s] == OO_SLOT_DEAD;

		if ((cut && cut[s]) || dead != (cand[s % parents] ==
						OO_SLOT_DEAD))
			return 0;
		live += !dead;
	}
	return live && live < slots && live * 2 <= slots && live % lids == 0;
}

static unsigned count_lanes(const uint16_t *remote, unsigned slots,
			    uint16_t parent)
{
	unsigned s, n = 0;

	for (s = 0; s < slots; s++)
		if (remote[s] == parent)
			n++;
	return n;
}

unsigned oo_cut_excess_lanes(const uint16_t *remote, const uint8_t *cap,
			     unsigned slots, uint8_t *cut)
{
	unsigned s, e, lane, n = 0, live = 0, worst = 0;

	for (s = 0; s < slots; s++) {
		cut[s] = 0;
		if (!remote[s])
			continue;
		live++;
		if (!cap[s])
			continue;
		lane = 0;
		for (e = 0; e < s; e++)
			if (remote[e] == remote[s])
				lane++;
		if (!lane || lane < cap[s])
			continue;
		cut[s] = 1;
		n++;
		if (!worst || count_lanes(remote, slots, remote[s]) *
		    cap[worst - 1] > count_lanes(remote, slots,
					       remote[worst - 1]) * cap[s])
			worst = s + 1;
	}
	/* the slots left carry the cut ones' LIDs as well, live / (live - n)
	   each: worth it only below the worst parent's lanes / cap */
	if (n && (unsigned long)live * cap[worst - 1] >=
	    (unsigned long)count_lanes(remote, slots, remote[worst - 1]) *
	    (live - n)) {
		memset(cut, 0, slots);
		n = 0;
	}
	return n;
}

void oo_level_divisors(const unsigned *parents, unsigned levels,
		       uint64_t *divisor)
{
	const uint64_t cap = 1ULL << 32;
	unsigned l;

	if (!levels)
		return;
	divisor[0] = 1;
	for (l = 1; l < levels; l++) {
		uint64_t step = parents[l - 1] ? parents[l - 1] : 1;

		divisor[l] = divisor[l - 1] * step;
		if (divisor[l] > cap)
			divisor[l] = cap;
	}
}

int oo_mirror_link(const uint16_t *child, unsigned n, uint16_t want,
		   unsigned lane)
{
	unsigned i, links = 0;

	for (i = 0; i < n; i++)
		if (child[i] == want)
			links++;
	if (!want || !links)
		return -1;
	lane %= links;
	for (i = 0; i < n; i++)
		if (child[i] == want && !lane--)
			break;
	return (int)i;
}

uint16_t oo_peers_parent(const uint16_t *sent, unsigned n,
			 const uint16_t *remote, unsigned ports)
{
	unsigned p, q, i, best = 0, votes, most = 0;

	for (p = 0; p < ports; p++) {
		if (!remote[p])
			continue;
		for (q = 0; q < p && remote[q] != remote[p]; q++)
			;
		if (q < p)	/* a parallel link: counted with the first */
			continue;
		for (i = 0, votes = 0; i < n; i++)
			votes += sent[i] == remote[p];
		if (votes > most) {
			most = votes;
			best = p;
		}
	}
	return most ? remote[best] : 0;
}

int oo_child_lane(const uint16_t *child, unsigned n, unsigned digit,
		  unsigned lane)
{
	unsigned i, groups = 0, g;

	for (i = 0; i < n; i++)
		if (!i || child[i] != child[i - 1])
			groups++;
	if (!groups)
		return -1;
	/* the first candidate of group digit % groups */
	for (g = digit % groups, i = 0; g; i++)
		if (child[i + 1] != child[i])
			g--;
	return oo_mirror_link(child, n, child[i], lane);
}

/*
 * What LID i's destination's other LIDs already take of slot s: 2 the
 * slot itself, 1 its parent, else 0.
 */
static unsigned taken_by_dest(const uint16_t *slot, unsigned i,
			      unsigned lids, const uint8_t *live,
			      const uint16_t *parent, unsigned slots,
			      unsigned s)
{
	unsigned first = i - i % lids, j, taken = 0;

	for (j = first; j < first + lids; j++) {
		if (j == i || slot[j] >= slots || !live[slot[j]])
			continue;
		if (slot[j] == s)
			return 2;
		if (parent[slot[j]] == parent[s])
			taken = 1;
	}
	return taken;
}

/*
 * What moving LID i to live slot s costs, lowest first: a slot its
 * destination already takes, then the LIDs the slot carries, then a
 * parent the destination already takes.
 */
static uint64_t fill_cost(const uint16_t *slot, unsigned i, unsigned lids,
			  const uint8_t *live, const uint16_t *parent,
			  const uint32_t *count, unsigned slots, unsigned s)
{
	unsigned taken = taken_by_dest(slot, i, lids, live, parent, slots, s);

	return (uint64_t)(taken == 2) << 40 | (uint64_t)count[s] << 1 |
	    (taken == 1);
}

/* The live slot LID i moves to from its dead slot (see header). */
static unsigned fill_slot(const uint16_t *slot, unsigned i, unsigned lids,
			  const uint8_t *live, const uint16_t *parent,
			  const uint32_t *count, unsigned slots)
{
	unsigned j, s, best = slots;
	uint64_t cost, least = UINT64_MAX;

	for (j = 1; j <= slots; j++) {
		s = (slot[i] + j) % slots;
		if (!live[s])
			continue;
		cost = fill_cost(slot, i, lids, live, parent, count, slots, s);
		if (cost < least) {
			best = s;
			least = cost;
		}
	}
	return best;
}

unsigned oo_fill_dead_slots(uint16_t *slot, unsigned n, unsigned lids,
			    const uint8_t *live, const uint16_t *parent,
			    unsigned slots)
{
	uint32_t count[OO_MAX_SLOTS] = { 0 };
	unsigned i, s, moved = 0;

	if (!lids || !slots || slots > OO_MAX_SLOTS)
		return 0;
	for (s = 0; s < slots && !live[s]; s++)
		;
	if (s == slots)
		return 0;
	for (i = 0; i < n; i++)
		if (slot[i] < slots && live[slot[i]])
			count[slot[i]]++;
	for (i = 0; i < n; i++) {
		if (!(i % lids) || slot[i] >= slots || live[slot[i]])
			continue;
		s = fill_slot(slot, i, lids, live, parent, count, slots);
		slot[i] = (uint16_t)s;
		count[s]++;
		moved++;
	}
	return moved;
}

static int compare_digit_runs(const char **pa, const char **pb)
{
	const char *a = *pa, *b = *pb;
	const char *ea, *eb;
	size_t la, lb;

	while (*a == '0' && isdigit((unsigned char)a[1]))
		a++;
	while (*b == '0' && isdigit((unsigned char)b[1]))
		b++;
	for (ea = a; isdigit((unsigned char)*ea); ea++)
		;
	for (eb = b; isdigit((unsigned char)*eb); eb++)
		;
	la = (size_t)(ea - a);
	lb = (size_t)(eb - b);
	*pa = ea;
	*pb = eb;
	if (la != lb)
		return la < lb ? -1 : 1;
	for (; a < ea; a++, b++)
		if (*a != *b)
			return *a < *b ? -1 : 1;
	return 0;
}

int oo_natural_cmp(const char *a, const char *b)
{
	int r;

	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			r = compare_digit_runs(&a, &b);
			if (r)
				return r;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	if (*a == *b)
		return 0;
	return *a ? 1 : -1;
}
