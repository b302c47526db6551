/*
 * osmoffset - the LFTs of updn and minhop, with port offsetting
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * OpenSM glue of the LFT stage: the destinations in routing order, the
 * tree oo_rank_tree() (osm_offset_rank.c) finds in the switch graph, and,
 * per switch, the equal-cost candidates toward every target read from the
 * hop tables; the rules of osm_offset_select.c pick among them.
 */

#if HAVE_CONFIG_H
#  include <config.h>
#endif

#include <stdlib.h>
#include <string.h>

/*
 * osm_config.h must come first: it defines ENABLE_OSM_PERF_MGR and friends,
 * which change the layout of osm_opensm_t and osm_subn_opt_t.
 */
#include <opensm/osm_config.h>
#include <complib/cl_qmap.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_port.h>
#include <opensm/osm_node.h>
#include <opensm/osm_log.h>

#include "osmoffset.h"
#include "osmoffset_glue.h"

/* A destination port: where its LIDs are and which switch reaches it. */
struct oo_dest {
	osm_port_t *port;
	const char *desc;
	osm_switch_t *leaf;	/* switch it hangs off, or itself */
	const char *leaf_name;	/* that switch's node description */
	const char *leaf_key;	/* its first host name */
	uint16_t min_lid;
	uint16_t max_lid;
	uint16_t target_lid;	/* base LID of leaf, for the hop tables */
	unsigned target_idx;	/* index of leaf in the tree */
	uint8_t leaf_port;	/* 0 for a switch's own port 0 */
	uint8_t is_switch;
	uint8_t kind;		/* routing order: hosts, then SHARP
				   aggregation nodes, then switches */
	uint8_t off_leaf;	/* a host on a switch the tree takes for
				   no leaf (a management HCA on a spine) */
	uint8_t counted;	/* adds to the switches' path counts */
};

/* arrays indexed by port number (0..IB_NODE_NUM_PORTS_MAX) */
#define OO_PORTS (IB_NODE_NUM_PORTS_MAX + 1)

/* What the coordinated rule needs to know of one switch. */
struct oo_swinfo {
	osm_switch_t *sw;
	uint16_t lid;		/* base LID */
	unsigned level;		/* hops to the nearest leaf */
	unsigned rank;		/* position among the switches of its level */
	unsigned slots;		/* its up slots */
	unsigned hosts;		/* CAs on it, SHARP nodes aside */
	/* per port: index + 1 of the switch behind it (0: none) and the
	   up slot the port fills (-1: not an up port) */
	uint16_t remote[OO_PORTS];
	int16_t slot[OO_PORTS];
	uint8_t slot_port[OO_PORTS];	/* per up slot: its port (0: none) */
	uint8_t has_lanes;	/* its slots run over its level's lanes
				   (slots_run_over_lanes()) */
};

struct oo_sw_index {
	const osm_switch_t *sw;
	unsigned idx;
};

struct oo_tree {
	struct oo_swinfo *info;
	struct oo_sw_index *index;	/* sorted by switch pointer */
	unsigned num_sw;
	unsigned num_levels;
	unsigned level_parents[OO_MAX_LEVELS];	/* most nominal parents */
	unsigned level_trunks[OO_MAX_LEVELS];	/* lanes (oo_rank_tree()) */
	unsigned level_widest[OO_MAX_LEVELS];	/* most parallel links */
	unsigned level_slots[OO_MAX_LEVELS];	/* most up slots */
	uint64_t divisor[OO_MAX_LEVELS];
};

#define OO_NO_CAND OO_SLOT_DEAD

enum oo_plan_kind {
	OO_PLAN_PLAIN = 0,	/* the plain rule picks */
	OO_PLAN_UP,		/* all candidates one level up */
	OO_PLAN_DOWN,		/* all candidates one level down */
};

/*
 * How one switch routes toward one target switch (see make_plan()).  The
 * arrays live in one block shared by all plans, plan_stride entries each.
 */
struct oo_plan {
	uint8_t kind;
	uint8_t n;		/* equal-cost candidates */
	uint8_t live;		/* up: slots with a candidate */
	uint8_t children;	/* down: switches they lead to (fewer than
				   n: parallel links) */
	int16_t child_pos;	/* down, one child over parallel links: this
				   switch's place among its nominal parents
				   (position_at_child()), else -1 */
	uint8_t classified;	/* kind is known */
	uint8_t live_block;	/* up: further LID offsets take the block of
				   live slots of their base LID
				   (offsets_take_live_block()) */
	uint8_t *port;		/* candidates, by port number */
	uint8_t *order;		/* down: candidates by child rank */
	uint8_t *by_slot;	/* up: candidate filling each slot */
	uint8_t *live_slot;	/* up: candidates of live slots, in order */
	uint8_t *cut;		/* up: slots further LID offsets keep off
				   (cut_excess_lanes()) */
};

/* Consecutive destinations (in routing order) behind one switch. */
struct oo_group {
	unsigned start;
	unsigned end;
};

struct oo_build {
	osm_opensm_t *osm;
	osm_log_t *log;
	enum oo_rule rule;
	struct oo_dest *dests;
	unsigned num_dests;
	struct oo_group *groups;
	unsigned num_groups;
	unsigned lids_per_port;
	struct oo_tree tree;
	/* per level: (rank / divisor) mod slots of every destination */
	uint16_t *slot_base[OO_MAX_LEVELS];
	/* per destination and LID offset: the up slot the LID takes at the
	   leaf level, a dead slot of its leaf's moved to a live one (see
	   fill_leaf_slots()) */
	uint16_t *leaf_slot;
	/* trees of three levels or more, per destination and LID offset: the
	   parent of its leaf (switch index + 1) the other leaves send the LID
	   up to, where its own slot there has no link (see peers_parent());
	   0 elsewhere */
	uint16_t *peer_parent;
	uint16_t *sent;		/* scratch of peers_parent(), per switch */
	/* per target switch: the plan of the switch being built */
	struct oo_plan *plans;
	uint8_t *plan_data;
	/* per destination and LID offset: the port the LID left by, on the
	   switch being built (LMC > 0; 0: not routed yet) */
	uint8_t *used_port;
	/* trunked trees only: per switch and target switch, 1 + how many
	   links the switch has on down toward the target (0: not known yet;
	   see down_capacity()) */
	uint8_t *down_cap;
	uint32_t paths[OO_PORTS];
	uint32_t offset_paths[OO_PORTS];
	unsigned detours;	/* detour cursor: slot after the last detour */
	unsigned lane_share;	/* see oo_build_offset_lfts() */
	int design_lanes;	/* lanes by design (oo_design_lanes()) */
	int offsets_apart;	/* oo_apart_offset_slot() */
	long digits_moved;	/* level-1 digits keep_digits_apart() moved */
	int keep_live;		/* a plan missing one slot in eight or
				   fewer keeps its live slots' digits */
	int turn_once;		/* OO_LFT_TURN_ONCE */
	unsigned long kept_live;	/* LIDs that kept them so */
	unsigned long extra;	/* LIDs over links beyond the lanes */
	unsigned long shared;	/* base LIDs lane_share sent off their
				   parent */
	unsigned long renumbered; /* LIDs placed over a plan's live slots
				     (oo_live_slot(), live_block_slot()) */
	struct oo_candidate cand[OO_PORTS];
	/* per port of the switch being built */
	uint8_t prof_ignored[OO_PORTS];
	uint16_t port_level[OO_PORTS];	/* of the switch behind, or none */
	uint8_t link_port[OO_PORTS];	/* healthy links to other switches */
	unsigned num_links;
};

/**********************************************************************
 * Destination list
 **********************************************************************/

static int dest_is_counted(const struct oo_build *b, const struct oo_dest *d)
{
	return !d->is_switch || b->osm->subn.opt.port_profile_switch_nodes;
}

static void fill_dest(struct oo_dest *d, osm_port_t *port)
{
	osm_physp_t *remote;

	memset(d, 0, sizeof(*d));
	d->port = port;
	d->desc = port->p_node->print_desc ? port->p_node->print_desc : "";
	osm_port_get_lid_range_ho(port, &d->min_lid, &d->max_lid);

	d->kind = oo_is_aggregation_node(d->desc) ? 1 : 0;
	if (port->p_node->sw) {
		d->is_switch = 1;
		d->kind = 2;
		d->leaf = port->p_node->sw;
	} else if (port->p_physp && port->p_physp->p_remote_physp &&
		   port->p_physp->p_remote_physp->p_node->sw) {
		remote = port->p_physp->p_remote_physp;
		d->leaf = remote->p_node->sw;
		d->leaf_port = osm_physp_get_port_num(remote);
	}
	d->leaf_name = "";
	if (d->leaf && d->leaf->p_node->print_desc)
		d->leaf_name = d->leaf->p_node->print_desc;
	if (d->leaf)
		d->target_lid =
		    cl_ntoh16(osm_node_get_base_lid(d->leaf->p_node, 0));
}

static int cmp_by_leaf(const void *a, const void *b)
{
	const struct oo_dest *x = a, *y = b;

	if (x->leaf != y->leaf)
		return (uintptr_t)x->leaf < (uintptr_t)y->leaf ? -1 : 1;
	return oo_natural_cmp(x->desc, y->desc);
}

/*
 * The routing order: end ports grouped by the switch they hang off.  The
 * hosts of the leaves in the order of their switches' names (node
 * descriptions, natural sort: IBLEAF-2 before IBLEAF-10), switches of
 * one name in the order of the first host name behind them; before them
 * the hosts of switches that are no leaves (management HCAs on spines or
 * cores), by the first host name of their switch, where "mgmt01" before
 * "node001" put them when every switch went by its first host name.  The
 * ports of one switch by port number; SHARP aggregation nodes (no compute
 * hosts) after the hosts, by the first host name of their switch, and
 * switches' own ports last.  Ranks grouped by leaf, the leaves as
 * ibswitches, a dump or a topology.conf written from it lists them by
 * name; it does not depend on GUIDs where names tell the switches apart.
 */
