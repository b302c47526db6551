/*
 * osmoffset - OpenSM glue of the reach pass
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Hands the switches' new LFTs, their links and the CA ports to
 * oo_reach_fill() (osm_offset_reach.c), which fills the entries up/down
 * routing left empty where that closes no credit loop.
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

struct reach_glue {
	struct oo_reach_net net;
	osm_switch_t **sw;
	uint32_t *next;
	uint8_t *rport;
	uint8_t **lft;
	unsigned *lft_len;
	uint16_t *sw_lid;
	uint32_t *dest_sw;
	uint8_t *dest_port;
	uint16_t *dest_lid;
};

static void free_glue(struct reach_glue *r)
{
	unsigned i;

	if (r->sw)
		for (i = 0; i < r->net.num_sw; i++)
			r->sw[i]->priv = NULL;
	free(r->sw);
	free(r->next);
	free(r->rport);
	free(r->lft);
	free(r->lft_len);
	free(r->sw_lid);
	free(r->dest_sw);
	free(r->dest_port);
	free(r->dest_lid);
}

static unsigned glue_index(const osm_switch_t *sw)
{
	return (unsigned)((uintptr_t)sw->priv - 1);
}

/* The switches (each with its index in sw->priv) and their tables. */
static int index_switches(struct reach_glue *r, osm_opensm_t *osm)
{
	cl_qmap_t *tbl = &osm->subn.sw_guid_tbl;
	cl_map_item_t *item;
	unsigned n = cl_qmap_count(tbl), i = 0, stride = 1;

	r->sw = calloc(n + 1, sizeof(*r->sw));
	r->lft = calloc(n + 1, sizeof(*r->lft));
	r->lft_len = calloc(n + 1, sizeof(*r->lft_len));
	r->sw_lid = calloc(n + 1, sizeof(*r->sw_lid));
	if (!r->sw || !r->lft || !r->lft_len || !r->sw_lid)
		return -1;
	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item), i++) {
		osm_switch_t *sw = (osm_switch_t *)item;

		r->sw[i] = sw;
		sw->priv = (void *)(uintptr_t)(i + 1);
		r->lft[i] = sw->new_lft;
		r->lft_len[i] = sw->new_lft ? sw->max_lid_ho + 1U : 0;
		r->sw_lid[i] = cl_ntoh16(osm_node_get_base_lid(sw->p_node, 0));
		if (sw->num_ports > stride)
			stride = sw->num_ports;
	}
	r->net.num_sw = n;
	r->net.stride = stride;
	return 0;
}

/* The switch (and its port) behind every port of every switch. */
static int map_links(struct reach_glue *r)
{
	unsigned s, stride = r->net.stride;
	size_t n = (size_t)r->net.num_sw * stride + 1;

	r->next = malloc(sizeof(*r->next) * n);
	r->rport = calloc(n, 1);
	if (!r->next || !r->rport)
		return -1;
	for (s = 0; s < r->net.num_sw; s++) {
		osm_node_t *node = r->sw[s]->p_node;
		uint8_t port;

		for (port = 0; port < stride; port++) {
			size_t at = (size_t)s * stride + port;
			osm_physp_t *p = NULL;
			osm_node_t *rn = NULL;
			uint8_t rp = 0;

			if (port && port < r->sw[s]->num_ports)
				p = osm_node_get_physp_ptr(node, port);
			if (p && osm_physp_is_healthy(p))
				rn = osm_node_get_remote_node(node, port, &rp);
			r->next[at] = rn && rn->sw && rn->sw->priv ?
			    glue_index(rn->sw) : OO_EVAL_NONE;
			r->rport[at] = r->next[at] == OO_EVAL_NONE ? 0 : rp;
		}
	}
	return 0;
}

/* Every CA port with a LID that is cabled to a switch. */
static int collect_dests(struct reach_glue *r, osm_opensm_t *osm)
{
	cl_qmap_t *tbl = &osm->subn.port_guid_tbl;
	cl_map_item_t *item;
	unsigned n = 0, max = cl_qmap_count(tbl) + 1;

	r->dest_sw = calloc(max, sizeof(*r->dest_sw));
	r->dest_port = calloc(max, sizeof(*r->dest_port));
	r->dest_lid = calloc(max, sizeof(*r->dest_lid));
	if (!r->dest_sw || !r->dest_port || !r->dest_lid)
		return -1;
	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item)) {
		osm_port_t *port = (osm_port_t *)item;
		osm_physp_t *remote;
		uint16_t min_lid, max_lid;

		if (port->p_node->sw || !port->p_physp)
			continue;
		remote = port->p_physp->p_remote_physp;
		if (!remote || !remote->p_node->sw || !remote->p_node->sw->priv)
			continue;
		osm_port_get_lid_range_ho(port, &min_lid, &max_lid);
		if (!min_lid)
			continue;
		r->dest_sw[n] = glue_index(remote->p_node->sw);
		r->dest_port[n] = osm_physp_get_port_num(remote);
		r->dest_lid[n] = min_lid;
		n++;
	}
	r->net.num_dests = n;
	return 0;
}

static int prepare_glue(struct reach_glue *r, osm_opensm_t *osm)
{
	unsigned s;

	if (index_switches(r, osm) || map_links(r) || collect_dests(r, osm))
		return -1;
	for (s = 0; s < r->net.num_sw; s++)
		if (!r->lft[s])
			return 1;
	r->net.next = r->next;
	r->net.rport = r->rport;
	r->net.lft = r->lft;
	r->net.lft_len = r->lft_len;
	r->net.sw_lid = r->sw_lid;
	r->net.dest_sw = r->dest_sw;
	r->net.dest_port = r->dest_port;
	r->net.dest_lid = r->dest_lid;
	r->net.lids_per_port = 1U << osm->subn.opt.lmc;
	return 0;
}

static void log_result(osm_log_t *log, const struct oo_reach_result *res,
		       double cpu)
{
	if (!res->lids) {
		OSM_LOG(log, OSM_LOG_VERBOSE, "osmoffset: reach: every switch "
			"has an LFT entry for every CA LID (%.3f s CPU)\n",
			cpu);
		return;
	}
	OSM_LOG(log, OSM_LOG_INFO, "osmoffset: reach: %u CA LIDs had no LFT "
		"entry on some switches; %u entries filled through a down/up "
		"turn, %u left empty%s (%.3f s CPU)\n", res->lids, res->filled,
		res->left, res->cyclic ? " (all turns at once would have "
		"closed a credit loop; only loop-free ones kept)" : "", cpu);
}

int oo_reach_lfts(struct osm_opensm *osm)
{
	double cpu = oo_thread_cpu_seconds();
	struct reach_glue r;
	struct oo_reach_result res;
	int ret;

	memset(&r, 0, sizeof(r));
	ret = prepare_glue(&r, osm);
	if (!ret)
		ret = oo_reach_fill(&r.net, &res);
	free_glue(&r);
	if (ret) {
		OSM_LOG(&osm->log, OSM_LOG_ERROR, "ERR 9F09: reach pass: %s; "
			"the LFTs stay as the routing engine built them\n",
			ret < 0 ? "no memory" : "a switch without an LFT");
		return -1;
	}
	log_result(&osm->log, &res, oo_thread_cpu_seconds() - cpu);
	return 0;
}
