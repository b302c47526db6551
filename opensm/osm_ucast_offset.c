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
 * (build_lid_matrices) are built by osm_ucast_offset_hops.c, the same as
 * stock but faster (or by the engine itself with hop_tables=stock), and
 * their LFTs here, with port offsetting.  When port offsetting is off the
 * engines are not touched at all.
 *
 * This file is the plugin's face to OpenSM: the entry points and the
 * wrapped engines.  The LFTs are built in osm_ucast_offset_lft.c, under
 * the stock guard of osm_ucast_offset_guard.c.
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
#include "osmoffset_glue.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

struct oo_plugin {
	osm_opensm_t *osm;
	struct oo_options opts;
	int engines_checked;
	int engines_wrapped;
	/* OpenSM's own LFT stage (minhop's, which updn uses too) */
	oo_lft_builder stock_lfts;
	void *stock_ctx;
	/* whether this routing's updn roots are not updn's own
	   (OO_ROOTS_CHANGED, OO_ROOTS_ADDED), and OO_ROOTS_LANES */
	unsigned roots_changed;
	/* the reach pass has lanes above VL0 (reach_all, reach_vls > 1 and
	   QoS; port offsetting on): up/down over roots of last resort may
	   leave paths to it, and the stock guard judges reach beyond VL0;
	   set with the hop tables, before the LFT stage of the sweep */
	int lanes;
	/* the SLs of the routes the reach pass put above VL0 */
	struct oo_path_sls sls;
	/* OO_LFT_* flags of the engine routing now (OO_LFT_TURN_ONCE for
	   minhop) */
	unsigned engine_flags;
};

/* What a wrapped engine keeps of itself. */
struct oo_wrap {
	struct oo_plugin *plugin;
	osm_routing_engine_t orig;
};

/*
 * Port offsetting's LFT stage (osm_ucast_offset_lft.c), with lane_share
 * and flags as the stock guard's variants want them.
 */
static int build_ours_with(void *context, unsigned lane_share,
			   unsigned flags)
{
	struct oo_plugin *plugin = context;

	return oo_build_offset_lfts(plugin->osm, plugin->opts.rule,
				    lane_share, flags | plugin->engine_flags);
}

static int build_ours(void *context)
{
	return build_ours_with(context, 0, 0);
}

/* updn's hop tables over the roots updn's own detection finds. */
static int build_stock_hops(void *context)
{
	struct oo_plugin *plugin = context;

	return oo_updn_build_hop_tables(plugin->osm, OO_ROOTS_UPDN, 0, NULL);
}

/* updn's hop tables over the roots port offsetting checks. */
static int build_checked_hops(void *context)
{
	struct oo_plugin *plugin = context;

	return oo_updn_build_hop_tables(plugin->osm, OO_ROOTS_CHECKED,
					plugin->lanes, NULL);
}

/* updn's hop tables over the roots port offsetting completes. */
static int build_our_hops(void *context)
{
	struct oo_plugin *plugin = context;

	return oo_updn_build_hop_tables(plugin->osm, OO_ROOTS_COMPLETED,
					plugin->lanes, NULL);
}

/*
 * updn's and minhop's hop tables are built here unless told otherwise;
 * whatever the builders leave alone (return > 0) the engine's own stage
 * builds.  With port offsetting on, updn's roots are checked and
 * completed (leaves and edges it took for roots go, spines its detection
 * left out join them); where that changes them, the LFT stage also
 * answers to the stock engine's own tables.
 */
static int wrap_build_lid_matrices(void *context)
{
	struct oo_wrap *w = context;
	struct oo_plugin *plugin = w->plugin;
	int ret = 1;

	plugin->roots_changed = 0;
	plugin->lanes = plugin->opts.rule != OO_RULE_OFF &&
	    plugin->opts.reach_all &&
	    oo_reach_lanes(plugin->osm, plugin->opts.reach_vls) > 1;
	if (plugin->opts.hop_tables == OO_HOPS_FAST) {
		if (w->orig.type == OSM_ROUTING_ENGINE_TYPE_UPDN)
			ret = oo_updn_build_hop_tables(plugin->osm,
					plugin->opts.rule != OO_RULE_OFF ?
					OO_ROOTS_COMPLETED : OO_ROOTS_CHECKED,
					plugin->lanes, &plugin->roots_changed);
		else if (w->orig.type == OSM_ROUTING_ENGINE_TYPE_MINHOP)
			ret = oo_minhop_build_hop_tables(plugin->osm);
		if (ret <= 0)
			return ret;
	}
	return w->orig.build_lid_matrices(w->orig.context);
}

/* The reach pass on VL0, as the stock guard scores the tables with it. */
static int fill_for_guard(void *context)
{
	struct oo_plugin *plugin = context;

	return oo_reach_fill_vl0(plugin->osm, 0);
}

/* The whole reach pass on VL0, its retry round too. */
static int fill_whole_for_guard(void *context)
{
	struct oo_plugin *plugin = context;

	return oo_reach_fill_vl0(plugin->osm, 1);
}

