/*
 * osmoffset - the updn and minhop engines' hop tables, built fast
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * OpenSM glue for osm_offset_updn.c: read the switches, their links and
 * the root switches out of OpenSM, run one search per destination switch
 * and copy the results into the switches' hop tables, which multicast
 * routing and SA path records read later.  The tables are the ones
 * OpenSM's updn or minhop stage would have built, byte for byte.
 */

#if HAVE_CONFIG_H
#  include <config.h>
#endif

#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include <opensm/osm_config.h>
#include <complib/cl_qmap.h>
#include <complib/cl_nodenamemap.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_node.h>
#include <opensm/osm_port.h>
#include <opensm/osm_log.h>

#include "osmoffset.h"
#include "osmoffset_glue.h"

struct oo_hops {
	osm_opensm_t *osm;
	osm_log_t *log;
	struct oo_updn_graph g;
	osm_switch_t **sw;	/* by index, in OpenSM's switch table order */
	uint16_t *lid;		/* base LID of each switch */
	unsigned *first;
	unsigned *rank;
	uint64_t *id;
	unsigned num_roots;
	unsigned aggregation_nodes;	/* left out of root detection */
	enum oo_updn_roots roots;	/* whose roots */
	int lanes;		/* lanes above VL0 carry what up/down over
				   roots of last resort cannot reach */
	unsigned changed;	/* OO_ROOTS_CHANGED, OO_ROOTS_ADDED,
				   OO_ROOTS_LANES */
	unsigned *bare_cas;	/* end ports by switch, where the roots are
				   those of last resort (take_bare_roots()) */
	unsigned *root_dist;	/* their hops from their centre (g.root_dist,
				   order_bare_roots()) */
	struct oo_updn_work w;
	uint8_t *lid_is_switch;	/* by LID: some switch's base LID */
	unsigned max_lid;	/* smallest max_lid_ho of all switches */
	uint8_t *batch;		/* hop matrices of several searches */
	unsigned batch_len;	/* how many */
};

/* Searches per batch: as many as fit in about 2 MB, at most 64. */
#define OO_BATCH_BYTES (2U << 20)
#define OO_BATCH_MAX 64

/* The switch's index, kept in sw->priv while the stage runs (as updn). */
static unsigned sw_index(const osm_switch_t *sw)
{
	return (unsigned)((uintptr_t)sw->priv - 1);
}

static void free_hops(struct oo_hops *h)
{
	unsigned i;

	if (h->sw)
		for (i = 0; i < h->g.num_sw; i++)
			if (h->sw[i])
				h->sw[i]->priv = NULL;
	free(h->sw);
	free(h->lid);
	free(h->first);
	free(h->g.link);
	free(h->rank);
	free(h->id);
	free(h->batch);
	free(h->w.queued);
	free(h->w.down);
	free(h->w.queue);
	free(h->lid_is_switch);
	free(h->bare_cas);
	free(h->root_dist);
}

static int alloc_hops(struct oo_hops *h, unsigned n)
{
	h->sw = calloc(n + 1, sizeof(*h->sw));
	h->lid = calloc(n + 1, sizeof(*h->lid));
	h->first = calloc(n + 2, sizeof(*h->first));
	h->rank = calloc(n + 1, sizeof(*h->rank));
	h->id = calloc(n + 1, sizeof(*h->id));
	h->w.queued = calloc(n + 1, 1);
	h->w.down = calloc(n + 1, 1);
	h->w.queue = calloc(n + 2, sizeof(*h->w.queue));
	return h->sw && h->lid && h->first && h->rank && h->id &&
	    h->w.queued && h->w.down && h->w.queue ? 0 : -1;
}

/*
 * Index the switches; say no (1) if a switch lacks tables or has a base
 * LID that OpenSM's own stage could not set.
 */