static int cmp_routing_order(const void *a, const void *b)
{
	const struct oo_dest *x = a, *y = b;
	int r;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->off_leaf != y->off_leaf)
		return x->off_leaf ? -1 : 1;
	if (!x->kind && !x->off_leaf && x->leaf != y->leaf) {
		r = oo_natural_cmp(x->leaf_name, y->leaf_name);
		if (r)
			return r;
	}
	r = oo_natural_cmp(x->leaf_key, y->leaf_key);
	if (r)
		return r;
	if (x->leaf != y->leaf) {
		uint64_t gx, gy;

		gx = cl_ntoh64(osm_node_get_node_guid(x->leaf->p_node));
		gy = cl_ntoh64(osm_node_get_node_guid(y->leaf->p_node));
		return gx < gy ? -1 : 1;
	}
	if (x->leaf_port != y->leaf_port)
		return x->leaf_port < y->leaf_port ? -1 : 1;
	return oo_natural_cmp(x->desc, y->desc);
}

/*
 * Give every destination the smallest host name found on its switch (the
 * smallest description of any kind where no host hangs off it).
 */
static void assign_leaf_keys(struct oo_dest *dests, unsigned n)
{
	unsigned i, j;

	qsort(dests, n, sizeof(*dests), cmp_by_leaf);
	for (i = 0; i < n; i = j) {
		const char *key = NULL;

		for (j = i; j < n && dests[j].leaf == dests[i].leaf; j++)
			if (!dests[j].kind && (!key ||
			    oo_natural_cmp(dests[j].desc, key) < 0))
				key = dests[j].desc;
		for (j = i; !key && j < n && dests[j].leaf == dests[i].leaf;
		     j++)
			if (!key || oo_natural_cmp(dests[j].desc, key) < 0)
				key = dests[j].desc;
		for (j = i; j < n && dests[j].leaf == dests[i].leaf; j++)
			dests[j].leaf_key = dests[j].is_switch ?
			    dests[j].desc : key;
	}
}

static int collect_dests(struct oo_build *b)
{
	cl_qmap_t *tbl = &b->osm->subn.port_guid_tbl;
	cl_map_item_t *item;
	unsigned n = 0;

	b->dests = calloc(cl_qmap_count(tbl) + 1, sizeof(*b->dests));
	if (!b->dests)
		return -1;

	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item)) {
		struct oo_dest *d = &b->dests[n];

		fill_dest(d, (osm_port_t *)item);
		d->counted = (uint8_t)dest_is_counted(b, d);
		if (!d->min_lid || !d->max_lid) {
			OSM_LOG(b->log, OSM_LOG_VERBOSE,
				"osmoffset: port 0x%016" PRIx64
				" has no LID yet, not routed\n",
				cl_ntoh64(osm_port_get_guid(d->port)));
			continue;
		}
		n++;
	}
	b->num_dests = n;
	assign_leaf_keys(b->dests, n);
	return 0;
}

/**********************************************************************
 * Fat-tree structure for the coordinated rule
 **********************************************************************/

static int cmp_index(const void *a, const void *b)
{
	const struct oo_sw_index *x = a, *y = b;

	if (x->sw == y->sw)
		return 0;
	return (uintptr_t)x->sw < (uintptr_t)y->sw ? -1 : 1;
}

/* Index of a switch in tree.info, or -1. */
static int switch_index(const struct oo_tree *t, const osm_switch_t *sw)
{
	struct oo_sw_index key = { sw, 0 }, *hit;

	hit = bsearch(&key, t->index, t->num_sw, sizeof(key), cmp_index);
	return hit ? (int)hit->idx : -1;
}

static int link_is_usable(const osm_physp_t *p)
{
	return p && osm_physp_is_healthy(p) && osm_physp_get_remote(p);
}

/*
 * The compact graph oo_rank_tree() reads: each switch's usable links to
 * other switches, by port (also kept in si->remote), and its hosts.
 */
struct oo_graph {
	struct oo_rank_graph g;
	unsigned *first;
	struct oo_rank_link *link;
	unsigned *hosts;
	unsigned *order;
};

static void free_graph(struct oo_graph *gr)
{
	free(gr->first);
	free(gr->link);
	free(gr->hosts);
	free(gr->order);
}

/* The switch behind every usable port of si, or a host. */
static unsigned map_neighbours(struct oo_tree *t, struct oo_swinfo *si,
			       struct oo_graph *gr, unsigned n)
{
	osm_switch_t *sw = si->sw;
	unsigned s = (unsigned)(si - t->info);
	uint8_t port;

	gr->first[s] = n;
	for (port = 1; port < sw->num_ports; port++) {
		osm_physp_t *p = osm_node_get_physp_ptr(sw->p_node, port);
		osm_node_t *rn;
		int idx;

		si->slot[port] = -1;
		if (!link_is_usable(p))
			continue;
		rn = osm_physp_get_remote(p)->p_node;
		if (!rn->sw) {
			if (!oo_is_aggregation_node(rn->print_desc))
				gr->hosts[s]++;
			continue;
		}
		if (rn->sw == sw)
			continue;
		idx = switch_index(t, rn->sw);
		if (idx < 0)
			continue;
		si->remote[port] = (uint16_t)(idx + 1);
		gr->link[n].to = (uint32_t)idx;
		gr->link[n].port = port;
		n++;
	}
	return n;
}

static const struct oo_tree *name_tree;

/* Switches by name, then GUID: breaks ties among switches wired alike. */
static int cmp_switch_name(const void *a, const void *b)
{
	const osm_node_t *x = name_tree->info[*(const unsigned *)a].sw->p_node;
	const osm_node_t *y = name_tree->info[*(const unsigned *)b].sw->p_node;
	uint64_t gx, gy;
	int r = oo_natural_cmp(x->print_desc, y->print_desc);

	if (r)
		return r;
	gx = cl_ntoh64(osm_node_get_node_guid(x));
	gy = cl_ntoh64(osm_node_get_node_guid(y));
	return gx < gy ? -1 : gx > gy;
}

static int build_graph(struct oo_tree *t, struct oo_graph *gr)
{
	unsigned i, n = 0, stride = 1, *by_name;

	for (i = 0; i < t->num_sw; i++)
		if (t->info[i].sw->num_ports > stride)
			stride = t->info[i].sw->num_ports;
	gr->first = calloc(t->num_sw + 1, sizeof(*gr->first));
	gr->link = calloc((size_t)t->num_sw * stride + 1, sizeof(*gr->link));
	gr->hosts = calloc(t->num_sw + 1, sizeof(*gr->hosts));
	gr->order = calloc(t->num_sw + 1, sizeof(*gr->order));
	by_name = calloc(t->num_sw + 1, sizeof(*by_name));
	if (!gr->first || !gr->link || !gr->hosts || !gr->order || !by_name) {
		free(by_name);
		return -1;
	}
	for (i = 0; i < t->num_sw; i++)
		n = map_neighbours(t, &t->info[i], gr, n);
	gr->first[t->num_sw] = n;
	for (i = 0; i < t->num_sw; i++)
		by_name[i] = i;
	name_tree = t;
	qsort(by_name, t->num_sw, sizeof(*by_name), cmp_switch_name);
	name_tree = NULL;
	for (i = 0; i < t->num_sw; i++)
		gr->order[by_name[i]] = i;
	free(by_name);
	gr->g.num_sw = t->num_sw;
	gr->g.stride = stride;
	gr->g.first = gr->first;
	gr->g.link = gr->link;
	gr->g.hosts = gr->hosts;
	gr->g.order = gr->order;
	return 0;
}

/*
 * Whether the up slots of a switch run over parallel lanes of its level,
 * each lane a run of slots / lanes slots in the same parent order: the
 * slots of a full switch, or of one that numbers the lanes its peers have
 * (spines cabled to a window of the cores).  The slot count alone does not
 * say so: oo_lanes_align() checks the switch behind each slot.  Worked
 * out once per switch (oo_swinfo.has_lanes).
 */
static int slots_run_over_lanes(const struct oo_tree *t,
				const struct oo_swinfo *si)
{
	uint16_t parent[OO_MAX_SLOTS];
	unsigned s;

	if (si->level >= t->num_levels || si->level >= OO_MAX_LEVELS ||
	    si->slots > OO_MAX_SLOTS || si->slots > IB_NODE_NUM_PORTS_MAX)
		return 0;	/* slot_port[] holds OO_PORTS entries */
	if (si->slots != t->level_slots[si->level])
		return 0;
	for (s = 0; s < si->slots; s++)
		parent[s] = si->slot_port[s] ? si->remote[si->slot_port[s]] : 0;
	return oo_lanes_align(parent, si->slots, t->level_trunks[si->level]);
}