/* The reach pass on VL0 as OpenSM will run it: LIDs may borrow routes. */
static int fill_final_for_guard(void *context)
{
	struct oo_plugin *plugin = context;

	return oo_reach_fill_vl0(plugin->osm, 2);
}

/* Port offsetting's LFTs, under the stock guard if it is on. */
static int build_guarded(struct oo_plugin *plugin)
{
	struct oo_guard_stages st = {
		.ours = build_ours,
		.ours_with = build_ours_with,
		.variants = (plugin->opts.design_lanes ?
			     OO_LFT_DESIGN_LANES : 0) |
		    (plugin->opts.offsets_apart ? OO_LFT_OFFSETS_APART : 0) |
		    (plugin->opts.digits_apart ? OO_LFT_DIGITS_APART : 0) |
		    (plugin->opts.keep_live ? OO_LFT_KEEP_LIVE : 0) |
		    (plugin->opts.polish ? OO_GUARD_POLISH : 0) |
		    (plugin->opts.spine_cas ? OO_GUARD_SPINE_CAS : 0) |
		    (plugin->opts.leaf_shuffles ? OO_GUARD_LEAF_SHUFFLES : 0),
		.stock = plugin->stock_lfts,
		.ctx = plugin,
		.stock_ctx = plugin->stock_ctx,
		.fill = plugin->opts.reach_all ? fill_for_guard : NULL,
		.fill_whole = plugin->opts.reach_all ? fill_whole_for_guard :
		    NULL,
		.fill_final = plugin->opts.reach_all ? fill_final_for_guard :
		    NULL,
		.lanes_beyond_vl0 = plugin->lanes,
		.routes_may_loop = !!(plugin->engine_flags &
				      OO_LFT_TURN_ONCE),
		.polish_kicks = plugin->opts.polish_kicks,
		.polish_even = plugin->opts.polish_even,
		.polish_cables = plugin->opts.polish_cables,
		.polish_ways = plugin->opts.polish_ways,
	};

	if (!plugin->opts.stock_guard)
		return build_ours(plugin);
	if (plugin->roots_changed) {
		st.stock_hops = build_stock_hops;
		if (plugin->roots_changed & OO_ROOTS_ADDED)
			st.checked_hops = build_checked_hops;
		st.our_hops = build_our_hops;
	}
	return oo_guard_lfts(plugin->osm, &st);
}

/*
 * The reach pass over whichever tables stay: it fills what updn left
 * empty.  Where up/down over roots of last resort stayed because lanes
 * above VL0 would carry the paths it lacks (OO_ROOTS_LANES) and the pass
 * still leaves a CA's traffic without a route, or could not run: -1, and
 * OpenSM hands the fabric to its next engine (minhop, as it hands stock
 * updn's), whose LFT stage rewrites every switch's table.
 */
static int fill_holes(struct oo_plugin *plugin)
{
	unsigned left = 0;
	int ret = oo_reach_lfts(plugin->osm, plugin->opts.reach_vls,
				&plugin->sls, &left);

	if (!(plugin->roots_changed & OO_ROOTS_LANES) || (!ret && !left))
		return 0;
	oo_path_sls_free(&plugin->sls);
	OSM_LOG(&plugin->osm->log, OSM_LOG_INFO, "osmoffset: over the "
		"switches without end ports as roots, the reach pass leaves "
		"%u entries where a CA's traffic runs in without a route, on "
		"the lanes above VL0 too: up/down routing is not used\n",
		left);
	return -1;
}

/*
 * On any failure the stock LFT builder of the same engine runs instead
 * (the original stage, or OpenSM's default one when we return > 0), over
 * the stock engine's own hop tables; it rewrites every switch's new LFT
 * from scratch, so nothing half-built of ours is ever sent to a switch.
 */
