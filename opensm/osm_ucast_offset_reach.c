/*
 * osmoffset - OpenSM glue of the reach pass
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Hands the switches' new LFTs, their links and the CA ports to
 * oo_reach_fill_vls() (osm_offset_reach.c), which fills the entries
 * up/down routing left empty where that closes no credit loop, and, when
 * reach_vls allows more virtual lanes than VL0, the rest with the SL of
 * each route it puts on a lane above VL0.  Keeps those SLs for the path
 * SL hook and writes them out for the analysers (osmoffset-path-sl.dump).
 */

#if HAVE_CONFIG_H
#  include <config.h>
#endif

#include <inttypes.h>
#include <stdio.h>
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

/* The arrays oo_reach_fill() reads, from the subnet, and what owns them. */
struct reach_glue {
	struct oo_reach_net net;
	struct oo_glue_net gn;
	struct oo_ca_ports ca;
	uint16_t *sw_lid;
	uint8_t *minor;
};

static void free_net(struct reach_glue *rg)
{
	oo_glue_net_free(&rg->gn);
	oo_ca_ports_free(&rg->ca);
	free(rg->sw_lid);
	free(rg->minor);
}

/* 0, or -1 (no memory) or 1 (a switch without an LFT); free_net() after. */
static int prepare_net(struct reach_glue *rg, osm_opensm_t *osm)
{
	struct oo_reach_net *net = &rg->net;
	unsigned s, d;

	memset(rg, 0, sizeof(*rg));
	if (oo_glue_net_build(&rg->gn, osm))
		return -1;
	rg->sw_lid = calloc(rg->gn.num_sw + 1, sizeof(*rg->sw_lid));
	if (!rg->sw_lid || oo_ca_ports_alloc(&rg->ca, osm, 1))
		return -1;
	for (s = 0; s < rg->gn.num_sw; s++) {
		if (!rg->gn.lft[s])
			return 1;
		rg->sw_lid[s] = cl_ntoh16(osm_node_get_base_lid(
						rg->gn.sw[s]->p_node, 0));
	}
	oo_glue_reach_net(net, &rg->gn, 1U << osm->subn.opt.lmc);
	net->sw_lid = rg->sw_lid;
	net->num_dests = oo_glue_ca_ports(osm, 1, &rg->ca);
	rg->minor = calloc(net->num_dests + 1, sizeof(*rg->minor));
	if (!rg->minor)
		return -1;
	for (d = 0; d < net->num_dests; d++)
		rg->minor[d] = (uint8_t)oo_is_aggregation_node(rg->ca.desc[d]);
	net->dest_sw = rg->ca.sw;
	net->dest_port = rg->ca.port;
	net->dest_lid = rg->ca.lid;
	net->dest_minor = rg->minor;
	return 0;
}

#define OO_LOOP_FREE_KEPT " (all turns at once would have closed a " \
	"credit loop; only loop-free ones kept"

/*
 * The pass's result; on_vl0_alone: it had no lane above VL0 because none
 * was asked for (reach_vls=1), so the log names the lanes where turns
 * were left out for a credit loop and CA traffic runs into the gaps.
 */
static void log_result(osm_log_t *log, const struct oo_reach_result *res,
		       int on_vl0_alone, double cpu)
{
	const char *cyclic = !res->cyclic ? "" :
	    on_vl0_alone && res->left_ca ?
	    OO_LOOP_FREE_KEPT "; " OO_LANES_REMEDY ")" : OO_LOOP_FREE_KEPT ")";

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
		res->left, res->left_ca, cyclic, cpu);
	if (res->borrowed)
		OSM_LOG(log, OSM_LOG_INFO, "osmoffset: reach: %u LIDs that "
			"traffic from some CA still could not get to took the "
			"routes of another LID of their port, which reaches "
			"more CAs\n", res->borrowed);
	if (res->layered)
		OSM_LOG(log, OSM_LOG_INFO, "osmoffset: reach: %u routes "
			"(switch, LID) put on virtual lanes 1-%u; their path "
			"records carry SL 1-%u, every other route SL 0\n",
			res->layered, res->top_sl, res->top_sl);
}