/* Levels, ranks and up slots of every switch (see oo_rank_tree()). */
static int rank_switches(struct oo_build *b, struct oo_tree *t)
{
	struct oo_graph gr;
	struct oo_rank_tree rt;
	unsigned i, port;
	int ret = -1;

	memset(&gr, 0, sizeof(gr));
	if (build_graph(t, &gr))
		goto out;
	gr.g.design_lanes = b->design_lanes;
	if (oo_rank_tree(&gr.g, &rt))
		goto out;
	for (i = 0; i < t->num_sw; i++) {
		struct oo_swinfo *si = &t->info[i];

		si->level = rt.level[i];
		si->rank = rt.rank[i];
		si->slots = rt.slots[i];
		si->hosts = gr.hosts[i];
		for (port = 1; port < si->sw->num_ports; port++) {
			si->slot[port] =
			    rt.slot[(size_t)i * gr.g.stride + port];
			if (si->slot[port] >= 0 && si->slot[port] < OO_PORTS &&
			    !si->slot_port[si->slot[port]])
				si->slot_port[si->slot[port]] = (uint8_t)port;
		}
	}
	t->num_levels = rt.num_levels;
	memcpy(t->level_parents, rt.level_parents, sizeof(t->level_parents));
	memcpy(t->level_trunks, rt.level_trunks, sizeof(t->level_trunks));
	memcpy(t->level_widest, rt.level_widest, sizeof(t->level_widest));
	memcpy(t->level_slots, rt.level_slots, sizeof(t->level_slots));
	memcpy(t->divisor, rt.divisor, sizeof(t->divisor));
	for (i = 0; i < t->num_sw; i++)
		t->info[i].has_lanes =
		    (uint8_t)slots_run_over_lanes(t, &t->info[i]);
	for (i = 0; i < t->num_sw; i++)
		if (gr.hosts[i] && t->info[i].level)
			OSM_LOG(b->log, OSM_LOG_VERBOSE, "osmoffset: switch "
				"'%s' holds %u hosts but is ranked as a level "
				"%u switch (more cables to host switches than "
				"hosts)\n", t->info[i].sw->p_node->print_desc,
				gr.hosts[i], t->info[i].level);
	oo_rank_tree_free(&rt);
	ret = 0;
out:
	free_graph(&gr);
	return ret;
}

static void free_tree(struct oo_tree *t)
{
	free(t->info);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

static int build_tree(struct oo_build *b)
{
	cl_qmap_t *tbl = &b->osm->subn.sw_guid_tbl;
	struct oo_tree *t = &b->tree;
	cl_map_item_t *item;
	unsigned i = 0;

	t->num_sw = cl_qmap_count(tbl);
	t->info = calloc(t->num_sw + 1, sizeof(*t->info));
	t->index = calloc(t->num_sw + 1, sizeof(*t->index));
	if (!t->info || !t->index)
		return -1;
	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item), i++) {
		t->info[i].sw = (osm_switch_t *)item;
		t->info[i].lid = cl_ntoh16(osm_node_get_base_lid(
						t->info[i].sw->p_node, 0));
		t->index[i].sw = (osm_switch_t *)item;
		t->index[i].idx = i;
	}
	qsort(t->index, t->num_sw, sizeof(*t->index), cmp_index);

	if (rank_switches(b, t))
		return -1;
	OSM_LOG(b->log, OSM_LOG_VERBOSE, "osmoffset: %u switches in %u "
		"levels; up slots per level: %u %u %u %u; lanes: %u %u %u "
		"(widest trunks %u %u %u)\n", t->num_sw, t->num_levels,
		t->level_slots[0], t->level_slots[1], t->level_slots[2],
		t->level_slots[3], t->level_trunks[0], t->level_trunks[1],
		t->level_trunks[2], t->level_widest[0], t->level_widest[1],
		t->level_widest[2]);
	return 0;
}

/* Whether some level's lanes are fewer than its widest trunk's links. */
static int lanes_below_widest(const struct oo_tree *t)
{
	unsigned l;

	for (l = 0; l < t->num_levels && l < OO_MAX_LEVELS; l++)
		if (t->level_trunks[l] < t->level_widest[l])
			return 1;
	return 0;
}

/**********************************************************************
 * One switch
 **********************************************************************/

/*
 * The equal-cost, healthy, linked egress ports of a switch toward one
 * target switch LID, and what the coordinated rule makes of them.  A plan
 * is made the first time a switch routes toward a target and then serves
 * every LID of every destination behind that target.
 */
static void plan_candidates(const struct oo_build *b,
			    const struct oo_swinfo *si, uint16_t target_lid,
			    struct oo_plan *pl)
{
	const osm_switch_t *sw = si->sw;
	const uint8_t *row;
	unsigned i, n = 0;

	if (target_lid > sw->max_lid_ho || !(row = sw->hops[target_lid]) ||
	    row[0] == OSM_NO_PATH)
		return;
	for (i = 0; i < b->num_links; i++)
		if (row[b->link_port[i]] == row[0])
			pl->port[n++] = b->link_port[i];
	pl->n = (uint8_t)n;
}

/*
 * How many links switch p has on toward target switch tgt when all its
 * equal-cost candidates lead one level down, else 0 (no limit known).
 * Remembered: every switch below p asks it again.
 */
static unsigned down_capacity(const struct oo_build *b, unsigned p,
			      unsigned tgt)
{
	const struct oo_tree *t = &b->tree;
	const struct oo_swinfo *pi = &t->info[p];
	uint8_t *memo = &b->down_cap[(size_t)p * t->num_sw + tgt];
	uint16_t lid = t->info[tgt].lid;
	const uint8_t *row;
	unsigned port, n = 0;

	if (*memo)
		return *memo - 1U;
	if (pi->level && pi->level != OO_NO_LEVEL &&
	    lid <= pi->sw->max_lid_ho && (row = pi->sw->hops[lid]) &&
	    row[0] != OSM_NO_PATH)
		for (port = 1; port < pi->sw->num_ports; port++) {
			unsigned r = pi->remote[port];

			if (!r || row[port] != row[0])
				continue;
			if (t->info[r - 1].level + 1 != pi->level) {
				n = 0;
				break;
			}
			n++;
		}
	if (n > 254)
		n = 254;
	*memo = (uint8_t)(n + 1);
	return n;
}

/*
 * A trunk up to a parent with fewer links on down toward the target (a
 * leaf-spine cable of a doubled pair missing below): the lanes beyond
 * them take no LID of the target's (see oo_cut_excess_lanes()).
 */
static void cut_excess_lanes(const struct oo_build *b,
			     const struct oo_swinfo *si, struct oo_plan *pl,
			     unsigned tgt)
{
	uint16_t remote[OO_PORTS] = { 0 };
	uint8_t cap[OO_PORTS] = { 0 };
	unsigned slots = si->slots, s;

	for (s = 0; s < slots; s++) {
		remote[s] = pl->by_slot[s] == OO_NO_CAND ? 0 :
		    si->remote[pl->port[pl->by_slot[s]]];
		if (remote[s])
			cap[s] = (uint8_t)down_capacity(b, remote[s] - 1U, tgt);
	}
	oo_cut_excess_lanes(remote, cap, slots, pl->cut);
}

/*
 * Whether the further LID offsets of a leaf's plan take the block of live
 * slots their base LID took: a level with parallel lanes whose plan
 * misses whole parents, half the slots or more (a leaf toward a leaf
 * cabled to some of the spines only), see oo_offsets_take_live_block().
 * Their digits would send them to the dead parents, and the detours of
 * so many would pile up where the base LIDs of the neighbouring ranks go.
 */
static int offsets_take_live_block(const struct oo_build *b,
				   const struct oo_swinfo *si,
				   const struct oo_plan *pl)
{
	const struct oo_tree *t = &b->tree;

	if (si->level || b->lids_per_port < 2 ||
	    t->level_parents[0] == si->slots || si->slots != t->level_slots[0])
		return 0;
	return oo_offsets_take_live_block(pl->by_slot, pl->cut, si->slots,
					  t->level_parents[0],
					  b->lids_per_port);
}

/*
 * Up: which candidate fills each up slot of the level, and the live
 * slots in slot order (where detours go).
 */
static void plan_up(const struct oo_build *b, const struct oo_swinfo *si,
		    struct oo_plan *pl, unsigned tgt)
{
	unsigned slots = si->slots, i;

	if (!slots || slots > IB_NODE_NUM_PORTS_MAX)
		return;
	memset(pl->by_slot, OO_NO_CAND, slots);
	memset(pl->cut, 0, slots);
	for (i = 0; i < pl->n; i++) {
		int s = si->slot[pl->port[i]];

		if (s >= 0 && (unsigned)s < slots)
			pl->by_slot[s] = (uint8_t)i;
	}
	if (b->down_cap)
		cut_excess_lanes(b, si, pl, tgt);
	pl->live = 0;
	for (i = 0; i < slots; i++)
		if (pl->by_slot[i] != OO_NO_CAND)
			pl->live_slot[pl->live++] = pl->by_slot[i];
	pl->live_block = (uint8_t)offsets_take_live_block(b, si, pl);
	pl->kind = OO_PLAN_UP;
}

static int down_before(const struct oo_build *b, const struct oo_swinfo *si,
		       uint8_t px, uint8_t py)
{
	unsigned rx = b->tree.info[si->remote[px] - 1].rank;
	unsigned ry = b->tree.info[si->remote[py] - 1].rank;

	if (rx != ry)
		return rx < ry;
	return px < py;
}

/* The port number at the far end of the cable on port (0: none). */
static uint8_t remote_port(const struct oo_swinfo *si, uint8_t port)
{
	osm_physp_t *p = osm_node_get_physp_ptr(si->sw->p_node, port);
	osm_physp_t *r = p ? osm_physp_get_remote(p) : NULL;

	return r ? osm_physp_get_port_num(r) : 0;
}

/*
 * Where this switch sits among the nominal parents of the child behind
 * the plan's links (the position its up slots there carry), or -1 when
 * the child numbers its slots its own way (a tapered edge).
 */
static int position_at_child(const struct oo_build *b,
			     const struct oo_swinfo *si,
			     const struct oo_plan *pl)
{
	const struct oo_tree *t = &b->tree;
	uint8_t port = pl->port[pl->order[0]];
	unsigned below = si->level - 1;
	const struct oo_swinfo *child;
	uint8_t there;
	int16_t slot;

	if (!si->remote[port])
		return -1;
	child = &t->info[si->remote[port] - 1];
	there = remote_port(si, port);
	if (!there || child->slots != t->level_slots[below])
		return -1;
	slot = child->slot[there];
	return slot < 0 ? -1 : slot % (int)t->level_parents[below];
}

