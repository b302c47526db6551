/*
 * osmoffset - internal interfaces between the plugin's OpenSM glue files
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 */

#ifndef OSMOFFSET_GLUE_H
#define OSMOFFSET_GLUE_H

#include <stdint.h>
#include <time.h>

#include "osmoffset.h"

struct osm_opensm;
struct osm_switch;

/* CPU time of the calling thread, in seconds, for the log lines. */
static inline double oo_thread_cpu_seconds(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t))
		return 0.0;
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The roots oo_updn_build_hop_tables() ranks the switches from. */
enum oo_updn_roots {
	OO_ROOTS_UPDN,		/* as updn's own detection finds them */
	OO_ROOTS_CHECKED,	/* SHARP nodes out of the detection; leaf
				   roots, edge tops and roots under roots
				   left out */
	OO_ROOTS_COMPLETED,	/* and the spines the detection missed
				   join them */
};

/* What *changed of oo_updn_build_hop_tables() reports. */
#define OO_ROOTS_CHANGED 1	/* the roots may not be updn's */
#define OO_ROOTS_ADDED 2	/* spines joined them */
#define OO_ROOTS_LANES 4	/* roots of last resort kept though some
				   switch with end ports has no up/down path
				   to another: the reach pass must route
				   those on lanes above VL0 */

/*
 * The updn engine's hop-table stage (build_lid_matrices), computed with
 * oo_updn_hops().  Returns 0 when the hop tables are built, -1 when there
 * are no root switches (as updn: the next routing engine is tried), and 1
 * when this configuration is left to OpenSM's own updn stage (connected
 * roots, node ids file, hop weights without a usable root file, ports
 * that disagree about their links, no memory, unusual LIDs).  roots says
 * which roots (never more than the root GUID file's, when there is one);
 * *changed (if given) gets OO_ROOTS_CHANGED when anything but updn's
 * detection had a say (SHARP nodes left out of it, roots left out or
 * added: the tables may then not be the ones stock updn builds) and
 * OO_ROOTS_ADDED when spines joined the roots.  Over roots of last resort
 * (no root found, switches without end ports taken), where some switch
 * with end ports has no up/down path to another, up/down is not used
 * (-1) unless lanes (the reach pass has lanes above VL0 for the turns
 * those paths need): then *changed also gets OO_ROOTS_LANES.
 */
int oo_updn_build_hop_tables(struct osm_opensm *osm, enum oo_updn_roots roots,
			     int lanes, unsigned *changed);

/*
 * The minhop engine's hop-table stage (osm_ucast_mgr_build_lid_matrices),
 * computed with oo_minhop_distances().  Returns 0 when built, 1 when left
 * to OpenSM (hop weights file, no memory, unusual LIDs).
 */
int oo_minhop_build_hop_tables(struct osm_opensm *osm);

/*
 * Port offsetting's LFT stage (osm_ucast_offset_lft.c): fills every
 * switch's new_lft under rule.  lane_share 0: a base LID whose lane to a
 * parent has no cable always takes another lane to the same parent; N >
 * 0: only while that lane carries fewer than N x (1 + the least loaded
 * up cable's) base LIDs, else it detours to a lightly loaded cable of
 * another parent (oo_far_slot()).  Without OO_LFT_DESIGN_LANES in flags
 * each level has as many lanes as its widest trunk has links; with it, as
 * its design has (oo_design_lanes()), the links beyond them sharing the
 * lanes' LIDs.  With OO_LFT_OFFSETS_APART a further LID offset takes the
 * slot oo_apart_offset_slot() gives, else oo_ring_offset_slot()'s.  With
 * OO_LFT_DIGITS_APART a CA's digit at level 1 is the first that no CA
 * before it takes below the same level-1 switch (oo_free_digit()).  With
 * OO_LFT_KEEP_LIVE a plan that misses one slot in eight or fewer keeps
 * the digits of its live slots (only the LIDs of its dead slots detour)
 * instead of numbering the destinations over its live slots.  With
 * OO_LFT_TURN_ONCE (minhop's tables, whose routes may go down and up
 * again) a route toward a CA's or a switch's LID that turns back up takes
 * the candidate toward the first switch of the tree among its own.
 * Returns 0; 1 when lane_share or OO_LFT_KEEP_LIVE changed no LID (the
 * tables are those without them), or a flag would change nothing (no
 * level's design is narrower than its widest trunk; LMC 0; no digit
 * moves; the tables are left as they were);
 * or -1 (no memory, a switch without tables, a tree deeper than
 * OO_MAX_LEVELS) with the LFTs to be rebuilt by the stock stage.
 */
