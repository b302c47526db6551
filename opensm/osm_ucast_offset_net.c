/*
 * osmoffset - the subnet's switches, links, tables and CA ports as plain
 * arrays
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * OpenSM glue shared by the stock guard and the reach pass: both hand the
 * new LFTs to pure code (osm_offset_eval.c, osm_offset_reach.c) that knows
 * switches by index and links by switch * stride + port.
 */

#if HAVE_CONFIG_H
#  include <config.h>
#endif

#include <stdlib.h>
#include <string.h>

#include <opensm/osm_config.h>
#include <complib/cl_qmap.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_port.h>
#include <opensm/osm_node.h>

#include "osmoffset.h"
#include "osmoffset_glue.h"

void oo_glue_net_free(struct oo_glue_net *gn)
{
	unsigned i;

	if (gn->sw)
		for (i = 0; i < gn->num_sw; i++)
			gn->sw[i]->priv = NULL;
	free(gn->sw);
	free(gn->next);
	free(gn->rport);
	free(gn->lft);
	free(gn->lft_len);
	memset(gn, 0, sizeof(*gn));
}

/* The switches, each with its index + 1 in sw->priv, and their tables. */
static int index_switches(struct oo_glue_net *gn, osm_opensm_t *osm)
{
	cl_qmap_t *tbl = &osm->subn.sw_guid_tbl;
	cl_map_item_t *item;
	unsigned i = 0, stride = 1;

	gn->num_sw = cl_qmap_count(tbl);
	gn->sw = calloc(gn->num_sw + 1, sizeof(*gn->sw));
	gn->lft = calloc(gn->num_sw + 1, sizeof(*gn->lft));
	gn->lft_len = calloc(gn->num_sw + 1, sizeof(*gn->lft_len));
	if (!gn->sw || !gn->lft || !gn->lft_len)
		return -1;
	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item), i++) {
		osm_switch_t *sw = (osm_switch_t *)item;

		gn->sw[i] = sw;
		sw->priv = (void *)(uintptr_t)(i + 1);
		gn->lft[i] = sw->new_lft;
		gn->lft_len[i] = sw->new_lft ? sw->max_lid_ho + 1U : 0;
		if (sw->num_ports > stride)
			stride = sw->num_ports;
	}
	gn->stride = stride;
	return 0;
}

/* The switch, and its port, behind every port of every switch. */
static int map_links(struct oo_glue_net *gn)
{
	unsigned s, stride = gn->stride;
	size_t n = (size_t)gn->num_sw * stride + 1;

	gn->next = malloc(sizeof(*gn->next) * n);
	gn->rport = calloc(n, 1);
	if (!gn->next || !gn->rport)
		return -1;
	for (s = 0; s < gn->num_sw; s++) {
		osm_node_t *node = gn->sw[s]->p_node;
		uint8_t port;

		for (port = 0; port < stride; port++) {
			size_t at = (size_t)s * stride + port;
			osm_node_t *rn = NULL;
			uint8_t rp = 0;

			if (port && port < gn->sw[s]->num_ports)
				rn = osm_node_get_remote_node(node, port, &rp);
			gn->next[at] = rn && rn->sw && rn->sw->priv ?
			    oo_glue_index(rn->sw) : OO_EVAL_NONE;
			gn->rport[at] = gn->next[at] == OO_EVAL_NONE ? 0 : rp;
		}
	}
	return 0;
}

void oo_glue_reach_net(struct oo_reach_net *rn, const struct oo_glue_net *gn,
		       unsigned lids_per_port)
{
	memset(rn, 0, sizeof(*rn));
	rn->num_sw = gn->num_sw;
	rn->stride = gn->stride;
	rn->next = gn->next;
	rn->rport = gn->rport;
	rn->lft = gn->lft;
	rn->lft_len = gn->lft_len;
	rn->lids_per_port = lids_per_port;
}

int oo_glue_net_build(struct oo_glue_net *gn, struct osm_opensm *osm)
{
	memset(gn, 0, sizeof(*gn));
	if (index_switches(gn, osm) || map_links(gn)) {
		oo_glue_net_free(gn);
		return -1;
	}
	return 0;
}

unsigned oo_glue_ca_ports(struct osm_opensm *osm, int with_sharp,
			  struct oo_ca_ports *ca)
{
	cl_qmap_t *tbl = &osm->subn.port_guid_tbl;
	cl_map_item_t *item;
	unsigned n = 0;

	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl);
	     item = cl_qmap_next(item)) {
		osm_port_t *port = (osm_port_t *)item;
		osm_physp_t *remote;
		uint16_t min_lid, max_lid;

		if (port->p_node->sw || !port->p_physp)
			continue;
		if (!with_sharp &&
		    oo_is_aggregation_node(port->p_node->print_desc))
			continue;
		remote = port->p_physp->p_remote_physp;
		if (!remote || !remote->p_node->sw || !remote->p_node->sw->priv)
			continue;
		osm_port_get_lid_range_ho(port, &min_lid, &max_lid);
		if (!min_lid)
			continue;
		ca->sw[n] = oo_glue_index(remote->p_node->sw);
		ca->port[n] = osm_physp_get_port_num(remote);
		ca->lid[n] = min_lid;
		if (ca->desc)
			ca->desc[n] = port->p_node->print_desc ?
			    port->p_node->print_desc : "";
		n++;
	}
	return n;
}

int oo_ca_ports_alloc(struct oo_ca_ports *ca, struct osm_opensm *osm,
		      int with_desc)
{
	size_t max = cl_qmap_count(&osm->subn.port_guid_tbl) + 1;

	memset(ca, 0, sizeof(*ca));
	ca->sw = calloc(max, sizeof(*ca->sw));
	ca->port = calloc(max, sizeof(*ca->port));
	ca->lid = calloc(max, sizeof(*ca->lid));
	if (with_desc)
		ca->desc = calloc(max, sizeof(*ca->desc));
	if (!ca->sw || !ca->port || !ca->lid || (with_desc && !ca->desc)) {
		oo_ca_ports_free(ca);
		return -1;
	}
	return 0;
}

void oo_ca_ports_free(struct oo_ca_ports *ca)
{
	free(ca->sw);
	free(ca->port);
	free(ca->lid);
	free(ca->desc);
	memset(ca, 0, sizeof(*ca));
}