static int index_switches(struct oo_hops *h)
{
	cl_qmap_t *tbl = &h->osm->subn.sw_guid_tbl;
	cl_map_item_t *item;
	unsigned i = 0;

	h->max_lid = 0xffff;
	h->g.stride = 1;
	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item), i++) {
		osm_switch_t *sw = (osm_switch_t *)item;

		h->sw[i] = sw;
		h->lid[i] = cl_ntoh16(osm_node_get_base_lid(sw->p_node, 0));
		h->id[i] = cl_ntoh64(osm_node_get_node_guid(sw->p_node));
		h->rank[i] = OO_UPDN_NO_RANK;
		/* updn sets hops up to max_lid_ho; rows exist below
		   num_hops */
		if (sw->max_lid_ho < h->max_lid)
			h->max_lid = sw->max_lid_ho;
		if (sw->num_hops && sw->num_hops - 1U < h->max_lid)
			h->max_lid = sw->num_hops - 1;
		if (sw->num_ports > h->g.stride)
			h->g.stride = sw->num_ports;
		if (!sw->hops || !sw->num_hops)
			return 1;
	}
	for (i = 0; i < h->g.num_sw; i++) {
		if (!h->lid[i] || h->lid[i] > h->max_lid)
			return 1;
		h->sw[i]->priv = (void *)(uintptr_t)(i + 1);
	}
	return 0;
}

/* The switch behind a port for the ranking search, as updn ranks. */
static osm_switch_t *ranking_neighbour(osm_switch_t *sw, uint8_t port)
{
	osm_physp_t *p = osm_node_get_physp_ptr(sw->p_node, port);

	if (!p || !p->p_remote_physp)
		return NULL;
	return p->p_remote_physp->p_node->sw;
}

/* The switch behind a port for the hop searches, and its port. */
static osm_switch_t *routing_neighbour(osm_switch_t *sw, uint8_t port,
				       uint8_t *rport)
{
	osm_node_t *rn = osm_node_get_remote_node(sw->p_node, port, rport);

	return rn ? rn->sw : NULL;
}

static uint8_t link_flags(osm_switch_t *sw, uint8_t port, osm_switch_t *rs,
			  osm_switch_t *ws)
{
	osm_physp_t *p = osm_node_get_physp_ptr(sw->p_node, port);
	uint8_t flags = 0;

	if (rs)
		flags |= OO_LINK_RANKS;
	if (ws)
		flags |= OO_LINK_ROUTES;
	if (rs && rs != sw)
		flags |= OO_LINK_DIRECT;
	if (ws && ws != sw && p && osm_link_is_healthy(p))
		flags |= OO_LINK_HEALTHY;
	return flags;
}

/*
 * The links of every switch to switches, by port.  Returns their number,
 * or 0 with *odd set when a port's two views of its link disagree (then
 * updn's own stage decides).
 */
static unsigned scan_links(struct oo_hops *h, struct oo_updn_link *out,
			   int *odd)
{
	unsigned s, n = 0;

	for (s = 0; s < h->g.num_sw; s++) {
		osm_switch_t *sw = h->sw[s];
		uint8_t port;

		h->first[s] = n;
		for (port = 1; port < sw->num_ports; port++) {
			osm_switch_t *rs = ranking_neighbour(sw, port);
			uint8_t rport = 0;
			osm_switch_t *ws = routing_neighbour(sw, port, &rport);

			if (!rs && !ws)
				continue;
			if (rs && ws && rs != ws) {
				*odd = 1;
				return 0;
			}
			if (out) {
				struct oo_updn_link *l = &out[n];

				l->to = sw_index(ws ? ws : rs);
				l->port = port;
				l->rport = rport;
				l->flags = link_flags(sw, port, rs, ws);
			}
			n++;
		}
	}
	h->first[h->g.num_sw] = n;
	return n;
}

static const struct oo_updn_link *link_at(const struct oo_hops *h,
					  unsigned s, uint8_t port)
{
	unsigned i;

	for (i = h->first[s]; i < h->first[s + 1]; i++)
		if (h->g.link[i].port == port)
			return &h->g.link[i];
	return NULL;
}

/*
 * The min-hop search walks links from the far end: every link must look
 * the same from both of its ends.
 */
