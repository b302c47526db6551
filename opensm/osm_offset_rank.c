/*
 * osmoffset - what the tree looks like: hosts, levels, ranks and up slots
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Free of OpenSM types, so that the Check tests drive it on the shapes of
 * real fabrics directly.
 */

#include <ctype.h>
#include <string.h>

#include "osmoffset.h"

int oo_is_aggregation_node(const char *desc)
{
	static const char word[] = "aggregation node";
	size_t len = sizeof(word) - 1, i;

	if (!desc)
		return 0;
	for (; *desc; desc++) {
		for (i = 0; i < len && desc[i] &&
		     tolower((unsigned char)desc[i]) == word[i]; i++)
			;
		if (i == len)
			return 1;
	}
	return 0;
}
