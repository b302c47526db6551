/*
 * libFuzzer harness for oo_options_parse() (opensm/osm_offset_opts.c), the
 * parser of OpenSM's event_plugin_options string.
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * Build (scripts/fuzz-run does this):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
 *       fuzz/fuzz_options.c opensm/osm_offset_opts.c -o fuzz_options
 *
 * Besides memory safety (ASan/UBSan), every input is checked against the
 * parser's contract (include/osmoffset.h):
 *   - the result is 0 or -1;
 *   - on -1 the rule is reset to off and the message is a non-empty,
 *     NUL-terminated string that fits the buffer; on 0 it is empty;
 *   - the rule is one of the enum values;
 *   - a tiny error buffer (1 byte) and a zero-sized one never overflow;
 *   - parsing is deterministic: the same text gives the same result.
 * OpenSM hands the plugin a C string, so the input is cut at the first NUL.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "osmoffset.h"

#define CANARY 0x5a

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char err[257], err2[257], tiny[2];
	struct oo_options opts, opts2;
	int r, r2;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	memset(err, CANARY, sizeof(err));
	opts.rule = (enum oo_rule)77;
	r = oo_options_parse(text, &opts, err, sizeof(err) - 1);
	if (r != 0 && r != -1)
		abort();
	if (err[sizeof(err) - 1] != (char)CANARY)
		abort();	/* wrote past err_len */
	if (memchr(err, '\0', sizeof(err) - 1) == NULL)
		abort();	/* message not terminated */
	if (r == -1 && (opts.rule != OO_RULE_OFF || err[0] == '\0'))
		abort();
	if (r == 0 && err[0] != '\0')
		abort();
	if (opts.rule != OO_RULE_OFF && opts.rule != OO_RULE_PLAIN &&
	    opts.rule != OO_RULE_COORDINATED)
		abort();
	if (!strcmp(oo_rule_name(opts.rule), "unknown"))
		abort();

	/* deterministic, and the input text is left untouched */
	if (size == strlen(text) && memcmp(text, data, size))
		abort();
	r2 = oo_options_parse(text, &opts2, err2, sizeof(err2));
	if (r2 != r || opts2.rule != opts.rule || strcmp(err, err2))
		abort();

	/* one-byte and zero-byte error buffers */
	tiny[1] = CANARY;
	r2 = oo_options_parse(text, &opts2, tiny, 1);
	if (r2 != r || tiny[0] != '\0' || tiny[1] != (char)CANARY)
		abort();
	r2 = oo_options_parse(text, &opts2, NULL, 0);
	if (r2 != r)
		abort();

	free(text);
	return 0;
}