static int links_symmetric(const struct oo_hops *h)
{
	const uint8_t both = OO_LINK_ROUTES | OO_LINK_DIRECT | OO_LINK_HEALTHY;
	unsigned s, i;

	for (s = 0; s < h->g.num_sw; s++)
		for (i = h->first[s]; i < h->first[s + 1]; i++) {
			const struct oo_updn_link *l = &h->g.link[i], *back;

			if (!(l->flags & OO_LINK_ROUTES))
				continue;
			back = link_at(h, l->to, l->rport);
			if (!back || back->to != s || back->rport != l->port ||
			    (back->flags & both) != (l->flags & both))
				return 0;
		}
	return 1;
}

static int build_links(struct oo_hops *h)
{
	int odd = 0;
	unsigned n = scan_links(h, NULL, &odd);

	if (odd)
		return 1;
	h->g.link = calloc(n + 1, sizeof(*h->g.link));
	if (!h->g.link)
		return -1;
	scan_links(h, h->g.link, &odd);
	h->g.first = h->first;
	h->g.rank = h->rank;
	h->g.id = h->id;
	return links_symmetric(h) ? 0 : 1;
}

static int mark_root(void *ctx, uint64_t guid, char *rest)
{
	struct oo_hops *h = ctx;
	osm_switch_t *sw = osm_get_switch_by_guid(&h->osm->subn,
						  cl_hton64(guid));

	(void)rest;
	if (!sw) {
		OSM_LOG(h->log, OSM_LOG_VERBOSE, "osmoffset: root switch "
			"0x%016" PRIx64 " is not in the fabric\n", guid);
		return 0;
	}
	h->rank[sw_index(sw)] = 0;
	h->num_roots++;
	return 0;
}

static void dump_root(cl_map_item_t *item, FILE *file, void *ctx)
{
	osm_switch_t *sw = (osm_switch_t *)item;
	struct oo_hops *h = ctx;

	if (!h->rank[sw_index(sw)])
		fprintf(file, "0x%" PRIx64 "\n",
			cl_ntoh64(osm_node_get_node_guid(sw->p_node)));
}

/* The root list updn writes with the routing dumps. */
static void dump_roots(struct oo_hops *h)
{
	if (osm_log_is_active(h->log, OSM_LOG_ROUTING))
		osm_dump_qmap_to_file(h->osm, "opensm-updn-roots.dump",
				      &h->osm->subn.sw_guid_tbl, dump_root,
				      h);
}

/* Clear every hop-table row that no search below will rewrite. */
static int clear_other_rows(struct oo_hops *h)
{
	unsigned s, lid, max = 0;

	for (s = 0; s < h->g.num_sw; s++)
		if (h->sw[s]->num_hops > max)
			max = h->sw[s]->num_hops;
	h->lid_is_switch = calloc(max + 1, 1);
	if (!h->lid_is_switch)
		return -1;
	for (s = 0; s < h->g.num_sw; s++)
		h->lid_is_switch[h->lid[s]] = 1;
	for (s = 0; s < h->g.num_sw; s++) {
		osm_switch_t *sw = h->sw[s];

		for (lid = 0; lid < sw->num_hops; lid++)
			if (sw->hops[lid] && !h->lid_is_switch[lid])
				memset(sw->hops[lid], OSM_NO_PATH,
				       sw->num_ports);
	}
	return 0;
}

/*
 * Give every switch a row for every switch LID, switch by switch, so that
 * the rows of one switch lie together in memory: the LFT stage reads them
 * switch by switch.  A row of OSM_NO_PATH means what a missing row means.
 * On failure the caller clears every row, new ones included.
 * Rows stay allocated from sweep to sweep, so this only allocates on the
 * first sweep or after new switches or LIDs appeared.
 */
static int alloc_rows(struct oo_hops *h)
{
	unsigned s, d;

	for (s = 0; s < h->g.num_sw; s++) {
		osm_switch_t *sw = h->sw[s];

		for (d = 0; d < h->g.num_sw; d++) {
			uint16_t lid = h->lid[d];

			if (sw->hops[lid])
				continue;
			/* OpenSM frees these rows with free(); every row
			   is written in full by store_rows() */
			sw->hops[lid] = malloc(sw->num_ports);
			if (!sw->hops[lid])
				return -1;
		}
	}
	return 0;
}