/* Down: the candidates by rank of the switch below, then port number. */
static void plan_down(const struct oo_build *b, const struct oo_swinfo *si,
		      struct oo_plan *pl)
{
	unsigned i, j;

	for (i = 0; i < pl->n; i++) {
		for (j = i; j > 0 && down_before(b, si, pl->port[i],
						 pl->port[pl->order[j - 1]]);
		     j--)
			pl->order[j] = pl->order[j - 1];
		pl->order[j] = (uint8_t)i;
	}
	/* the order groups the links of one child together */
	pl->children = pl->n ? 1 : 0;
	for (i = 1; i < pl->n; i++)
		if (si->remote[pl->port[pl->order[i]]] !=
		    si->remote[pl->port[pl->order[i - 1]]])
			pl->children++;
	pl->child_pos = (int16_t)(pl->children == 1 && pl->n > 1 ?
				  position_at_child(b, si, pl) : -1);
	pl->kind = OO_PLAN_DOWN;
}

/*
 * Where the fabric around this switch is a tree toward the target (all
 * candidates one level up, or all one level down), the coordinated rule
 * decides; otherwise (candidates up and down, sideways, or toward
 * switches outside the tree) the plain rule does.
 */
static void make_plan(const struct oo_build *b, const struct oo_swinfo *si,
		      uint16_t target_lid, struct oo_plan *pl)
{
	pl->kind = OO_PLAN_PLAIN;
	pl->classified = 0;
	pl->n = 0;
	plan_candidates(b, si, target_lid, pl);
}

static void classify_plan(const struct oo_build *b,
			  const struct oo_swinfo *si, struct oo_plan *pl)
{
	unsigned i, up = 0, down = 0;

	pl->classified = 1;
	if (b->rule != OO_RULE_COORDINATED || si->level == OO_NO_LEVEL ||
	    !pl->n)
		return;
	for (i = 0; i < pl->n; i++) {
		unsigned level = b->port_level[pl->port[i]];

		if (level == OO_NO_LEVEL)
			return;
		if (level == si->level + 1)
			up++;
		else if (level + 1 == si->level)
			down++;
	}
	if (up == pl->n)
		plan_up(b, si, pl, (unsigned)(pl - b->plans));
	else if (down == pl->n)
		plan_down(b, si, pl);
}

/*
 * The plan toward a destination's target switch (plan_all_targets() found
 * its candidates); what the coordinated rule makes of them is worked out
 * only when a CA behind the target asks (a switch's own LID never does).
 */
static const struct oo_plan *plan_for(struct oo_build *b,
				      const struct oo_swinfo *si,
				      const struct oo_dest *d)
{
	struct oo_plan *pl = &b->plans[d->target_idx];

	if (!d->is_switch && !pl->classified)
		classify_plan(b, si, pl);
	return pl;
}

/*
 * A further LID offset's slot from its base LID's (oo_ring_offset_slot()):
 * the level's slots run lane by lane over its parents where a switch has
 * them all (a tapered edge that numbers its own links follows no such
 * order, but with one lane each of its slots is a parent of its own);
 * with offsets_apart, oo_apart_offset_slot() around all the slots.
 */
static unsigned offset_slot(const struct oo_build *b, unsigned level,
			    unsigned base, unsigned lid_offset, unsigned slots)
{
	const struct oo_tree *t = &b->tree;
	unsigned lanes = t->level_trunks[level], parents = 0;

	if (b->offsets_apart && lid_offset)
		return oo_apart_offset_slot(base, lid_offset,
					    b->lids_per_port, slots);
	if (lanes <= 1)
		parents = slots;
	else if (slots == t->level_parents[level] * lanes)
		parents = t->level_parents[level];
	return oo_ring_offset_slot(base, lid_offset, b->lids_per_port, slots,
				   parents);
}

/* The up slot a LID of the destination of this rank takes by its digits. */
static unsigned digit_slot(const struct oo_build *b, unsigned level,
			   unsigned rank, unsigned lid_offset)
{
	return offset_slot(b, level, b->slot_base[level][rank], lid_offset,
			   b->tree.level_slots[level]);
}

/* The up slot a LID of the destination of this rank takes at a level. */
static unsigned level_slot(const struct oo_build *b, unsigned level,
			   unsigned rank, unsigned lid_offset)
{
	if (!level && b->leaf_slot)
		return b->leaf_slot[(size_t)rank * b->lids_per_port +
				    lid_offset];
	return digit_slot(b, level, rank, lid_offset);
}

/* The same at one switch, which may have fewer slots (a tapered edge). */
static unsigned dest_slot(const struct oo_build *b, const struct oo_swinfo *si,
			  unsigned rank, unsigned lid_offset)
{
	unsigned base;

	if (si->slots == b->tree.level_slots[si->level])
		return level_slot(b, si->level, rank, lid_offset);
	base = oo_coordinated_slot(rank, b->tree.divisor[si->level], 0,
				   si->slots);
	return offset_slot(b, si->level, base, lid_offset, si->slots);
}

/* Mark, in avoid, every slot that leads to the switch behind remote. */
static void mark_remote(const struct oo_swinfo *si, const struct oo_plan *pl,
			unsigned slots, uint16_t remote, uint8_t mark,
			uint8_t *avoid)
{
	unsigned s;

	if (!remote)
		return;
	for (s = 0; s < slots; s++)
		if (pl->by_slot[s] != OO_NO_CAND &&
		    si->remote[pl->port[pl->by_slot[s]]] == remote &&
		    avoid[s] < mark)
			avoid[s] = mark;
}

/*
 * The switch (index + 1) LID offset o of destination dest_idx left
 * toward from the switch being built; 0 if not routed yet.
 */
static uint16_t used_remote(const struct oo_build *b,
			    const struct oo_swinfo *si, unsigned dest_idx,
			    unsigned o)
{
	return si->remote[b->used_port[(size_t)dest_idx * b->lids_per_port +
				       o]];
}

/*
 * What a leaf's detour weighs first: per up slot, the LIDs (of any
 * offset) routed so far through its port whose destination ranks lie
 * within one leaf's worth of hosts of rank.  A shift round sends the
 * hosts of a leaf to that many consecutive ranks, so these are the LIDs
 * a detour there may share the uplink with in some round.
 */
static void window_load(const struct oo_build *b, const struct oo_swinfo *si,
			const struct oo_plan *pl, unsigned rank,
			uint32_t *near)
{
	unsigned lids = b->lids_per_port, w = si->hosts ? si->hosts : si->slots;
	unsigned lo = rank >= w ? rank - w + 1 : 0;
	unsigned hi = rank + w < b->num_dests ? rank + w : b->num_dests;
	uint32_t by_port[OO_PORTS] = { 0 };
	const uint8_t *up = b->used_port + (size_t)lo * lids;
	size_t i, n = (size_t)(hi - lo) * lids;
	unsigned s;

	for (i = 0; i < n; i++)
		by_port[up[i]]++;
	for (s = 0; s < si->slots; s++)
		near[s] = pl->by_slot[s] == OO_NO_CAND ? 0 :
		    by_port[pl->port[pl->by_slot[s]]];
}

/*
 * A further LID offset that cannot take its slot: keep off the switches
 * the destination's other LIDs take; at a leaf, then off the uplinks the
 * LIDs of nearby ranks take (window_load()); then the least loaded port
 * (see oo_window_detour_slot()).
 */
static int pick_offset_detour(struct oo_build *b, const struct oo_swinfo *si,
			      const struct oo_plan *pl, unsigned rank,
			      unsigned lid_offset, unsigned slot)
{
	unsigned slots = si->slots, s, o;
	uint8_t live[OO_PORTS], avoid[OO_PORTS];
	uint32_t load[OO_PORTS], near[OO_PORTS];
	int pick;

	for (s = 0; s < slots; s++) {
		live[s] = pl->by_slot[s] != OO_NO_CAND && !pl->cut[s];
		avoid[s] = 0;
		load[s] = live[s] ? b->paths[pl->port[pl->by_slot[s]]] : 0;
	}
	for (o = 0; o < b->lids_per_port; o++) {
		unsigned other = dest_slot(b, si, rank, o);

		if (o != lid_offset && pl->by_slot[other] != OO_NO_CAND &&
		    (!o || !pl->cut[other]))
			mark_remote(si, pl, slots,
				    si->remote[pl->port[pl->by_slot[other]]],
				    1, avoid);
		if (o < lid_offset)
			mark_remote(si, pl, slots, used_remote(b, si, rank, o),
				    2, avoid);
	}
	if (!si->level)
		window_load(b, si, pl, rank, near);
	pick = oo_window_detour_slot(live, avoid, si->level ? NULL : near,
				     load, slots, slot);
	return pick < 0 ? -1 : pl->by_slot[pick];
}

/* How many of the first n LIDs of destination rank left toward remote. */
static unsigned count_reuse(const struct oo_build *b,
			    const struct oo_swinfo *si, unsigned rank,
			    unsigned n, uint16_t remote)
{
	unsigned o, reuse = 0;

	for (o = 0; o < n; o++)
		if (used_remote(b, si, rank, o) == remote)
			reuse++;
	return reuse;
}

/*
 * Whether candidate c leads to a switch an earlier LID of the destination
 * already took (a base LID detoured there) while some live slot leads to
 * a switch none of them took.
 */
static int offset_collides(const struct oo_build *b,
			   const struct oo_swinfo *si, const struct oo_plan *pl,
			   unsigned rank, unsigned lid_offset, uint8_t c)
{
	unsigned i;

	if (!count_reuse(b, si, rank, lid_offset, si->remote[pl->port[c]]))
		return 0;
	for (i = 0; i < pl->live; i++)
		if (!count_reuse(b, si, rank, lid_offset,
				 si->remote[pl->port[pl->live_slot[i]]]))
			return 1;
	return 0;
}