static int wrap_ucast_build_fwd_tables(void *context)
{
	struct oo_wrap *w = context;
	struct oo_plugin *plugin = w->plugin;

	/* no route of these tables is on a lane above VL0 unless the reach
	   pass puts it there */
	oo_path_sls_free(&plugin->sls);
	plugin->engine_flags = w->orig.type == OSM_ROUTING_ENGINE_TYPE_MINHOP ?
	    OO_LFT_TURN_ONCE : 0;
	if (plugin->opts.rule != OO_RULE_OFF) {
		if (!build_guarded(plugin)) {
			/* whichever tables stay: fill what updn left empty */
			return plugin->opts.reach_all ? fill_holes(plugin) : 0;
		}
		OSM_LOG(&plugin->osm->log, OSM_LOG_ERROR, "ERR 9F04: "
			"port offsetting could not build the LFTs (no memory, "
			"a switch without tables or a tree deeper than %d "
			"levels); routing engine '%s' builds them the stock "
			"way\n", OO_MAX_LEVELS, w->orig.name);
		/* the stock stage fills no hole the lanes were to carry */
		if (plugin->roots_changed & OO_ROOTS_LANES)
			return -1;
		if (plugin->roots_changed && build_stock_hops(plugin) &&
		    w->orig.build_lid_matrices(w->orig.context))
			OSM_LOG(&plugin->osm->log, OSM_LOG_ERROR, "ERR 9F0A: "
				"the hop tables over updn's own roots could "
				"not be built (no memory)\n");
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

/*
 * The path SL and SL2VL hooks of reach_vls, for engines without their own
 * (updn and minhop have none).  While no route is on a lane above VL0
 * they leave OpenSM's SL and tables as they are.  Otherwise every route
 * gets SL 0 or the lane the reach pass put it on, and SL n travels on VL
 * n (any higher SL on VL0): the SLs of a QoS policy give way, as with the
 * engines that route over several lanes (dfsssp, lash).
 */
static uint8_t reach_path_sl(void *context, IN uint8_t path_sl_hint,
			     IN const ib_net16_t slid,
			     IN const ib_net16_t dlid)
{
	struct oo_wrap *w = context;
	const struct oo_path_sls *sls = &w->plugin->sls;

	if (sls->lanes <= 1)
		return path_sl_hint;
	return oo_path_sl(sls, cl_ntoh16(slid), cl_ntoh16(dlid));
}

static void reach_update_sl2vl(void *context, IN osm_physp_t *port,
			       IN uint8_t in_port_num,
			       IN uint8_t out_port_num,
			       IN OUT ib_slvl_table_t *t)
{
	struct oo_wrap *w = context;
	unsigned lanes = w->plugin->sls.lanes;
	uint8_t sl;

	(void)port;
	(void)in_port_num;
	(void)out_port_num;
	if (lanes <= 1)
		return;
	for (sl = 0; sl < IB_MAX_NUM_VLS; sl++)
		ib_slvl_table_set(t, sl, sl < lanes ? sl : 0);
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
	/* minhop's LFT stage is OpenSM's own one, for the stock guard */
	if (re->type == OSM_ROUTING_ENGINE_TYPE_MINHOP &&
	    re->ucast_build_fwd_tables && !plugin->stock_lfts) {
		plugin->stock_lfts = re->ucast_build_fwd_tables;
		plugin->stock_ctx = re->context;
	}

	re->context = w;
	re->build_lid_matrices = re->build_lid_matrices ?
	    wrap_build_lid_matrices : NULL;
	re->ucast_build_fwd_tables = wrap_ucast_build_fwd_tables;
	if (re->ucast_dump_tables)
		re->ucast_dump_tables = wrap_ucast_dump_tables;
	if (re->update_sl2vl)
		re->update_sl2vl = wrap_update_sl2vl;
	else if (plugin->opts.reach_vls > 1 && plugin->opts.reach_all)
		re->update_sl2vl = reach_update_sl2vl;
	if (re->update_vlarb)
		re->update_vlarb = wrap_update_vlarb;
	if (re->path_sl)
		re->path_sl = wrap_path_sl;
	else if (plugin->opts.reach_vls > 1 && plugin->opts.reach_all)
		re->path_sl = reach_path_sl;
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
static void wrap_one_engine(struct oo_plugin *plugin,
			    osm_routing_engine_t *re, const char *what)
{
	osm_log_t *log = &plugin->osm->log;

	if (!engine_takes_offsetting(re) || engine_is_wrapped(re))
		return;
	if (wrap_engine(plugin, re)) {
		OSM_LOG(log, OSM_LOG_ERROR, "ERR 9F02: "
			"cannot allocate memory to wrap %s '%s'; it routes "
			"the stock way\n", what, re->name);
		return;
	}
	plugin->engines_wrapped++;
	OSM_LOG(log, OSM_LOG_INFO, "osmoffset: port offsetting (%s) "
		"enabled for %s '%s'\n", oo_rule_name(plugin->opts.rule),
		what, re->name);
}

/*
 * The engines OpenSM was asked for, and, when one of them takes port
 * offsetting, also the minhop engine OpenSM falls back to when they all
 * fail (osm->default_routing_engine, not always in the list).
 */
static void wrap_configured_engines(struct oo_plugin *plugin)
{
	osm_routing_engine_t *re;
	osm_log_t *log = &plugin->osm->log;

	for (re = plugin->osm->routing_engine_list; re; re = re->next)
		wrap_one_engine(plugin, re, "routing engine");
	if (plugin->engines_wrapped && plugin->osm->default_routing_engine)
		wrap_one_engine(plugin, plugin->osm->default_routing_engine,
				"fallback routing engine");
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
	char err[OO_OPTIONS_ERR_MAX];

	plugin = calloc(1, sizeof(*plugin));
	if (!plugin) {
		OSM_LOG(&osm->log, OSM_LOG_ERROR, "ERR 9F05: "
			"osmoffset: cannot allocate plugin state; not loaded\n");
		return NULL;
	}
	plugin->osm = osm;
	plugin->sls.lanes = 1;

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
	struct oo_plugin *plugin = plugin_data;

	if (plugin)
		oo_path_sls_free(&plugin->sls);
	free(plugin);
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