/*
 * Copy the results of the searches toward destinations first .. first +
 * count - 1 (matrix k of the batch for destination first + k) into the
 * switches' rows, switch by switch: a switch's rows for consecutive
 * destinations were allocated one after the other, so the copies run
 * through memory in order.
 */
static void store_rows(struct oo_hops *h, unsigned first, unsigned count)
{
	size_t mat = (size_t)h->g.num_sw * h->g.stride;
	unsigned s, k;

	for (s = 0; s < h->g.num_sw; s++) {
		osm_switch_t *sw = h->sw[s];
		const uint8_t *src = h->batch + (size_t)s * h->g.stride;

		for (k = 0; k < count; k++)
			memcpy(sw->hops[h->lid[first + k]], src + k * mat,
			       sw->num_ports);
	}
}

/*
 * End ports (not switches) behind each switch, as updn counts them, but
 * for SHARP aggregation nodes: one on every switch ASIC puts end ports at
 * every distance from every switch, and updn then finds no root at all
 * and hands the fabric to minhop.  Without them the tables are updn's.
 */
static unsigned count_cas(struct oo_hops *h, unsigned *cas)
{
	cl_qmap_t *tbl = &h->osm->subn.port_guid_tbl;
	cl_map_item_t *item;
	unsigned total = 0;

	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item)) {
		osm_port_t *port = (osm_port_t *)item;
		osm_physp_t *remote;

		if (port->p_node->sw || !port->p_physp)
			continue;
		remote = port->p_physp->p_remote_physp;
		if (!remote || !remote->p_node->sw)
			continue;
		if (h->roots != OO_ROOTS_UPDN &&
		    oo_is_aggregation_node(port->p_node->print_desc)) {
			h->aggregation_nodes++;
			continue;
		}
		cas[sw_index(remote->p_node->sw)]++;
		total++;
	}
	return total;
}

/*
 * The leaves of the switch graph as the tree ranking finds them
 * (oo_rank_leaves()), over the cables between switches.  NULL with no
 * memory.
 */
static uint8_t *find_leaves(const struct oo_hops *h, const unsigned *cas)
{
	const struct oo_updn_graph *g = &h->g;
	unsigned *first = calloc(g->num_sw + 1, sizeof(*first));
	struct oo_rank_link *link = calloc(g->first[g->num_sw] + 1,
					   sizeof(*link));
	uint8_t *leaf = calloc(g->num_sw + 1, 1);
	struct oo_rank_graph rg;
	unsigned s, i, n = 0;

	if (first && link && leaf) {
		for (s = 0; s < g->num_sw; s++) {
			first[s] = n;
			for (i = g->first[s]; i < g->first[s + 1]; i++)
				if (g->link[i].flags & OO_LINK_DIRECT) {
					link[n].to = g->link[i].to;
					link[n++].port = g->link[i].port;
				}
		}
		first[g->num_sw] = n;
		rg.num_sw = g->num_sw;
		rg.stride = g->stride;
		rg.first = first;
		rg.link = link;
		rg.hosts = cas;
		rg.order = NULL;	/* oo_rank_leaves() ranks nothing */
		if (oo_rank_leaves(&rg, leaf)) {
			free(leaf);
			leaf = NULL;
		}
	} else {
		free(leaf);
		leaf = NULL;
	}
	free(first);
	free(link);
	return leaf;
}

/*
 * "osmoffset: <which>; left out, <then>: N roots (<why>)", for roots the
 * detection found and adjust_roots() left out, when there are any.
 */
static void log_left_out(const struct oo_hops *h, unsigned left,
			 const char *which, const char *then, const char *why)
{
	if (left)
		OSM_LOG(h->log, OSM_LOG_INFO, "osmoffset: %s; left out, %s: "
			"%u roots (%s)\n", which, then,
			oo_updn_count_roots(&h->g, h->rank), why);
}