/*
 * Per slot of the plan, the LIDs of the offset being routed that its
 * port carries so far (0 for a dead slot); returns the least of the live
 * slots', UINT32_MAX where none is live.
 */
static uint32_t slot_loads(const struct oo_build *b,
			   const struct oo_swinfo *si,
			   const struct oo_plan *pl, uint32_t *load)
{
	uint32_t least = UINT32_MAX;
	unsigned s;

	for (s = 0; s < si->slots && s < OO_PORTS; s++) {
		if (pl->by_slot[s] == OO_NO_CAND) {
			load[s] = 0;
			continue;
		}
		load[s] = b->offset_paths[pl->port[pl->by_slot[s]]];
		if (load[s] < least)
			least = load[s];
	}
	return least;
}

/* A base LID's detour (oo_far_slot()), weighing the base LIDs per port. */
static int far_detour(struct oo_build *b, const struct oo_swinfo *si,
		      const struct oo_plan *pl, unsigned slot)
{
	uint32_t load[OO_PORTS];

	slot_loads(b, si, pl, load);
	return oo_far_slot(pl->by_slot, load, si->slots, slot, &b->detours);
}

/*
 * Whether a LID takes its slot among the plan's live ones (oo_live_slot())
 * rather than its own slot or a detour: where some slots of the plan are
 * dead at a level with one link per parent, the base LID at any level and
 * a further LID offset at a leaf.  Where a level has parallel lanes, a
 * dead slot is mostly one cable of a pair and the detour rules, which keep
 * the other LIDs where they are, measured better (the NDR dump, the
 * SuperPOD analog); only further offsets there may follow their base LID
 * over the live slots (offsets_take_live_block()).  A switch whose slots
 * run over lanes (has_lanes) is such a level even where its slot count
 * happens to equal the level's parents (the SuperPOD analog's pod spines:
 * 8 cores twice, among 16 nominal parents across the level); renumbering
 * there sent a LID to a different core from each pod.  Further offsets
 * above the leaves keep the digits of their slots: renumbering them
 * there cost spread traffic (kary-4-3-degraded at LMC 2).  With
 * keep_live, a plan that misses one slot in eight or fewer (a leaf short
 * of one cable of its 20, or toward such a leaf) keeps the digits of its
 * live slots, and only the LIDs of its dead slots detour: renumbering
 * moves nearly every LID of the plan, and toward a leaf that lost a cable
 * the leaves of its pod then send most of its CAs down other links than
 * the cores do (counted in kept_live).
 */
static int takes_live_slot(struct oo_build *b,
			   const struct oo_swinfo *si, const struct oo_plan *pl,
			   unsigned lid_offset)
{
	if (!pl->live || pl->live >= si->slots)
		return 0;
	if (b->tree.level_parents[si->level] != si->slots || si->has_lanes)
		return 0;
	if (lid_offset && si->level)
		return 0;
	if (b->keep_live && pl->live * 8 >= (unsigned)si->slots * 7) {
		b->kept_live++;
		return 0;
	}
	return 1;
}

/*
 * A further LID offset of a plan whose offsets take the block of live
 * slots of their base LID (offsets_take_live_block()): its slot in that
 * block, oo_offset_slot() over the live slots; -1 where the base LID
 * left by no live slot's port.
 */
static int live_block_slot(const struct oo_build *b, const struct oo_plan *pl,
			   unsigned rank, unsigned lid_offset)
{
	uint8_t port = b->used_port[(size_t)rank * b->lids_per_port];
	unsigned j;

	for (j = 0; j < pl->live; j++)
		if (pl->port[pl->live_slot[j]] == port)
			return pl->live_slot[oo_offset_slot(j, lid_offset,
							    b->lids_per_port,
							    pl->live)];
	return -1;
}

/*
 * A base LID whose slot is dead but for the lane (one cable of a pair
 * missing): the same parent over another lane, so that it reaches the
 * switch its slot leads to at every peer and comes down the way the
 * others do (oo_sibling_lane()), the live lane with the fewest base LIDs
 * so far (an edge with 2 of 4 nominal cables to a spine: before, both
 * dead lanes' LIDs took the first live one, three times the other's); -1
 * if there is none, or if this switch's slots do not run over the
 * level's lanes (has_lanes).
 * At a leaf this puts two digits on one cable, and the random orders of
 * base traffic lose a little to the far detour's spread (the SuperPOD
 * analog 0.181 -> 0.173 in docs/fabrics.md), but the leaf order and the
 * jobs gain more (its quarter job 0.346 -> 0.375, half job 0.314 ->
 * 0.359; sharp-ft2's half job 0.374 -> 0.401).
 */
static int sibling_lane(struct oo_build *b, const struct oo_swinfo *si,
			const struct oo_plan *pl, unsigned slot)
{
	uint32_t load[OO_PORTS], least;
	int s;

	if (!si->has_lanes)
		return -1;
	least = slot_loads(b, si, pl, load);
	s = oo_sibling_lane(pl->by_slot, pl->cut, load, si->slots,
			    b->tree.level_trunks[si->level], slot);
	if (s < 0)
		return -1;
	if (b->lane_share &&
	    load[s] + 1 > (uint64_t)b->lane_share * (least + 1)) {
		b->shared++;
		return -1;
	}
	return pl->by_slot[s];
}

/*
 * The link a LID takes up where its pick leads over a trunk wider than
 * the level's lanes (lanes by design, oo_design_lanes()): the links to
 * that parent in port order, each turn of the ranks around the level's
 * slots moving on by the lanes (oo_extra_lane()); pick itself elsewhere.
 */
static int spread_over_trunk(struct oo_build *b, const struct oo_swinfo *si,
			     const struct oo_plan *pl, unsigned rank, int pick)
{
	const struct oo_tree *t = &b->tree;
	unsigned lanes = t->level_trunks[si->level], width = 0, lane = 0;
	unsigned slots = t->level_slots[si->level], i, k;
	uint64_t div = t->divisor[si->level] ? t->divisor[si->level] : 1;
	uint8_t link[OO_PORTS];
	uint16_t to;

	if (pick < 0 || !lanes || !slots ||
	    t->level_widest[si->level] <= lanes)
		return pick;
	to = si->remote[pl->port[pick]];
	for (i = 0; i < pl->n; i++)
		if (si->remote[pl->port[i]] == to) {
			if (pl->port[i] < pl->port[pick])
				lane++;
			link[width++] = (uint8_t)i;
		}
	k = oo_extra_lane(lane, lanes, width, rank / div / slots);
	if (k == lane)
		return pick;
	b->extra++;
	return link[k];
}

/*
 * The up slot, or the live slot a degraded plan renumbers it to
 * (takes_live_slot()), or the one in its base LID's block of live slots
 * (live_block_slot()), or the live slot a detour takes; -1 if none is
 * live.  Base LIDs take the same parent over another lane
 * (sibling_lane()), else detour to a live slot far from their own
 * (oo_far_slot()).  A further LID offset detours when its slot is dead or
 * leads to a switch an earlier LID of the destination already took and
 * another switch is still free.
 */
static int pick_up_slot(struct oo_build *b, const struct oo_swinfo *si,
			const struct oo_plan *pl, unsigned rank,
			unsigned lid_offset)
{
	unsigned slot;
	int pick;

	if (takes_live_slot(b, si, pl, lid_offset)) {
		unsigned i = oo_live_slot(rank, b->tree.divisor[si->level],
					  lid_offset, b->lids_per_port,
					  pl->live);

		b->renumbered++;
		return pl->live_slot[i];
	}
	if (lid_offset && pl->live_block &&
	    (pick = live_block_slot(b, pl, rank, lid_offset)) >= 0) {
		b->renumbered++;
		return pick;
	}
	slot = dest_slot(b, si, rank, lid_offset);
	if (!lid_offset) {
		if (pl->by_slot[slot] != OO_NO_CAND)
			return pl->by_slot[slot];
		if ((pick = sibling_lane(b, si, pl, slot)) >= 0)
			return pick;
		pick = far_detour(b, si, pl, slot);
		return pick < 0 ? -1 : pl->by_slot[pick];
	}
	if (pl->by_slot[slot] != OO_NO_CAND && !pl->cut[slot] &&
	    !offset_collides(b, si, pl, rank, lid_offset,
			     pl->by_slot[slot]))
		return pl->by_slot[slot];
	if (!pl->live)
		return -1;
	return pick_offset_detour(b, si, pl, rank, lid_offset, slot);
}

/* The child each down candidate leads to, candidates in child rank order. */
static void order_children(const struct oo_swinfo *si,
			   const struct oo_plan *pl, uint16_t *child)
{
	unsigned i;

	for (i = 0; i < pl->n; i++)
		child[i] = si->remote[pl->port[pl->order[i]]];
}

/*
 * Down over parallel links to as many children as the switches two
 * levels below have parents (a core cabled twice to each spine of a
 * pod): the slot the destination takes two levels below picks the child,
 * as it picked the child's place among the parents there, and the lane
 * of its slot one level below picks the link; the LIDs a core receives in
 * one shift round differ in one or the other.  (Not for a core cabled to
 * some of a pod's spines only: the slots below would crowd its few
 * children; pick_mirror_link() decides there.)
 */
static int pick_child_lane(const struct oo_build *b,
			   const struct oo_swinfo *si, const struct oo_plan *pl,
			   unsigned rank, unsigned lid_offset)
{
	const struct oo_tree *t = &b->tree;
	unsigned below = si->level - 1;
	uint16_t child[OO_PORTS];
	int k;

	order_children(si, pl, child);
	k = oo_child_lane(child, pl->n,
			  level_slot(b, below - 1, rank, lid_offset),
			  level_slot(b, below, rank, lid_offset) /
			  t->level_parents[below]);
	return pl->order[k < 0 ? 0 : k];
}

/*
 * The switch (index + 1) a LID of the destination of this rank reaches
 * at a level going up from its own leaf by the slots it takes on the way;
 * 0 where one of them has no link.
 */
