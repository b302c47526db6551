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

/* The arrays oo_reach_fill() reads, from the subnet. */
static int prepare_net(struct oo_reach_net *net, struct oo_glue_net *gn,
		       struct oo_ca_ports *ca, uint16_t **sw_lid,
		       uint8_t **minor, osm_opensm_t *osm)
{
	unsigned s, d;

	if (oo_glue_net_build(gn, osm))
		return -1;
	*sw_lid = calloc(gn->num_sw + 1, sizeof(**sw_lid));
	if (!*sw_lid || oo_ca_ports_alloc(ca, osm, 1))
		return -1;
	for (s = 0; s < gn->num_sw; s++) {
		if (!gn->lft[s])
			return 1;
		(*sw_lid)[s] = cl_ntoh16(osm_node_get_base_lid(gn->sw[s]->p_node,
							       0));
	}
	net->num_sw = gn->num_sw;
	net->stride = gn->stride;
	net->next = gn->next;
	net->rport = gn->rport;
	net->lft = gn->lft;
	net->lft_len = gn->lft_len;
	net->sw_lid = *sw_lid;
	net->num_dests = oo_glue_ca_ports(osm, 1, ca);
	*minor = calloc(net->num_dests + 1, sizeof(**minor));
	if (!*minor)
		return -1;
	for (d = 0; d < net->num_dests; d++)
		(*minor)[d] = (uint8_t)oo_is_aggregation_node(ca->desc[d]);
	net->dest_sw = ca->sw;
	net->dest_port = ca->port;
	net->dest_lid = ca->lid;
	net->dest_minor = *minor;
	net->lids_per_port = 1U << osm->subn.opt.lmc;
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
		"turn, %u left empty (%u of them where traffic from a CA "
		"runs in)%s (%.3f s CPU)\n", res->lids, res->filled,
		res->left, res->left_ca, res->cyclic ? " (all turns at once "
		"would have closed a credit loop; only loop-free ones kept)" :
		"", cpu);
}

int oo_reach_lfts(struct osm_opensm *osm)
{
	double cpu = oo_thread_cpu_seconds();
	struct oo_reach_net net;
	struct oo_reach_result res;
	struct oo_glue_net gn;
	struct oo_ca_ports ca;
	uint16_t *sw_lid = NULL;
	uint8_t *minor = NULL;
	int ret;

	memset(&gn, 0, sizeof(gn));
	memset(&ca, 0, sizeof(ca));
	ret = prepare_net(&net, &gn, &ca, &sw_lid, &minor, osm);
	if (!ret)
		ret = oo_reach_fill(&net, &res);
	oo_glue_net_free(&gn);
	oo_ca_ports_free(&ca);
	free(sw_lid);
	free(minor);
	if (ret) {
		OSM_LOG(&osm->log, OSM_LOG_ERROR, "ERR 9F09: reach pass: %s; "
			"the LFTs stay as the routing engine built them\n",
			ret < 0 ? "no memory" : "a switch without an LFT");
		return -1;
	}
	log_result(&osm->log, &res, oo_thread_cpu_seconds() - cpu);
	return 0;
}