/*
 * Leaves updn's detection took for roots go (oo_updn_drop_leaf_roots()),
 * and so do edge switches without hosts it took for roots above the
 * spines (oo_updn_drop_edge_tops()), and roots cabled to roots further
 * from the leaves (oo_updn_drop_roots_under_roots());
 * with OO_ROOTS_COMPLETED, spines it left out join them
 * (oo_updn_add_sibling_roots()).  h->changed says whether any of it did.
 */
static void adjust_roots(struct oo_hops *h, const unsigned *cas)
{
	unsigned found = h->num_roots, n, left = 0, added = 0;
	uint8_t *leaf = find_leaves(h, cas);
	char which[192];

	if (!leaf)
		return;		/* no memory: updn's roots as found */
	n = oo_updn_drop_leaf_roots(&h->g, leaf, h->rank);
	left += n;
	snprintf(which, sizeof(which), "%u of the %u root switches updn's "
		 "detection found are leaves (hosts of their own, neither "
		 "spine- nor core-like)", n, found);
	log_left_out(h, n, which, "with the spines over leaves as roots",
		     "up/down over a leaf root lets credit loops form");
	n = oo_updn_drop_edge_tops(&h->g, leaf, h->rank);
	left += n;
	snprintf(which, sizeof(which), "%u root switches are further from "
		 "the leaves than roots they are cabled to but no core over "
		 "them (few of their cables: edge switches without hosts)", n);
	log_left_out(h, n, which, "ranked under those roots", "the roots "
		     "they are cabled to would be ranked under them");
	n = oo_updn_drop_roots_under_roots(&h->g, leaf, h->rank);
	left += n;
	snprintf(which, sizeof(which), "%u root switches are cabled to roots "
		 "further from the leaves", n);
	log_left_out(h, n, which, "ranked under those", "updn takes a cable "
		     "between two roots as up both ways, and routes over them "
		     "can close a credit loop");
	if (h->roots == OO_ROOTS_COMPLETED)
		added = oo_updn_add_sibling_roots(&h->g, leaf, h->rank);
	free(leaf);
	h->num_roots = oo_updn_count_roots(&h->g, h->rank);
	if (left || added)
		h->changed |= OO_ROOTS_CHANGED;
	if (added) {
		h->changed |= OO_ROOTS_ADDED;
		OSM_LOG(h->log, OSM_LOG_INFO, "osmoffset: %u switches beside "
			"updn's roots (at their level, cabled to no root, most "
			"cables one level down) join them as roots: %u roots; "
			"ranked below the switches under them they would carry "
			"no traffic between them\n", added, h->num_roots);
	}
}

/*
 * updn's root detection: a switch is a root when, of all end ports (cas[]
 * per switch, cas_num in all), more than 90 % sit at one min-hop distance
 * from it and no other distance has more than 5 % of them.  hist and dist
 * are scratch.
 */
static void mark_roots(struct oo_hops *h, const unsigned *cas,
		       unsigned cas_num, unsigned *hist, uint8_t *dist)
{
	unsigned n = h->g.num_sw, s, t, i;
	double thd1 = cas_num * 0.9, thd2 = cas_num * 0.05;

	memset(hist, 0, sizeof(*hist) * n * IB_SUBNET_PATH_HOPS_MAX);
	for (t = 0; t < n; t++) {
		if (!cas[t])
			continue;
		oo_minhop_distances(&h->g, t, dist, h->w.queue);
		for (s = 0; s < n; s++)
			if (dist[s] < IB_SUBNET_PATH_HOPS_MAX)
				hist[(size_t)s * IB_SUBNET_PATH_HOPS_MAX +
				     dist[s]] += cas[t];
	}
	for (s = 0; s < n; s++) {
		const unsigned *bar = &hist[(size_t)s * IB_SUBNET_PATH_HOPS_MAX];
		unsigned over1 = 0, over2 = 0;

		for (i = 0; i < IB_SUBNET_PATH_HOPS_MAX; i++) {
			over1 += bar[i] > thd1;
			over2 += bar[i] > thd2;
		}
		if (over1 == 1 && over2 == 1) {
			h->rank[s] = 0;
			h->num_roots++;
		}
	}
}