static uint16_t own_up_path(const struct oo_build *b, unsigned rank,
			    unsigned lid_offset, unsigned level)
{
	const struct oo_tree *t = &b->tree;
	unsigned x = b->dests[rank].target_idx, l;

	for (l = 0; l < level; l++) {
		const struct oo_swinfo *xi = &t->info[x];
		uint8_t port = xi->slot_port[dest_slot(b, xi, rank,
						       lid_offset)];

		if (!port || !xi->remote[port])
			return 0;
		x = xi->remote[port] - 1U;
	}
	return (uint16_t)(x + 1);
}

/*
 * The candidate over the very cable the destination's own up path takes
 * from the child below, own (switch index + 1, from own_up_path()), into
 * this switch, so that a LID comes down the lane its own slot went up:
 * the cores' down lanes then mirror the pod spines' up slots, whatever
 * the lane digit; -1 where that path has no link here.
 */
static int own_cable_down(const struct oo_build *b,
			  const struct oo_swinfo *si,
			  const struct oo_plan *pl, unsigned rank,
			  unsigned lid_offset, uint16_t own)
{
	const struct oo_tree *t = &b->tree;
	const struct oo_swinfo *xi;
	uint8_t port, mine;
	unsigned i;

	if (!own)
		return -1;
	xi = &t->info[own - 1];
	port = xi->slot_port[dest_slot(b, xi, rank, lid_offset)];
	if (!port || xi->remote[port] != (uint16_t)(si - t->info + 1) ||
	    !(mine = remote_port(xi, port)))
		return -1;
	for (i = 0; i < pl->n; i++)
		if (pl->port[i] == mine)
			return (int)i;
	return -1;
}

/*
 * Down to several children, one of which the destination's own up path
 * passes through (a core cabled to some of the spines of each pod): that
 * one, so that the flows toward a leaf from other pods reach its spines as
 * those from its own pod do, spread over its down links by its up slots;
 * over parallel links, the cable its own up path takes
 * (own_cable_down()), else the digit of the level below picks the lane.
 * Where the destination's own slot at its leaf has no link, the other
 * leaves' detour stands for its own up path (peers_parent()), so that the
 * flows from other pods come down the way its pod's own flows do.
 * -1 if no candidate leads there.
 */
static int pick_mirror_link(const struct oo_build *b,
			    const struct oo_swinfo *si,
			    const struct oo_plan *pl, unsigned rank,
			    unsigned lid_offset)
{
	uint64_t divisor = b->tree.divisor[si->level - 1];
	uint16_t child[OO_PORTS];
	uint16_t own = own_up_path(b, rank, lid_offset, si->level - 1);
	int k;

	if (!own && si->level == 2 && b->peer_parent)
		own = b->peer_parent[(size_t)rank * b->lids_per_port +
				     lid_offset];

	k = own_cable_down(b, si, pl, rank, lid_offset, own);
	if (k >= 0)
		return k;
	order_children(si, pl, child);
	k = oo_mirror_link(child, pl->n, own,
			   (unsigned)(rank / (divisor ? divisor : 1)) +
			   lid_offset);
	return k < 0 ? -1 : pl->order[k];
}

/*
 * Parallel links down to one child: take the lane of the up slot the
 * destination takes at the child's level, so that flows that came up over
 * distinct links of a trunk go down over distinct links too; where the
 * child has more parallel links than the level has lanes (a leaf with
 * more cables to fewer spines than its peers), each turn of the slots
 * around the level moves on by the level's lanes, so that every link
 * gets its share.  Down to several children: the one on the destination's
 * own up path where a candidate leads there (pick_mirror_link()), else (a
 * director's line ASIC wired to every pod spine) the digit that picks
 * among such children going up from the level below them, so that
 * destinations of one leaf that differ there come down through different
 * children, as they would go up.
 */
static int pick_down_link(const struct oo_build *b,
			  const struct oo_swinfo *si, const struct oo_plan *pl,
			  unsigned rank, unsigned lid_offset)
{
	const struct oo_tree *t = &b->tree;
	unsigned below = si->level - 1, k;

	if (pl->children == 1 && t->level_parents[below]) {
		unsigned P = t->level_parents[below];
		unsigned slots = t->level_slots[below];
		unsigned slot = level_slot(b, below, rank, lid_offset);
		unsigned lanes = slots ? (slots + P - 1) / P : 1;
		uint64_t turn = slots ? rank / t->divisor[below] / slots : 0;
		int pos = pl->child_pos;

		k = (unsigned)((turn * lanes + slot / P) % pl->n);
		/* a LID whose nominal slot leads to another parent comes here
		   only on a detour: keep it off the lane of the LID that
		   comes here by its own slot */
		if (pos >= 0 && slot % P != (unsigned)pos)
			k = (k + 1 + ((slot % P + P - (unsigned)pos) % P - 1) %
			     (pl->n - 1)) % pl->n;
	} else if (below && pl->children < pl->n && t->level_parents[below] &&
		   pl->children == t->level_parents[below - 1]) {
		return pick_child_lane(b, si, pl, rank, lid_offset);
	} else {
		int pick = below && pl->children > 1 ?
		    pick_mirror_link(b, si, pl, rank, lid_offset) : -1;

		if (pick >= 0)
			return pick;
		k = oo_coordinated_slot(rank, t->divisor[below ? below - 1 : 0],
					lid_offset, pl->n);
	}
	return pl->order[k];
}

/* The plain rule: rotate the start with the paths routed so far. */
static int plain_pick(struct oo_build *b, const struct oo_swinfo *si,
		      const struct oo_plan *pl, unsigned dest_idx,
		      unsigned lid_offset)
{
	unsigned i;

	for (i = 0; i < pl->n; i++) {
		uint8_t port = pl->port[i];

		b->cand[i].port = port;
		b->cand[i].paths = b->paths[port];
		b->cand[i].offset_paths = b->offset_paths[port];
		b->cand[i].reuse = lid_offset ?
		    count_reuse(b, si, dest_idx, lid_offset,
				si->remote[port]) : 0;
	}
	return oo_select_candidate(b->cand, pl->n,
				   oo_rotation_start(b->cand, pl->n));
}

/* Count the path of one LID leaving through port. */
static void count_path(struct oo_build *b, const struct oo_dest *d,
		       unsigned dest_idx, unsigned lid_offset, uint8_t port)
{
	if (b->lids_per_port > 1)
		b->used_port[(size_t)dest_idx * b->lids_per_port +
			     lid_offset] = port;
	if (d->counted && !b->prof_ignored[port]) {
		b->paths[port]++;
		b->offset_paths[port]++;
	}
}

/*
 * Whether some candidate toward destination d (and the others behind its
 * target switch) leads down to a switch that is no lower than d's target
 * switch and not that switch: a route that
 * turns back up further on (minhop's, from a spine to a leaf it has no
 * cable to or to another spine, over a leaf).  Only with
 * OO_LFT_TURN_ONCE: updn's routes do not turn, and its reach pass
 * follows the routes toward switch LIDs.
 */
static int turns_back_up(const struct oo_build *b, const struct oo_swinfo *si,
			 const struct oo_plan *pl, const struct oo_dest *d)
{
	unsigned to = b->tree.info[d->target_idx].level, i;

	if (!b->turn_once || si->level == OO_NO_LEVEL || to == OO_NO_LEVEL)
		return 0;
	for (i = 0; i < pl->n; i++) {
		uint8_t port = pl->port[i];
		unsigned below = b->port_level[port];

		if (below != OO_NO_LEVEL && below < si->level && below <= to &&
		    si->remote[port] != d->target_idx + 1)
			return 1;
	}
	return 0;
}

/*
 * The candidate toward the first switch of the tree (the lowest index),
 * the first of its parallel links: every switch whose routes turn back
 * up sends them to the same one where it can.  Routes that turn at many
 * switches close credit loops with the routes that do not (a packet for
 * spine T waits at leaf X for the link up to T, where traffic from X's
 * CAs to leaf Y over T waits at T for the link down to Y, where one for
 * spine U waits for the link up ...); turned at one switch they close
 * none through it.  Where the candidates differ from switch to switch
 * (directors) turns at several switches remain (docs/fabrics-minhop.md
 * counts the cells with a loop).  No CA's traffic takes such a route
 * where it has a shorter one, so the load they put on that switch is
 * management traffic's, and the polish finds the ports of the other
 * leaves free of transit traffic.
 */
static int first_neighbour(const struct oo_swinfo *si,
			   const struct oo_plan *pl)
{
	unsigned i;
	int best = 0;

	for (i = 1; i < pl->n; i++)
		if (si->remote[pl->port[i]] < si->remote[pl->port[best]])
			best = (int)i;
	return best;
}

/*
 * One LID offset of a group of destinations behind one target switch.
 * CAs come first in routing order, so a CA's index is its rank.  Under the
 * coordinated rule a switch's own LID (management traffic only) takes the
 * candidate its index in the tree picks: a route to a switch then only
 * moves when its own candidates change, never because some other route
 * moved or the LMC renumbered the LIDs (the reach pass follows these
 * routes).
 */
