/*
 * osmoffset - port offsetting for OpenSM's updn and minhop routing engines
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * An OpenSM event plugin.  Loaded with "event_plugin_name osmoffset" and
 * switched on with "event_plugin_options port_offsetting=on", it wraps the
 * updn and minhop routing engines that OpenSM has set up: their hop tables
 * (build_lid_matrices) stay the stock ones, and their LFTs are built here,
 * with the starting port among equal-cost candidates rotating with the
 * number of paths routed so far.  When port offsetting is off the engines
 * are not touched at all.
 *
 * The choice of a port is in osm_offset_select.c; this file only gathers
 * the candidates from OpenSM's switch and port objects.
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
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_version.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_port.h>
#include <opensm/osm_node.h>
#include <opensm/osm_log.h>

#include "osmoffset.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

struct oo_plugin {
	osm_opensm_t *osm;
	struct oo_options opts;
	int engines_checked;
	int engines_wrapped;
};

/* What a wrapped engine keeps of itself. */
struct oo_wrap {
	struct oo_plugin *plugin;
	osm_routing_engine_t orig;
};

/* A destination port: where its LIDs are and which switch reaches it. */
struct oo_dest {
	osm_port_t *port;
	const char *desc;
	osm_switch_t *leaf;	/* switch it hangs off, or itself */
	const char *leaf_key;	/* sort key of that switch */
	uint16_t min_lid;
	uint16_t max_lid;
	uint16_t target_lid;	/* base LID of leaf, for the hop tables */
	uint8_t leaf_port;	/* 0 for a switch's own port 0 */
	uint8_t is_switch;
};

struct oo_build {
	osm_opensm_t *osm;
	osm_log_t *log;
	enum oo_rule rule;
	struct oo_dest *dests;
	unsigned num_dests;
	unsigned lids_per_port;
	/* per switch: the remote node each LID of each destination took */
	const osm_node_t **used_remote;
	uint32_t paths[IB_NODE_NUM_PORTS_MAX];
	uint32_t offset_paths[IB_NODE_NUM_PORTS_MAX];
	struct oo_candidate cand[IB_NODE_NUM_PORTS_MAX];
	const osm_node_t *cand_remote[IB_NODE_NUM_PORTS_MAX];
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