void oo_path_sls_free(struct oo_path_sls *sls)
{
	oo_sl_map_free(&sls->map);
	free(sls->sw_of_lid);
	memset(sls, 0, sizeof(*sls));
	sls->lanes = 1;
}

uint8_t oo_path_sl(const struct oo_path_sls *sls, uint16_t slid,
		   uint16_t dlid)
{
	if (sls->lanes <= 1 || slid >= sls->max_lid ||
	    sls->sw_of_lid[slid] == OO_EVAL_NONE)
		return 0;
	return oo_sl_map_get(&sls->map, sls->sw_of_lid[slid], dlid);
}

/*
 * Where each LID's packets start: a CA's LIDs at its switch, a switch's
 * own LID at that switch.  Returns 0, or -1 with no memory.
 */
static int index_sources(struct oo_path_sls *sls,
			 const struct oo_reach_net *net)
{
	unsigned len = 0, lid, o;
	uint32_t s, d;

	for (s = 0; s < net->num_sw; s++)
		if (net->lft_len[s] > len)
			len = net->lft_len[s];
	sls->sw_of_lid = malloc(sizeof(*sls->sw_of_lid) * (len + 1));
	if (!sls->sw_of_lid)
		return -1;
	for (lid = 0; lid <= len; lid++)
		sls->sw_of_lid[lid] = OO_EVAL_NONE;
	sls->max_lid = len;
	for (s = 0; s < net->num_sw; s++)
		if (net->sw_lid[s] && net->sw_lid[s] < len)
			sls->sw_of_lid[net->sw_lid[s]] = s;
	for (d = 0; d < net->num_dests; d++)
		for (o = 0; o < net->lids_per_port; o++) {
			lid = net->dest_lid[d] + o;
			if (lid < len)
				sls->sw_of_lid[lid] = net->dest_sw[d];
		}
	return 0;
}

/* The fewest data VLs of any port (of the CAs' and of the switches'). */
static unsigned fewest_data_vls(const osm_opensm_t *osm)
{
	unsigned have = osm->subn.min_data_vls;

	if (osm->subn.min_sw_data_vls < have)
		have = osm->subn.min_sw_data_vls;
	return have;
}

unsigned oo_reach_lanes(const struct osm_opensm *osm, unsigned vls)
{
	unsigned have = fewest_data_vls(osm);

	if (vls <= 1 || !osm->subn.opt.qos || have < 2)
		return 1;
	return have < vls ? have : vls;
}

/*
 * oo_reach_lanes(), saying why where it gives fewer than reach_vls asked
 * (vls).
 */
static unsigned usable_lanes(osm_opensm_t *osm, unsigned vls)
{
	unsigned have = fewest_data_vls(osm), lanes;

	lanes = oo_reach_lanes(osm, vls);
	if (vls <= 1 || lanes == vls)
		return lanes;
	if (!osm->subn.opt.qos)
		OSM_LOG(&osm->log, OSM_LOG_ERROR, "ERR 9F0B: reach_vls=%u "
			"needs OpenSM's QoS (qos TRUE, or opensm -Q): only "
			"then are the SL2VL tables set up; the reach pass "
			"keeps to VL0\n", vls);
	else
		OSM_LOG(&osm->log, have < 2 ? OSM_LOG_ERROR : OSM_LOG_INFO,
			"%sosmoffset: reach_vls=%u, but some port has only "
			"%u data VLs (max_op_vls %u); the reach pass uses "
			"%u\n", have < 2 ? "ERR 9F0C: " : "", vls, have,
			osm->subn.opt.max_op_vls, lanes);
	return lanes;
}

/*
 * osmoffset-path-sl.dump in OpenSM's dump directory, when OpenSM writes
 * its routing dumps: the SL of every route the reach pass put above VL0,
 * by the switch it starts at (a CA's routes start at its switch).
 */