static void route_group(struct oo_build *b, const struct oo_swinfo *si,
			const struct oo_group *grp, unsigned lid_offset)
{
	osm_switch_t *sw = si->sw;
	const struct oo_dest *first = &b->dests[grp->start];
	const struct oo_plan *pl = NULL;
	int turn = -1;		/* first_neighbour() for the whole group */
	unsigned i;

	if (first->leaf && first->leaf != sw)
		pl = plan_for(b, si, first);
	if (pl && pl->n && turns_back_up(b, si, pl, first))
		turn = first_neighbour(si, pl);
	for (i = grp->start; i < grp->end; i++) {
		const struct oo_dest *d = &b->dests[i];
		unsigned lid = d->min_lid + lid_offset;
		int pick = -1;
		uint8_t port;

		if (lid > d->max_lid || lid > sw->max_lid_ho)
			continue;
		if (!d->leaf || (pl && !pl->n)) {
			sw->new_lft[lid] = OSM_NO_PATH;
			continue;
		}
		if (!pl) {
			sw->new_lft[lid] = d->is_switch ? 0 : d->leaf_port;
			continue;
		}
		if (turn >= 0) {
			pick = turn;
		} else if (d->is_switch) {
			if (b->rule == OO_RULE_COORDINATED)
				pick = (int)(d->target_idx % pl->n);
		} else if (pl->kind == OO_PLAN_UP)
			pick = spread_over_trunk(b, si, pl, i,
						 pick_up_slot(b, si, pl, i,
							      lid_offset));
		else if (pl->kind == OO_PLAN_DOWN)
			pick = pick_down_link(b, si, pl, i, lid_offset);
		if (pick < 0)
			pick = plain_pick(b, si, pl, i, lid_offset);
		port = pl->port[pick];
		sw->new_lft[lid] = port;
		count_path(b, d, i, lid_offset, port);
	}
}

/*
 * The ports of the switch with a healthy link to another switch (only
 * they can be equal-cost candidates toward a switch LID: ports to CAs and
 * loops never have the least hop count), the level behind each port, and
 * which ports the port profiles ignore.
 */
static void scan_ports(struct oo_build *b, const struct oo_swinfo *si)
{
	osm_switch_t *sw = si->sw;
	uint8_t port;

	b->num_links = 0;
	for (port = 1; port < sw->num_ports; port++) {
		osm_physp_t *p = osm_node_get_physp_ptr(sw->p_node, port);
		unsigned r = si->remote[port];

		b->prof_ignored[port] = p && p->is_prof_ignored ? 1 : 0;
		b->port_level[port] = r ? (uint16_t)b->tree.info[r - 1].level :
		    OO_NO_LEVEL;
		if (r && p && osm_physp_is_healthy(p) &&
		    osm_physp_get_remote(p))
			b->link_port[b->num_links++] = port;
	}
}

/*
 * The candidates toward every target switch, in table order: the hop
 * table rows are then read in the order they were allocated in, which the
 * memory prefetcher follows (one row per target and switch would
 * otherwise cost a cache miss each).
 */
static void plan_all_targets(struct oo_build *b, const struct oo_swinfo *si)
{
	const osm_switch_t *sw = si->sw;
	unsigned t;

	for (t = 0; t < b->tree.num_sw; t++) {
		unsigned ahead = t + 8;

		if (ahead < b->tree.num_sw &&
		    b->tree.info[ahead].lid <= sw->max_lid_ho)
			__builtin_prefetch(sw->hops[b->tree.info[ahead].lid]);
		make_plan(b, si, b->tree.info[t].lid, &b->plans[t]);
	}
}

static void build_switch_lft(struct oo_build *b, const struct oo_swinfo *si)
{
	osm_switch_t *sw = si->sw;
	unsigned offset, g, port;

	memset(sw->new_lft, OSM_NO_PATH, sw->max_lid_ho + 1);
	memset(b->paths, 0, sizeof(b->paths));
	if (b->lids_per_port > 1)
		memset(b->used_port, 0,
		       (size_t)b->num_dests * b->lids_per_port);
	scan_ports(b, si);
	plan_all_targets(b, si);

	/* All base LIDs first, then each further LID offset in turn. */
	for (offset = 0; offset < b->lids_per_port; offset++) {
		memset(b->offset_paths, 0, sizeof(b->offset_paths));
		b->detours = 0;
		for (g = 0; g < b->num_groups; g++)
			route_group(b, si, &b->groups[g], offset);
	}
	/* the port profile OpenSM keeps: paths routed through each port */
	for (port = 1; port < sw->num_ports; port++)
		sw->p_prof[port].num_paths += b->paths[port];
}

/* The LFTs of the leaves (leaves set) or of every other switch. */
static void build_level_lfts(struct oo_build *b, int leaves)
{
	unsigned i;

	for (i = 0; i < b->tree.num_sw; i++)
		if (!b->tree.info[i].level == !!leaves)
			build_switch_lft(b, &b->tree.info[i]);
}

/*
 * The parent of leaf li that most other leaves send lid up to, as their
 * LFTs have it (oo_peers_parent()); 0 if none sends it to a parent of li.
 */
static uint16_t peers_parent(struct oo_build *b, const struct oo_swinfo *li,
			     unsigned lid)
{
	const struct oo_tree *t = &b->tree;
	unsigned i, n = 0;

	for (i = 0; i < t->num_sw; i++) {
		const struct oo_swinfo *si = &t->info[i];
		uint8_t out;

		if (si == li || si->level || lid > si->sw->max_lid_ho)
			continue;
		out = si->sw->new_lft[lid];
		if (out != OSM_NO_PATH && out < si->sw->num_ports)
			b->sent[n++] = si->remote[out];
	}
	return oo_peers_parent(b->sent, n, li->remote, li->sw->num_ports);
}

/*
 * On trees of three levels or more, once the leaves are built: for every
 * LID of a CA whose own slot at its leaf has no link, the parent the
 * other leaves send it up to (peers_parent()).
 */
static int find_peer_parents(struct oo_build *b)
{
	const struct oo_tree *t = &b->tree;
	unsigned i, o;

	if (t->num_levels < 3)
		return 0;
	b->peer_parent = calloc((size_t)b->num_dests * b->lids_per_port + 1,
				sizeof(uint16_t));
	b->sent = calloc(t->num_sw + 1, sizeof(uint16_t));
	if (!b->peer_parent || !b->sent)
		return -1;
	for (i = 0; i < b->num_dests; i++) {
		const struct oo_dest *d = &b->dests[i];
		const struct oo_swinfo *li;

		if (d->is_switch || !d->leaf)
			continue;
		li = &t->info[d->target_idx];
		if (li->level)
			continue;
		for (o = 0; o < b->lids_per_port; o++)
			if (d->min_lid + o <= d->max_lid &&
			    !own_up_path(b, i, o, 1))
				b->peer_parent[(size_t)i * b->lids_per_port +
					       o] =
				    peers_parent(b, li, d->min_lid + o);
	}
	return 0;
}

/**********************************************************************
 * The LFT stage of a wrapped engine
 **********************************************************************/

static void free_build(struct oo_build *b)
{
	unsigned l;

	for (l = 0; l < OO_MAX_LEVELS; l++)
		free(b->slot_base[l]);
	free(b->leaf_slot);
	free(b->peer_parent);
	free(b->sent);
	free_tree(&b->tree);
	free(b->dests);
	free(b->groups);
	free(b->plans);
	free(b->plan_data);
	free(b->used_port);
	free(b->down_cap);
	free(b);
}

/* Where each destination's target switch sits in the tree. */
static int index_targets(struct oo_build *b)
{
	unsigned i;

	for (i = 0; i < b->num_dests; i++) {
		struct oo_dest *d = &b->dests[i];
		int idx;

		if (!d->leaf)
			continue;
		idx = switch_index(&b->tree, d->leaf);
		if (idx < 0)
			return -1;
		d->target_idx = (unsigned)idx;
	}
	return 0;
}

/*
 * Put the destinations in routing order (cmp_routing_order()), once the
 * tree tells which switches are leaves.
 */
static void sort_dests(struct oo_build *b)
{
	unsigned i;

	for (i = 0; i < b->num_dests; i++) {
		struct oo_dest *d = &b->dests[i];
		int idx;

		if (d->kind || !d->leaf)
			continue;
		idx = switch_index(&b->tree, d->leaf);
		d->off_leaf = idx >= 0 && b->tree.info[idx].level > 0;
	}
	qsort(b->dests, b->num_dests, sizeof(*b->dests), cmp_routing_order);
}

/*
 * The digit each destination takes at each level, (rank / divisor) mod
 * slots, computed once for all switches; oo_offset_slot() places the
 * further LID offsets around it.
 */
static int tabulate_slots(struct oo_build *b)
{
	const struct oo_tree *t = &b->tree;
	unsigned l, i;

	for (l = 0; l < t->num_levels; l++) {
		unsigned slots = t->level_slots[l];

		b->slot_base[l] = calloc(b->num_dests + 1, sizeof(uint16_t));
		if (!b->slot_base[l])
			return -1;
		if (!slots || slots > IB_NODE_NUM_PORTS_MAX)
			continue;
		for (i = 0; i < b->num_dests; i++)
			b->slot_base[l][i] = (uint16_t)
			    oo_coordinated_slot(i, t->divisor[l], 0, slots);
	}
	return 0;
}

/*
 * Lines apart: each CA's digit at level 1 moves on to the first one that
 * no CA before it in rank order takes below the same level-1 switch
 * (oo_free_digit()): the switch its own up path reaches, or the one it
 * hangs off (a management HCA on a line ASIC).  The cores then send the
 * CAs behind one line down different links.  Where ranks run over the
 * pods in turn (edge e of a director fabric in pod e mod 4), digits by
 * rank repeat every fifth edge of a pod.  Returns how many digits
 * moved, or -1 (no memory).
 */
static long keep_digits_apart(struct oo_build *b)
{
	const struct oo_tree *t = &b->tree;
	unsigned slots = t->num_levels > 2 ? t->level_slots[1] : 0, i;
	uint8_t *taken;
	long moved = 0;

	if (!slots || slots > IB_NODE_NUM_PORTS_MAX)
		return 0;
	taken = calloc((size_t)t->num_sw * slots + 1, 1);
	if (!taken)
		return -1;
	for (i = 0; i < b->num_dests; i++) {
		const struct oo_dest *d = &b->dests[i];
		unsigned want = b->slot_base[1][i], got;
		uint16_t below;
		uint8_t *row;

		if (d->is_switch || !d->leaf)
			continue;
		below = t->info[d->target_idx].level == 1 ?
		    (uint16_t)(d->target_idx + 1) : own_up_path(b, i, 0, 1);
		if (!below)
			continue;
		row = taken + (size_t)(below - 1U) * slots;
		got = oo_free_digit(row, slots, want);
		row[got] = 1;
		if (got != want) {
			b->slot_base[1][i] = (uint16_t)got;
			moved++;
		}
	}
	free(taken);
	return moved;
}