/*
 * Where updn's detection finds no root, the end ports on switches that
 * are no leaves (management HCAs on spines or core switches: a few of
 * them three hops from every spine are more than 5 % of a small fabric's
 * end ports) are left out and it runs again, as for SHARP nodes: stock
 * updn hands such a fabric to minhop, whose routes can close credit
 * loops.  Returns how many end ports were left out (0: none, or no
 * memory).
 */
static unsigned drop_core_cas(struct oo_hops *h, unsigned *cas)
{
	uint8_t *leaf = find_leaves(h, cas);
	unsigned s, n = 0;

	if (!leaf)
		return 0;
	for (s = 0; s < h->g.num_sw; s++)
		if (!leaf[s]) {
			n += cas[s];
			cas[s] = 0;
		}
	free(leaf);
	return n;
}

/*
 * Where no root is found even without the management HCAs, the switches
 * without end ports of their own (own[]: the end ports on each switch,
 * those drop_core_cas() left out included) become the roots
 * (oo_updn_bare_roots()); adjust_roots() then drops those under the tops.
 * Returns 1 when it took any.
 */
static int take_bare_roots(struct oo_hops *h, const unsigned *own)
{
	h->num_roots = oo_updn_bare_roots(&h->g, own, h->rank);
	if (!h->num_roots)
		return 0;
	h->changed |= OO_ROOTS_CHANGED;
	OSM_LOG(h->log, OSM_LOG_INFO, "osmoffset: no root switch at the "
		"min-hop distances of the end ports: the %u switches without "
		"end ports of their own are taken for roots (stock updn hands "
		"such a fabric to minhop, whose routes can close credit "
		"loops)\n", h->num_roots);
	return 1;
}

/*
 * The roots of last resort are cabled to each other by design (the
 * spines of a dragonfly's groups), and updn takes such a cable as up both
 * ways: routes over two of them in a row close credit loops.  Here they
 * go up toward the centre of each set of roots joined by such cables
 * (oo_updn_root_centres()), so that every root still reaches every other
 * of its set.  With no memory for that, there are no roots (minhop routes
 * the fabric, as stock updn hands it).
 */
static void order_bare_roots(struct oo_hops *h)
{
	unsigned sets, s;

	h->root_dist = malloc(sizeof(*h->root_dist) * (h->g.num_sw + 1));
	if (!h->root_dist) {
		for (s = 0; s < h->g.num_sw; s++)
			h->rank[s] = OO_UPDN_NO_RANK;
		h->num_roots = 0;
		return;
	}
	sets = oo_updn_root_centres(&h->g, h->rank, h->root_dist,
				    h->w.queue);
	h->g.root_dist = h->root_dist;
	OSM_LOG(h->log, OSM_LOG_VERBOSE, "osmoffset: %u roots in %u sets "
		"cabled among themselves; their cables go up toward each "
		"set's centre\n", h->num_roots, sets);
}

static int find_roots_by_hops(struct oo_hops *h)
{
	unsigned n = h->g.num_sw, cas_num, core;
	unsigned *cas = calloc(n + 1, sizeof(*cas));
	unsigned *own = malloc(sizeof(*own) * (n + 1));
	unsigned *hist = calloc((size_t)n * IB_SUBNET_PATH_HOPS_MAX + 1,
				sizeof(*hist));
	uint8_t *dist = malloc(n + 1);

	if (!cas || !own || !hist || !dist) {
		free(cas);
		free(own);
		free(hist);
		free(dist);
		return -1;
	}
	cas_num = count_cas(h, cas);
	memcpy(own, cas, sizeof(*own) * n);
	mark_roots(h, cas, cas_num, hist, dist);
	OSM_LOG(h->log, OSM_LOG_VERBOSE, "osmoffset: %u root switches found "
		"from the min-hop distances of %u end ports\n", h->num_roots,
		cas_num);
	if (h->aggregation_nodes)
		h->changed |= OO_ROOTS_CHANGED;
	if (h->roots == OO_ROOTS_UPDN)
		goto out;
	if (!h->num_roots && (core = drop_core_cas(h, cas)) &&
	    core < cas_num) {
		h->changed |= OO_ROOTS_CHANGED;
		mark_roots(h, cas, cas_num - core, hist, dist);
		OSM_LOG(h->log, OSM_LOG_INFO, "osmoffset: no root switch at "
			"the min-hop distances of all %u end ports; without "
			"the %u on switches that are no leaves (management "
			"HCAs on spines or cores), %u\n", cas_num, core,
			h->num_roots);
	}
	if (!h->num_roots && take_bare_roots(h, own)) {
		h->bare_cas = own;	/* build_updn() checks reach */
		own = NULL;
	}
	adjust_roots(h, cas);
	if (h->bare_cas)
		order_bare_roots(h);
	if (h->aggregation_nodes)
		OSM_LOG(h->log, OSM_LOG_INFO, "osmoffset: %u SHARP aggregation "
			"nodes left out of updn's root detection\n",
			h->aggregation_nodes);
out:
	free(cas);
	free(own);
	free(hist);
	free(dist);
	return 0;
}