static void dump_path_sls(osm_opensm_t *osm, const struct oo_path_sls *sls,
			  const struct oo_glue_net *gn)
{
	const struct oo_sl_map *m = &sls->map;
	char path[4096];
	unsigned lid;
	uint32_t s;
	FILE *f;

	if (!osm_log_is_active(&osm->log, OSM_LOG_ROUTING))
		return;
	snprintf(path, sizeof(path), "%s/%s", osm->subn.opt.dump_files_dir,
		 "osmoffset-path-sl.dump");
	f = fopen(path, "w");
	if (!f) {
		OSM_LOG(&osm->log, OSM_LOG_ERROR, "ERR 9F0D: cannot write "
			"%s: %m\n", path);
		return;
	}
	fprintf(f, "# osmoffset: routes the reach pass put on virtual lanes "
		"above VL0\n# every other route has SL 0; SL n travels on VL n"
		"\n# lanes %u\n# switch_guid dlid sl\n", sls->lanes);
	for (lid = 1; m->row && lid < m->max_lid; lid++)
		for (s = 0; m->row[lid] != OO_SL_NO_ROW && s < m->num_sw; s++) {
			uint8_t sl = oo_sl_map_get(m, s, lid);

			if (sl)
				fprintf(f, "0x%016" PRIx64 " %u %u\n",
					cl_ntoh64(osm_node_get_node_guid(
						gn->sw[s]->p_node)), lid, sl);
		}
	fclose(f);
}

int oo_reach_fill_vl0(struct osm_opensm *osm, int retry)
{
	struct reach_glue rg;
	struct oo_reach_result res;
	int ret = prepare_net(&rg, osm);

	if (!ret)
		ret = retry > 1 ? oo_reach_fill_vls(&rg.net, 1, &res, NULL) :
		    retry ? oo_reach_fill(&rg.net, &res) :
		    oo_reach_fill_no_retry(&rg.net, &res);
	free_net(&rg);
	return ret ? -1 : 0;
}

/* A check of the tables in place (1, 0), or -1 where they cannot be read. */
static int check_tables(struct osm_opensm *osm,
			int (*check)(const struct oo_reach_net *net))
{
	struct reach_glue rg;
	int ret = prepare_net(&rg, osm);

	ret = ret ? -1 : check(&rg.net);
	free_net(&rg);
	return ret;
}

int oo_reach_tables_acyclic(struct osm_opensm *osm)
{
	return check_tables(osm, oo_reach_acyclic);
}

int oo_reach_ca_routes_acyclic(struct osm_opensm *osm)
{
	return check_tables(osm, oo_cdg_ca_routes_acyclic);
}

int oo_reach_lfts(struct osm_opensm *osm, unsigned vls,
		  struct oo_path_sls *sls, unsigned *left_ca)
{
	double cpu = oo_thread_cpu_seconds();
	struct reach_glue rg;
	struct oo_reach_result res;
	unsigned asked = vls;
	int ret;

	oo_path_sls_free(sls);
	vls = usable_lanes(osm, asked);
	ret = prepare_net(&rg, osm);
	/* where the routes start, before any fill that needs an SL */
	if (!ret && vls > 1)
		ret = index_sources(sls, &rg.net);
	if (!ret)
		ret = oo_reach_fill_vls(&rg.net, vls, &res, &sls->map);
	if (!ret) {
		if (res.layered)
			sls->lanes = res.top_sl + 1;
		else
			oo_path_sls_free(sls);
		log_result(&osm->log, &res, asked <= 1,
			   oo_thread_cpu_seconds() - cpu);
		if (left_ca)
			*left_ca = res.left_ca;
		/* even when no lane could be used: no stale SLs left in the
		   dump */
		if (asked > 1)
			dump_path_sls(osm, sls, &rg.gn);
	}
	free_net(&rg);
	if (ret) {
		oo_path_sls_free(sls);
		OSM_LOG(&osm->log, OSM_LOG_ERROR, "ERR 9F09: reach pass: %s; "
			"the LFTs stay as the routing engine built them\n",
			ret < 0 ? "no memory" : "a switch without an LFT");
		return -1;
	}
	return 0;
}