	if (port->p_node->sw) {
		d->is_switch = 1;
		d->leaf = port->p_node->sw;
	} else if (port->p_physp && port->p_physp->p_remote_physp &&
		   port->p_physp->p_remote_physp->p_node->sw) {
		remote = port->p_physp->p_remote_physp;
		d->leaf = remote->p_node->sw;
		d->leaf_port = osm_physp_get_port_num(remote);
	}
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
 * The routing order: end ports grouped by the switch they hang off, the
 * switches in the order of the first host name behind them, the ports of
 * one switch by port number; switches' own ports last.  This follows the
 * order in which MPI usually numbers its ranks and does not depend on GUIDs.
 */
static int cmp_routing_order(const void *a, const void *b)
{
	const struct oo_dest *x = a, *y = b;
	int r;

	if (x->is_switch != y->is_switch)
		return x->is_switch ? 1 : -1;
	r = oo_natural_cmp(x->leaf_key, y->leaf_key);
	if (r)
		return r;
	if (x->leaf != y->leaf) {
		uint64_t gx = cl_ntoh64(osm_node_get_node_guid(x->leaf->p_node));
		uint64_t gy = cl_ntoh64(osm_node_get_node_guid(y->leaf->p_node));
		return gx < gy ? -1 : 1;
	}
	if (x->leaf_port != y->leaf_port)
		return x->leaf_port < y->leaf_port ? -1 : 1;
	return oo_natural_cmp(x->desc, y->desc);
}

/* Give every destination the smallest description found on its switch. */
static void assign_leaf_keys(struct oo_dest *dests, unsigned n)
{
	unsigned i, j;

	qsort(dests, n, sizeof(*dests), cmp_by_leaf);
	for (i = 0; i < n; i = j) {
		const char *key = dests[i].desc;

		for (j = i; j < n && dests[j].leaf == dests[i].leaf; j++)
			if (oo_natural_cmp(dests[j].desc, key) < 0)
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
	qsort(b->dests, n, sizeof(*b->dests), cmp_routing_order);
	return 0;
}

/**********************************************************************
 * One switch
 **********************************************************************/

static unsigned count_reuse(const struct oo_build *b, unsigned dest_idx,
			    unsigned lid_offset, const osm_node_t *remote)
{
	const osm_node_t **used = b->used_remote +
	    (size_t)dest_idx * b->lids_per_port;
	unsigned i, reuse = 0;

	for (i = 0; i < lid_offset; i++)
		if (used[i] == remote)
			reuse++;
	return reuse;
}

/* Equal-cost, healthy, linked egress ports toward a destination. */
static unsigned gather_candidates(struct oo_build *b, osm_switch_t *sw,
				  unsigned dest_idx, unsigned lid_offset)
{
	const struct oo_dest *d = &b->dests[dest_idx];
	uint8_t least, port;
	unsigned n = 0;

	least = osm_switch_get_least_hops(sw, d->target_lid);
	if (least == OSM_NO_PATH)
		return 0;

	for (port = 1; port < sw->num_ports; port++) {
		osm_physp_t *p;
		osm_physp_t *rem;

		if (osm_switch_get_hop_count(sw, d->target_lid, port) != least)
			continue;
		p = osm_node_get_physp_ptr(sw->p_node, port);
		if (!p || !osm_physp_is_healthy(p))
			continue;
		rem = osm_physp_get_remote(p);
		if (!rem)
			continue;
		b->cand[n].port = port;
		b->cand[n].paths = b->paths[port];
		b->cand[n].offset_paths = b->offset_paths[port];
		b->cand_remote[n] = rem->p_node;
		b->cand[n].reuse = count_reuse(b, dest_idx, lid_offset,
					       rem->p_node);
		n++;
	}
	return n;
}

static uint8_t route_one_lid(struct oo_build *b, osm_switch_t *sw,
			     unsigned dest_idx, unsigned lid_offset)
{
	const struct oo_dest *d = &b->dests[dest_idx];
	unsigned n, start;
	int pick;
	uint8_t port;
	osm_physp_t *p;

	if (!d->leaf)
		return OSM_NO_PATH;
	if (d->leaf == sw)
		return d->is_switch ? 0 : d->leaf_port;

	n = gather_candidates(b, sw, dest_idx, lid_offset);
	if (!n)
		return OSM_NO_PATH;

	start = oo_rotation_start(b->cand, n);
	pick = oo_select_candidate(b->cand, n, start);
	port = b->cand[pick].port;

	b->used_remote[(size_t)dest_idx * b->lids_per_port + lid_offset] =
	    b->cand_remote[pick];

	p = osm_node_get_physp_ptr(sw->p_node, port);
	if (dest_is_counted(b, d) && !p->is_prof_ignored) {
		b->paths[port]++;
		b->offset_paths[port]++;
		osm_switch_count_path(sw, port);
	}
	return port;
}

static void build_switch_lft(struct oo_build *b, osm_switch_t *sw)
{
	unsigned offset, i;

	memset(sw->new_lft, OSM_NO_PATH, sw->max_lid_ho + 1);
	memset(b->paths, 0, sizeof(b->paths));
	memset(b->used_remote, 0, sizeof(*b->used_remote) *
	       b->num_dests * b->lids_per_port);

	/* All base LIDs first, then each further LID offset in turn. */
	for (offset = 0; offset < b->lids_per_port; offset++) {
		memset(b->offset_paths, 0, sizeof(b->offset_paths));
		for (i = 0; i < b->num_dests; i++) {
			const struct oo_dest *d = &b->dests[i];
			unsigned lid = d->min_lid + offset;

			if (lid > d->max_lid || lid > sw->max_lid_ho)
				continue;
			sw->new_lft[lid] = route_one_lid(b, sw, i, offset);
		}
	}
}

/**********************************************************************
 * The LFT stage of a wrapped engine
 **********************************************************************/

static void free_build(struct oo_build *b)
{
	free(b->dests);
	free(b->used_remote);
	free(b);
}

static int build_offset_lfts(struct oo_plugin *plugin)
{
	osm_opensm_t *osm = plugin->osm;
	cl_qmap_t *sw_tbl = &osm->subn.sw_guid_tbl;
	cl_map_item_t *item;
	struct oo_build *b;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -1;
	b->osm = osm;
	b->log = &osm->log;
	b->rule = plugin->opts.rule;
	b->lids_per_port = 1U << osm->subn.opt.lmc;

	if (collect_dests(b))
		goto fail;
	b->used_remote = calloc((size_t)b->num_dests * b->lids_per_port + 1,
				sizeof(*b->used_remote));
	if (!b->used_remote)
		goto fail;

	for (item = cl_qmap_head(sw_tbl); item != cl_qmap_end(sw_tbl);
	     item = cl_qmap_next(item)) {
		osm_switch_t *sw = (osm_switch_t *)item;

		if (!sw->new_lft || !sw->hops) {
			OSM_LOG(b->log, OSM_LOG_ERROR, "ERR 9F03: "
				"switch 0x%016" PRIx64 " has no LFT buffer "
				"or hop table\n",
				cl_ntoh64(osm_node_get_node_guid(sw->p_node)));
			goto fail;
		}
		build_switch_lft(b, sw);
	}

	OSM_LOG(b->log, OSM_LOG_VERBOSE, "osmoffset: LFTs of %u switches "
		"built with port offsetting (%s), %u destinations, LMC %u\n",
		cl_qmap_count(sw_tbl), oo_rule_name(b->rule), b->num_dests,
		osm->subn.opt.lmc);
	free_build(b);
	return 0;

fail:
	free_build(b);
	return -1;
}

static int wrap_build_lid_matrices(void *context)
{
	struct oo_wrap *w = context;

	return w->orig.build_lid_matrices(w->orig.context);
}

/*
 * On any failure the stock LFT builder of the same engine runs instead
 * (the original stage, or OpenSM's default one when we return > 0); it
 * rewrites every switch's new LFT from scratch, so nothing half-built of
 * ours is ever sent to a switch.
 */
static int wrap_ucast_build_fwd_tables(void *context)
{
	struct oo_wrap *w = context;
	struct oo_plugin *plugin = w->plugin;

	if (plugin->opts.rule != OO_RULE_OFF) {
		if (!build_offset_lfts(plugin))
			return 0;
		OSM_LOG(&plugin->osm->log, OSM_LOG_ERROR, "ERR 9F04: "
			"port offsetting could not build the LFTs (out of "
			"memory?); routing engine '%s' builds them the stock "
			"way\n", w->orig.name);
	}
	if (w->orig.ucast_build_fwd_tables)
		return w->orig.ucast_build_fwd_tables(w->orig.context);
	return 1;
}

static void wrap_ucast_dump_tables(void *context)
{
	struct oo_wrap *w = context;

	w->orig.ucast_dump_tables(w->orig.context);
}

static void wrap_update_sl2vl(void *context, IN osm_physp_t *port,
			      IN uint8_t in_port_num, IN uint8_t out_port_num,
			      IN OUT ib_slvl_table_t *t)
{
	struct oo_wrap *w = context;

	w->orig.update_sl2vl(w->orig.context, port, in_port_num,
			     out_port_num, t);
}

static void wrap_update_vlarb(void *context, IN osm_physp_t *port,
			      IN uint8_t port_num,
			      IN OUT ib_vl_arb_table_t *block,
			      unsigned block_length, unsigned block_num)
{
	struct oo_wrap *w = context;

	w->orig.update_vlarb(w->orig.context, port, port_num, block,
			     block_length, block_num);
}

static uint8_t wrap_path_sl(void *context, IN uint8_t path_sl_hint,
			    IN const ib_net16_t slid, IN const ib_net16_t dlid)
{
	struct oo_wrap *w = context;

	return w->orig.path_sl(w->orig.context, path_sl_hint, slid, dlid);
}

static ib_api_status_t wrap_mcast_build_stree(void *context,
					      IN OUT osm_mgrp_box_t *mgb)
{
	struct oo_wrap *w = context;

	return w->orig.mcast_build_stree(w->orig.context, mgb);
}

static void wrap_destroy(void *context)
{
	struct oo_wrap *w = context;

	if (w->orig.destroy)
		w->orig.destroy(w->orig.context);
	free(w);
}

static int engine_takes_offsetting(const osm_routing_engine_t *re)
{
	return re->type == OSM_ROUTING_ENGINE_TYPE_UPDN ||
	    re->type == OSM_ROUTING_ENGINE_TYPE_MINHOP;
}

static int engine_is_wrapped(const osm_routing_engine_t *re)
{
	return re->destroy == wrap_destroy;
}

static int wrap_engine(struct oo_plugin *plugin, osm_routing_engine_t *re)
{
	struct oo_wrap *w = calloc(1, sizeof(*w));

	if (!w)
		return -1;
	w->plugin = plugin;
	w->orig = *re;
	w->orig.next = NULL;

	re->context = w;
	re->build_lid_matrices = re->build_lid_matrices ?
	    wrap_build_lid_matrices : NULL;
	re->ucast_build_fwd_tables = wrap_ucast_build_fwd_tables;
	if (re->ucast_dump_tables)
		re->ucast_dump_tables = wrap_ucast_dump_tables;
	if (re->update_sl2vl)
		re->update_sl2vl = wrap_update_sl2vl;
	if (re->update_vlarb)
		re->update_vlarb = wrap_update_vlarb;
	if (re->path_sl)
		re->path_sl = wrap_path_sl;
	if (re->mcast_build_stree)
		re->mcast_build_stree = wrap_mcast_build_stree;
	re->destroy = wrap_destroy;
	return 0;
}

/*
 * OpenSM sets its routing engines up after the event plugins are created,
 * so the engines are wrapped at the first heavy sweep, which always comes
 * before the first routing and runs in the same (state manager) thread.
 */
static void wrap_configured_engines(struct oo_plugin *plugin)
{
	osm_routing_engine_t *re;
	osm_log_t *log = &plugin->osm->log;

	for (re = plugin->osm->routing_engine_list; re; re = re->next) {
		if (!engine_takes_offsetting(re) || engine_is_wrapped(re))
			continue;
		if (wrap_engine(plugin, re)) {
			OSM_LOG(log, OSM_LOG_ERROR, "ERR 9F02: "
				"cannot allocate memory to wrap routing "
				"engine '%s'; it routes the stock way\n",
				re->name);
			continue;
		}
		plugin->engines_wrapped++;
		OSM_LOG(log, OSM_LOG_INFO, "osmoffset: port offsetting (%s) "
			"enabled for routing engine '%s'\n",
			oo_rule_name(plugin->opts.rule), re->name);
	}
	if (!plugin->engines_wrapped)
		OSM_LOG(log, OSM_LOG_INFO, "osmoffset: no updn or minhop "
			"routing engine configured; port offsetting has "
			"nothing to do\n");
}

/**********************************************************************
 * Event plugin entry points
 **********************************************************************/

static void *oo_create(struct osm_opensm *osm)
{
	struct oo_plugin *plugin;
	char err[256];

	plugin = calloc(1, sizeof(*plugin));
	if (!plugin) {
		OSM_LOG(&osm->log, OSM_LOG_ERROR, "ERR 9F05: "
			"osmoffset: cannot allocate plugin state; not loaded\n");
		return NULL;
	}
	plugin->osm = osm;

	if (oo_options_parse(osm->subn.opt.event_plugin_options,
			     &plugin->opts, err, sizeof(err)))
		OSM_LOG(&osm->log, OSM_LOG_ERROR, "ERR 9F01: osmoffset: %s; "
			"port offsetting stays off (stock routing)\n", err);

	OSM_LOG(&osm->log, OSM_LOG_INFO, "osmoffset %s loaded: "
		"port_offsetting=%s\n", PACKAGE_VERSION,
		oo_rule_name(plugin->opts.rule));
	return plugin;
}

static void oo_delete(void *plugin_data)
{
	free(plugin_data);
}

static void oo_report(void *plugin_data, osm_epi_event_id_t event_id,
		      void *event_data)
{
	struct oo_plugin *plugin = plugin_data;

	(void)event_data;
	if (event_id != OSM_EVENT_ID_HEAVY_SWEEP_START)
		return;
	if (plugin->opts.rule == OO_RULE_OFF || plugin->engines_checked)
		return;
	plugin->engines_checked = 1;
	wrap_configured_engines(plugin);
}

osm_event_plugin_t osm_event_plugin = {
	.osm_version = OSM_VERSION,
	.create = oo_create,
	.delete = oo_delete,
	.report = oo_report,
};