/*
 * The root switches, as updn finds them: from the root GUID file, or,
 * without one or when it cannot be parsed, from the min-hop distances.
 * Returns 1 when updn's own stage must decide (hop weights change the
 * min-hop distances).
 */
static int find_roots(struct oo_hops *h)
{
	const char *file = h->osm->subn.opt.root_guid_file;

	if (file) {
		if (!parse_node_map(file, mark_root, h))
			return 0;
		OSM_LOG(h->log, OSM_LOG_ERROR, "ERR 9F07: osmoffset: cannot "
			"parse root GUID file '%s'; finding the roots from the "
			"min-hop distances\n", file);
	}
	if (h->osm->subn.opt.hop_weights_file)
		return 1;
	return find_roots_by_hops(h) ? 1 : 0;
}

/* The switches and their links; 1 when OpenSM's own stage must decide. */
static int prepare(struct oo_hops *h)
{
	size_t mat;
	int ret;

	if (alloc_hops(h, h->g.num_sw))
		return 1;
	ret = index_switches(h);
	if (ret)
		return ret;
	ret = build_links(h);
	if (ret)
		return 1;
	mat = (size_t)h->g.num_sw * h->g.stride;
	h->batch_len = (unsigned)(OO_BATCH_BYTES / mat);
	if (h->batch_len > OO_BATCH_MAX)
		h->batch_len = OO_BATCH_MAX;
	if (!h->batch_len)
		h->batch_len = 1;
	h->batch = malloc(mat * h->batch_len + 1);
	return h->batch ? 0 : 1;
}

/*
 * Write the hop tables: one search per destination switch.  On failure
 * every table is cleared again, as at the start of routing, for the
 * engine's own stage to build.
 */
static int fill_tables(struct oo_hops *h, int minhop, const char *what)
{
	double cpu = oo_thread_cpu_seconds();
	size_t mat = (size_t)h->g.num_sw * h->g.stride;
	uint8_t *dist = NULL;
	unsigned first, count, k, s;

	if (minhop && !(dist = malloc(h->g.num_sw + 1)))
		goto no_memory;
	if (alloc_rows(h) || clear_other_rows(h))
		goto no_memory;
	for (first = 0; first < h->g.num_sw; first += count) {
		count = h->g.num_sw - first;
		if (count > h->batch_len)
			count = h->batch_len;
		for (k = 0; k < count; k++) {
			h->w.hops = h->batch + k * mat;
			if (minhop) {
				oo_minhop_distances(&h->g, first + k, dist,
						    h->w.queue);
				oo_minhop_rows(&h->g, first + k, dist,
					       h->w.hops);
			} else
				oo_updn_hops(&h->g, first + k, &h->w);
		}
		store_rows(h, first, count);
	}
	free(dist);
	OSM_LOG(h->log, OSM_LOG_VERBOSE, "osmoffset: %s hop tables of %u "
		"switches built (%.3f s CPU)\n", what, h->g.num_sw,
		oo_thread_cpu_seconds() - cpu);
	return 0;

no_memory:
	free(dist);
	for (s = 0; s < h->g.num_sw; s++)
		osm_switch_clear_hops(h->sw[s]);
	OSM_LOG(h->log, OSM_LOG_ERROR, "ERR 9F06: osmoffset: no memory for "
		"the %s hop tables; the routing engine builds them itself\n",
		what);
	return 1;
}