enum oo_rule;
#define OO_LFT_DESIGN_LANES 0x1	/* lanes by design */
#define OO_LFT_OFFSETS_APART 0x2	/* oo_apart_offset_slot() */
#define OO_LFT_DIGITS_APART 0x4	/* keep_digits_apart(), oo_free_digit() */
#define OO_LFT_KEEP_LIVE 0x8	/* takes_live_slot(): few dead, no renumber */
#define OO_LFT_TURN_ONCE 0x10	/* minhop: turns_back_up() routes take
				   first_neighbour() */
/* not an LFT stage flag: in oo_guard_stages.variants, the polish */
#define OO_GUARD_POLISH 0x100	/* oo_polish() */
#define OO_GUARD_SPINE_CAS 0x200	/* the CAs on spines or cores rank */
#define OO_GUARD_LEAF_SHUFFLES 0x400	/* leaf orders, leaves shuffled */
int oo_build_offset_lfts(struct osm_opensm *osm, enum oo_rule rule,
			 unsigned lane_share, unsigned flags);

/* An LFT stage: fills every switch's new_lft; 0 on success. */
typedef int (*oo_lft_builder)(void *context);

/* Port offsetting's LFT stage with lane_share and flags, returning as
   oo_build_offset_lfts() does. */
typedef int (*oo_lft_variant)(void *context, unsigned lane_share,
			      unsigned flags);

/*
 * The stages the stock guard runs.  ours and stock fill the LFTs from the
 * hop tables in place.  When those are not the ones the stock engine
 * would use (roots changed, see oo_updn_build_hop_tables()), stock_hops
 * rebuilds the stock engine's own, checked_hops (or NULL) those over the
 * roots port offsetting checked but did not complete, and our_hops ours
 * again (all NULL otherwise).  stock may be NULL (not known: ours stay
 * unchecked).
 */
struct oo_guard_stages {
	oo_lft_builder ours;
	/* ours again with a lane_share and OO_LFT_* flags, or NULL: with
	   each flag in variants (lanes by design, live slots kept, digits
	   apart, then LID offsets apart, each over whatever went on before)
	   before the comparison with stock, kept where they score better;
	   with lane_share where ours and their mix lose.  OO_GUARD_POLISH
	   in variants: then the polish of whatever went on (oo_polish()),
	   kept where it scores better */
	oo_lft_variant ours_with;
	unsigned variants;
	oo_lft_builder stock;
	oo_lft_builder stock_hops;
	oo_lft_builder checked_hops;
	oo_lft_builder our_hops;
	/* the reach pass that fills the tables that stay, or NULL: each
	   candidate is scored as it will leave them, but for its retry
	   round; fill_whole (with fill) the whole pass, which the CA LIDs
	   tables leave without a route where the stock tables leave none
	   are counted after */
	oo_lft_builder fill;
	oo_lft_builder fill_whole;
	/* the pass as OpenSM will run it on VL0 (oo_reach_fill_vl0() with
	   retry 2), or NULL: what reaching every LID is judged on */
	oo_lft_builder fill_final;
	/* the reach pass may put what it cannot fill loop-free on VL0 on
	   lanes above it (oo_reach_lanes() > 1: reach_vls > 1, QoS on and
	   the data VLs for them): the CA LIDs the fill leaves without a
	   route on VL0 are then not lost for good, and ours need not leave
	   as few as stock's */
	int lanes_beyond_vl0;
	/* the engine's routes may turn down and up (minhop): a polish that
	   closes a credit loop among the routes the CAs' traffic takes is
	   taken back, and tables that close one where the stock tables close
	   none give way to those */
	int routes_may_loop;
	/* kicks of the last search on the tables that stay (oo_polish_kicks(),
	   with OO_GUARD_POLISH; 0: none) */
	unsigned polish_kicks;
	/* the route counts of the tables that stay evened last, a round's
	   ties loose (oo_polish_even(), with OO_GUARD_POLISH) */
	int polish_even;
	/* the route counts of the tables that stay evened over parallel
	   cables to one switch (oo_polish_cables(), with OO_GUARD_POLISH) */
	int polish_cables;
	/* and then over the equally short ways to other neighbours, each
	   move checked against the channel dependencies (oo_polish_ways(),
	   with OO_GUARD_POLISH) */
	int polish_ways;
	void *ctx;		/* of ours, the hop builders and fill */
	void *stock_ctx;
};