/*
 * Which of its level's up slots a leaf has a link in, and the switch
 * behind each; returns how many are live.
 */
static unsigned leaf_links(const struct oo_swinfo *si, unsigned slots,
			   uint8_t *live, uint16_t *parent)
{
	unsigned s, n = 0;

	for (s = 0; s < slots; s++) {
		uint8_t port = si->slot_port[s];

		parent[s] = port ? si->remote[port] : 0;
		live[s] = parent[s] != 0;
		n += live[s];
	}
	return n;
}

/*
 * The leaf-level slots of the CAs of one group: by their digits, and where
 * their leaf misses the link of a slot, moved to a live one evenly (see
 * oo_fill_dead_slots()).  A tapered edge numbers its own links (no dead
 * slot); a CA on a spine takes no leaf slot of its own.
 */
static void fill_group_slots(struct oo_build *b, const struct oo_group *g)
{
	const struct oo_tree *t = &b->tree;
	const struct oo_dest *d = &b->dests[g->start];
	unsigned slots = t->level_slots[0], lids = b->lids_per_port;
	uint16_t *slot = b->leaf_slot + (size_t)g->start * lids;
	uint8_t live[OO_MAX_SLOTS];
	uint16_t parent[OO_MAX_SLOTS];
	const struct oo_swinfo *si;
	unsigned i, o, n;

	for (i = g->start; i < g->end; i++)
		for (o = 0; o < lids; o++)
			b->leaf_slot[(size_t)i * lids + o] =
			    (uint16_t)digit_slot(b, 0, i, o);
	if (d->is_switch || !d->leaf || slots > IB_NODE_NUM_PORTS_MAX)
		return;
	si = &t->info[d->target_idx];
	if (si->level || si->slots != slots)
		return;
	n = leaf_links(si, slots, live, parent);
	if (n && n < slots)
		oo_fill_dead_slots(slot, (g->end - g->start) * lids, lids,
				   live, parent, slots);
}

static int fill_leaf_slots(struct oo_build *b)
{
	unsigned g;

	if (b->lids_per_port < 2 || !b->tree.num_levels ||
	    !b->tree.level_slots[0])
		return 0;
	b->leaf_slot = calloc((size_t)b->num_dests * b->lids_per_port + 1,
			      sizeof(uint16_t));
	if (!b->leaf_slot)
		return -1;
	for (g = 0; g < b->num_groups; g++)
		fill_group_slots(b, &b->groups[g]);
	return 0;
}

/* Split the routing order into runs of destinations behind one switch. */
static int group_dests(struct oo_build *b)
{
	unsigned i;

	b->groups = calloc(b->num_dests + 1, sizeof(*b->groups));
	if (!b->groups)
		return -1;
	for (i = 0; i < b->num_dests; i++) {
		struct oo_group *g = &b->groups[b->num_groups];

		if (b->num_groups && g[-1].end == i &&
		    b->dests[g[-1].start].leaf == b->dests[i].leaf &&
		    b->dests[g[-1].start].kind == b->dests[i].kind) {
			g[-1].end = i + 1;
			continue;
		}
		g->start = i;
		g->end = i + 1;
		b->num_groups++;
	}
	return 0;
}

/*
 * One plan per target switch, with room for as many candidates as the
 * largest switch has ports and as many slots as the widest level has.
 */
static int alloc_plans(struct oo_build *b)
{
	const struct oo_tree *t = &b->tree;
	size_t stride = 1;
	unsigned i;

	for (i = 0; i < t->num_sw; i++)
		if (t->info[i].sw->num_ports > stride)
			stride = t->info[i].sw->num_ports;
	for (i = 0; i < t->num_levels; i++)
		if (t->level_slots[i] > stride)
			stride = t->level_slots[i] < OO_PORTS ?
			    t->level_slots[i] : OO_PORTS;
	b->plans = calloc(t->num_sw + 1, sizeof(*b->plans));
	b->plan_data = calloc((size_t)(t->num_sw + 1) * 5, stride);
	if (!b->plans || !b->plan_data)
		return -1;
	for (i = 0; i <= t->num_sw; i++) {
		uint8_t *data = b->plan_data + (size_t)i * 5 * stride;

		b->plans[i].port = data;
		b->plans[i].order = data + stride;
		b->plans[i].by_slot = data + 2 * stride;
		b->plans[i].live_slot = data + 3 * stride;
		b->plans[i].cut = data + 4 * stride;
	}
	return 0;
}

/* Whether some level has more up slots than parents (parallel links). */
static int is_trunked(const struct oo_tree *t)
{
	unsigned l;

	for (l = 0; l < t->num_levels; l++)
		if (t->level_slots[l] > t->level_parents[l])
			return 1;
	return 0;
}

static int alloc_down_cap(struct oo_build *b)
{
	size_t n = b->tree.num_sw;

	b->down_cap = calloc(n * n + 1, 1);
	return b->down_cap ? 0 : -1;
}

static int prepare_build(struct oo_build *b)
{
	if (collect_dests(b) || build_tree(b))
		return -1;
	sort_dests(b);
	if (group_dests(b))
		return -1;
	b->used_port = calloc((size_t)b->num_dests * b->lids_per_port + 1, 1);
	if (!b->used_port || index_targets(b) || tabulate_slots(b) ||
	    fill_leaf_slots(b))
		return -1;
	if (alloc_plans(b))
		return -1;
	/* the cut lanes only steer further LID offsets */
	if (b->lids_per_port > 1 && is_trunked(&b->tree))
		return alloc_down_cap(b);
	return 0;
}

int oo_build_offset_lfts(struct osm_opensm *osm, enum oo_rule rule,
			 unsigned lane_share, unsigned flags)
{
	int design_lanes = !!(flags & OO_LFT_DESIGN_LANES);
	double cpu = oo_thread_cpu_seconds();
	struct oo_build *b;
	unsigned i;

	OSM_LOG(&osm->log, OSM_LOG_VERBOSE, "osmoffset: building LFTs with "
		"port offsetting (%s)\n", oo_rule_name(rule));
	b = calloc(1, sizeof(*b));
	if (!b)
		return -1;
	b->osm = osm;
	b->log = &osm->log;
	b->rule = rule;
	b->lane_share = lane_share;
	b->design_lanes = design_lanes;
	b->offsets_apart = !!(flags & OO_LFT_OFFSETS_APART);
	b->keep_live = !!(flags & OO_LFT_KEEP_LIVE);
	b->turn_once = !!(flags & OO_LFT_TURN_ONCE);
	b->lids_per_port = 1U << osm->subn.opt.lmc;
	if (b->offsets_apart && b->lids_per_port < 2) {
		free_build(b);
		return 1;	/* no further LID offset */
	}

	if (prepare_build(b))
		goto fail;
	if (design_lanes && !lanes_below_widest(&b->tree)) {
		free_build(b);
		return 1;	/* the design is the widest trunks */
	}
	if (flags & OO_LFT_DIGITS_APART) {
		b->digits_moved = keep_digits_apart(b);
		if (b->digits_moved < 0)
			goto fail;
		if (!b->digits_moved) {
			free_build(b);
			return 1;	/* no digit moves */
		}
	}

	for (i = 0; i < b->tree.num_sw; i++) {
		osm_switch_t *sw = b->tree.info[i].sw;

		if (!sw->new_lft || !sw->hops) {
			OSM_LOG(b->log, OSM_LOG_ERROR, "ERR 9F03: "
				"switch 0x%016" PRIx64 " has no LFT buffer "
				"or hop table\n",
				cl_ntoh64(osm_node_get_node_guid(sw->p_node)));
			goto fail;
		}
	}
	/* the leaves first: the cores follow their detours (peers_parent()) */
	build_level_lfts(b, 1);
	if (find_peer_parents(b))
		goto fail;
	build_level_lfts(b, 0);

	OSM_LOG(b->log, OSM_LOG_VERBOSE, "osmoffset: LFTs of %u switches "
		"built with port offsetting (%s), %u destinations, LMC %u, "
		"%lu routes over the live links of degraded plans "
		"(%.3f s CPU)\n", b->tree.num_sw, oo_rule_name(b->rule),
		b->num_dests, osm->subn.opt.lmc, b->renumbered,
		oo_thread_cpu_seconds() - cpu);
	if (lane_share)
		OSM_LOG(b->log, OSM_LOG_VERBOSE, "osmoffset: %lu base LIDs "
			"whose lane had no cable left their parent, its other "
			"lanes carrying %u times the least loaded cable's\n",
			b->shared, lane_share);
	if (design_lanes)
		OSM_LOG(b->log, OSM_LOG_VERBOSE, "osmoffset: lanes by "
			"design; %lu LIDs over the links beyond them\n",
			b->extra);
	if (b->digits_moved)
		OSM_LOG(b->log, OSM_LOG_VERBOSE, "osmoffset: digits apart "
			"below each level-1 switch; %ld CAs' level-1 digits "
			"moved\n", b->digits_moved);
	if (b->keep_live)
		OSM_LOG(b->log, OSM_LOG_VERBOSE, "osmoffset: %lu LIDs kept "
			"their digits where a plan misses few slots\n",
			b->kept_live);
	i = (lane_share && !b->shared) || (b->keep_live && !b->kept_live);
	free_build(b);
	return (int)i;

fail:
	free_build(b);
	return -1;
}