/*
 * Over roots of last resort, whether every switch with end ports reaches
 * every other up and down (oo_updn_reach_all()); where not, minhop routes
 * the fabric, as stock updn hands it there, rather than up/down leaving
 * CAs out of reach; unless the reach pass has lanes above VL0 (h->lanes)
 * for the down/up turns those paths need: then up/down stays
 * (OO_ROOTS_LANES), and should the pass still leave a CA's traffic
 * without a route, the LFT stage hands the fabric to minhop after all.
 */
static int bare_roots_reach(struct oo_hops *h)
{
	h->w.hops = h->batch;
	if (oo_updn_reach_all(&h->g, h->bare_cas, &h->w))
		return 1;
	if (h->lanes) {
		h->changed |= OO_ROOTS_LANES;
		OSM_LOG(h->log, OSM_LOG_INFO, "osmoffset: over the switches "
			"without end ports as roots, some switch with end "
			"ports has no up/down path to another (cables "
			"missing); up/down routing stays, and the reach pass "
			"routes those paths on lanes above VL0 (reach_vls)\n");
		return 1;
	}
	OSM_LOG(h->log, OSM_LOG_INFO, "osmoffset: over the switches without "
		"end ports as roots, some switch with end ports has no "
		"up/down path to another (cables missing); up/down routing "
		"is not used (" OO_LANES_ROOTS_REMEDY ")\n");
	return 0;
}

static int build_updn(struct oo_hops *h)
{
	unsigned max_rank;
	int ret = prepare(h);

	if (ret)
		return ret;
	ret = find_roots(h);
	if (ret)
		return ret;
	if (!h->num_roots) {
		OSM_LOG(h->log, OSM_LOG_INFO, "osmoffset: no root switches "
			"found, up/down routing cannot be used\n");
		dump_roots(h);
		return -1;
	}
	max_rank = oo_updn_rank(&h->g, h->w.queue);
	oo_updn_directions(&h->g);
	if (h->bare_cas && !bare_roots_reach(h)) {
		dump_roots(h);
		return -1;
	}
	OSM_LOG(h->log, OSM_LOG_VERBOSE, "osmoffset: %u switches ranked "
		"from %u roots, highest rank %u\n", h->g.num_sw, h->num_roots,
		max_rank);
	ret = fill_tables(h, 0, "up/down");
	if (!ret)
		dump_roots(h);
	return ret;
}

static void init_hops(struct oo_hops *h, osm_opensm_t *osm)
{
	memset(h, 0, sizeof(*h));
	h->osm = osm;
	h->log = &osm->log;
	h->g.num_sw = cl_qmap_count(&osm->subn.sw_guid_tbl);
}

int oo_updn_build_hop_tables(struct osm_opensm *osm, enum oo_updn_roots roots,
			     int lanes, unsigned *changed)
{
	struct oo_hops h;
	int ret;

	if (changed)
		*changed = 0;
	if (osm->subn.opt.connect_roots || osm->subn.opt.ids_guid_file ||
	    !cl_qmap_count(&osm->subn.sw_guid_tbl))
		return 1;
	init_hops(&h, osm);
	h.roots = roots;
	h.lanes = lanes;
	ret = build_updn(&h);
	if (!ret && changed)
		*changed = h.changed;
	free_hops(&h);
	return ret;
}

int oo_minhop_build_hop_tables(struct osm_opensm *osm)
{
	struct oo_hops h;
	int ret;

	if (osm->subn.opt.hop_weights_file ||
	    !cl_qmap_count(&osm->subn.sw_guid_tbl))
		return 1;
	init_hops(&h, osm);
	ret = prepare(&h);
	if (!ret)
		ret = fill_tables(&h, 1, "min-hop");
	free_hops(&h);
	return ret;
}