/*
 * Build the LFTs with st->ours under the stock guard
 * (osm_ucast_offset_guard.c): the stock stage runs too, and ours, a mix
 * of both, or the stock tables stay, the first that scores at least as
 * well as stock in every rank order looked at.  With stock_hops, the
 * stock tables to beat, and those that stay when ours and the mix lose,
 * are the stock engine's own (its hop tables, then its LFT stage) unless
 * they have a credit loop or updn finds no root (then those over the
 * checked roots, with checked_hops, else the LFT stage over our hop
 * tables), while the mix takes its stock entries from the LFT stage over
 * our hop tables.
 * Returns 0 with a full set of LFTs in place (and the hop tables they were
 * built over), -1 when st->ours failed (the port profiles are as before).
 */
int oo_guard_lfts(struct osm_opensm *osm, const struct oo_guard_stages *st);

/*
 * The subnet as plain arrays (osm_ucast_offset_net.c), for the stock
 * guard and the reach pass: the switches in sw_guid_tbl order, each with
 * its index + 1 in sw->priv until oo_glue_net_free(); the switch behind
 * every port (next, OO_EVAL_NONE for none) and its port there (rport), by
 * switch * stride + port; each switch's new LFT and its length.
 */
struct oo_glue_net {
	unsigned num_sw;
	unsigned stride;		/* more than any port number */
	struct osm_switch **sw;
	uint32_t *next;
	uint8_t *rport;
	uint8_t **lft;
	unsigned *lft_len;
};

#define oo_glue_index(p_sw) ((unsigned)((uintptr_t)(p_sw)->priv - 1))

/* Returns 0, or -1 (no memory) with nothing allocated. */
int oo_glue_net_build(struct oo_glue_net *gn, struct osm_opensm *osm);
void oo_glue_net_free(struct oo_glue_net *gn);

/*
 * rn over gn's switches, links and tables (its CA ports and switch LIDs
 * none: the caller's), lids_per_port LIDs a port.
 */
void oo_glue_reach_net(struct oo_reach_net *rn, const struct oo_glue_net *gn,
		       unsigned lids_per_port);

/*
 * The CA ports with a LID that are cabled to a switch of the net: the
 * switch, its port, the base LID and (desc, if allocated) the node
 * description, for as many entries as the subnet has ports.
 */
struct oo_ca_ports {
	uint32_t *sw;
	uint8_t *port;
	uint16_t *lid;
	const char **desc;
};

int oo_ca_ports_alloc(struct oo_ca_ports *ca, struct osm_opensm *osm,
		      int with_desc);
void oo_ca_ports_free(struct oo_ca_ports *ca);

/*
 * Fill ca (once oo_glue_net_build() has indexed the switches); SHARP
 * aggregation nodes only with with_sharp.  Returns how many.
 */
unsigned oo_glue_ca_ports(struct osm_opensm *osm, int with_sharp,
			  struct oo_ca_ports *ca);

/*
 * The SLs the reach pass gave routes on lanes above VL0, as the path SL
 * and SL2VL hooks look them up: lanes 1 while none is in use (the hooks
 * then leave OpenSM's own SLs and tables alone).
 */
struct oo_path_sls {
	struct oo_sl_map map;
	unsigned lanes;		/* VLs in use: 1 + the highest SL given */
	unsigned max_lid;	/* LIDs sw_of_lid covers */
	uint32_t *sw_of_lid;	/* per LID: the switch a packet from it
				   starts at, or OO_EVAL_NONE */
};

/*
 * The reach pass (osm_ucast_offset_reach.c): fill the new LFT entries
 * up/down routing left empty, where that closes no credit loop (see
 * oo_reach_fill()); with vls > 1, OpenSM's QoS on and as many data VLs
 * on every port, the holes left on lanes above VL0 (oo_reach_fill_vls()),
 * their SLs into *sls (emptied first).  *left_ca (if given) gets the
 * entries it left empty where traffic from a CA runs in.  Returns 0, or
 * -1 (no memory, logged) with the tables as they were and *sls empty.
 */
int oo_reach_lfts(struct osm_opensm *osm, unsigned vls,
		  struct oo_path_sls *sls, unsigned *left_ca);

/*
 * The virtual lanes the reach pass uses of the vls reach_vls asks for: as
 * many as every port has data VLs for, and only with OpenSM's QoS on
 * (else the SL2VL tables the lanes need are never set); 1 where fewer
 * than two.  Silent: oo_reach_lfts() logs why it uses fewer.
 */
unsigned oo_reach_lanes(const struct osm_opensm *osm, unsigned vls);

/*
 * What the log tells an admin where turns toward CA LIDs were left out on
 * VL0 because they would close a credit loop: lanes above VL0 take them.
 */
#define OO_LANES_REMEDY "with reach_vls=2 or more and OpenSM's QoS on, " \
	"the reach pass may take those turns on a lane above VL0"

/*
 * What it tells an admin where up/down over roots of last resort is not
 * used because some switch with end ports has no up/down path to another.
 */
#define OO_LANES_ROOTS_REMEDY "with reach_vls=2 or more and OpenSM's QoS " \
	"on, up/down stays and the reach pass routes those paths on lanes " \
	"above VL0"

/*
 * The same on VL0 alone, silently, without SLs; with retry, its retry
 * round too (oo_reach_fill()), else not (oo_reach_fill_no_retry()): what
 * the stock guard scores each candidate's tables as; with retry 2, the
 * whole pass as oo_reach_lfts() runs it on VL0 (oo_reach_fill_vls(): LIDs
 * that stay out of reach may take another LID's routes of their port).
 * Returns 0, or -1 (no memory, a switch without an LFT) with the tables
 * as they were.
 */
int oo_reach_fill_vl0(struct osm_opensm *osm, int retry);

/*
 * Whether the channel dependencies of the new LFTs in place (every LID
 * from every switch, all on VL0) have no cycle: 1 acyclic, 0 a cycle, -1
 * no memory or a switch without an LFT.
 */
int oo_reach_tables_acyclic(struct osm_opensm *osm);

/*
 * The same for the routes the CAs' traffic takes alone (from every switch
 * with a CA port toward every CA LID): 1 acyclic, 0 a cycle, -1 no memory
 * or a switch without an LFT.
 */
int oo_reach_ca_routes_acyclic(struct osm_opensm *osm);

/* The SL of the route from slid to dlid (host order): 0 off the map. */
uint8_t oo_path_sl(const struct oo_path_sls *sls, uint16_t slid,
		   uint16_t dlid);
void oo_path_sls_free(struct oo_path_sls *sls);

#endif				/* OSMOFFSET_GLUE_H */
