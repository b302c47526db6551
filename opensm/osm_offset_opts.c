/*
 * osmoffset - parsing of OpenSM's event_plugin_options for port offsetting
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 */

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "osmoffset.h"

#define OO_TOKEN_MAX 128

struct oo_rule_word {
	const char *word;
	enum oo_rule rule;
};

static const struct oo_rule_word rule_words[] = {
	{"off", OO_RULE_OFF},
	{"no", OO_RULE_OFF},
	{"false", OO_RULE_OFF},
	{"0", OO_RULE_OFF},
	{"on", OO_RULE_DEFAULT},
	{"yes", OO_RULE_DEFAULT},
	{"true", OO_RULE_DEFAULT},
	{"1", OO_RULE_DEFAULT},
	{"plain", OO_RULE_PLAIN},
	{"coordinated", OO_RULE_COORDINATED},
};

const char *oo_rule_name(enum oo_rule rule)
{
	switch (rule) {
	case OO_RULE_OFF:
		return "off";
	case OO_RULE_PLAIN:
		return "plain";
	case OO_RULE_COORDINATED:
		return "coordinated";
	}
	return "unknown";
}

const char *oo_hop_tables_name(enum oo_hop_tables h)
{
	return h == OO_HOPS_STOCK ? "stock" : "fast";
}

static int parse_hop_tables(const char *value, enum oo_hop_tables *h)
{
	if (!strcasecmp(value, "fast"))
		*h = OO_HOPS_FAST;
	else if (!strcasecmp(value, "stock"))
		*h = OO_HOPS_STOCK;
	else
		return -1;
	return 0;
}

static int is_separator(char c)
{
	return c == ',' || isspace((unsigned char)c);
}

static int parse_rule(const char *value, enum oo_rule *rule)
{
	size_t i;

	for (i = 0; i < sizeof(rule_words) / sizeof(rule_words[0]); i++)
		if (!strcasecmp(value, rule_words[i].word)) {
			*rule = rule_words[i].rule;
			return 0;
		}
	return -1;
}

/*
 * Strip our own "osmoffset." prefix.  Returns NULL when the key belongs to
 * another plugin (it has some other dotted prefix).
 */
static const char *own_key(const char *key)
{
	static const char prefix[] = OO_PLUGIN_NAME ".";
	size_t len = sizeof(prefix) - 1;

	if (!strncasecmp(key, prefix, len))
		return key + len;
	if (strchr(key, '.'))
		return NULL;
	return key;
}

#define SEEN_RULE 0x1
#define SEEN_HOPS 0x2
/* the i-th key of number_keys */
#define SEEN_NUMBER(i) (0x10 << (i))
/* the i-th key of on_off_keys */
#define SEEN_ON_OFF(i) (0x100 << (i))

/* The keys that are on or off: the int of oo_options each sets. */
struct on_off_key {
	const char *key;
	size_t field;		/* offsetof(struct oo_options, ...) */
	int by_default;
};

static const struct on_off_key on_off_keys[] = {
	{ "stock_guard", offsetof(struct oo_options, stock_guard), 1 },
	{ "reach_all", offsetof(struct oo_options, reach_all), 1 },
	{ "design_lanes", offsetof(struct oo_options, design_lanes), 1 },
	{ "offsets_apart", offsetof(struct oo_options, offsets_apart), 1 },
	{ "digits_apart", offsetof(struct oo_options, digits_apart), 1 },
	{ "keep_live", offsetof(struct oo_options, keep_live), 1 },
	{ "polish", offsetof(struct oo_options, polish), 1 },
	{ "polish_even", offsetof(struct oo_options, polish_even), 0 },
	{ "polish_cables", offsetof(struct oo_options, polish_cables), 1 },
	{ "polish_ways", offsetof(struct oo_options, polish_ways), 0 },
	{ "spine_cas", offsetof(struct oo_options, spine_cas), 0 },
	{ "leaf_shuffles", offsetof(struct oo_options, leaf_shuffles), 0 },
};

#define NUM_ON_OFF_KEYS (sizeof(on_off_keys) / sizeof(on_off_keys[0]))

static int *on_off_field(struct oo_options *opts, const struct on_off_key *k)
{
	return (int *)((char *)opts + k->field);
}

static int parse_port_offsetting(const char *value, struct oo_options *opts,
				 int *seen, char *err, size_t err_len)
{
	enum oo_rule rule;

	if (parse_rule(value, &rule)) {
		snprintf(err, err_len, "event_plugin_options: "
			 "port_offsetting value '%s' is not one of "
			 "off, on, coordinated, plain", value);
		return -1;
	}
	if ((*seen & SEEN_RULE) && rule != opts->rule) {
		snprintf(err, err_len, "event_plugin_options: "
			 "port_offsetting is given twice, as %s and as %s",
			 oo_rule_name(opts->rule), oo_rule_name(rule));
		return -1;
	}
	*seen |= SEEN_RULE;
	opts->rule = rule;
	return 0;
}

static int parse_hop_tables_key(const char *value, struct oo_options *opts,
				int *seen, char *err, size_t err_len)
{
	enum oo_hop_tables h;

	if (parse_hop_tables(value, &h)) {
		snprintf(err, err_len, "event_plugin_options: "
			 "hop_tables value '%s' is not one of fast, stock",
			 value);
		return -1;
	}
	if ((*seen & SEEN_HOPS) && h != opts->hop_tables) {
		snprintf(err, err_len, "event_plugin_options: "
			 "hop_tables is given twice, as %s and as %s",
			 oo_hop_tables_name(opts->hop_tables),
			 oo_hop_tables_name(h));
		return -1;
	}
	*seen |= SEEN_HOPS;
	opts->hop_tables = h;
	return 0;
}

/* on/off words: those of port_offsetting, "on" meaning on. */
static int parse_switch(const char *value, int *on)
{
	enum oo_rule rule;

	if (parse_rule(value, &rule) || rule == OO_RULE_PLAIN ||
	    !strcasecmp(value, "coordinated"))
		return -1;
	*on = rule != OO_RULE_OFF;
	return 0;
}

/* The i-th key of on_off_keys, with its value. */
static int parse_on_off(unsigned i, const char *value,
			struct oo_options *opts, int *seen, char *err,
			size_t err_len)
{
	const char *key = on_off_keys[i].key;
	int *field = on_off_field(opts, &on_off_keys[i]);
	int bit = SEEN_ON_OFF(i), on;

	if (parse_switch(value, &on)) {
		snprintf(err, err_len, "event_plugin_options: "
			 "%s value '%s' is not one of on, off", key, value);
		return -1;
	}
	if ((*seen & bit) && on != *field) {
		snprintf(err, err_len, "event_plugin_options: "
			 "%s is given twice, as %s and as %s", key,
			 *field ? "on" : "off", on ? "on" : "off");
		return -1;
	}
	*seen |= bit;
	*field = on;
	return 0;
}

/* The keys that take a whole number: the unsigned of oo_options each sets. */
struct number_key {
	const char *key;
	size_t field;		/* offsetof(struct oo_options, ...) */
	unsigned least, most, by_default;
	const char *what;	/* "a number of <what> from ..." */
};

static const struct number_key number_keys[] = {
	{ "reach_vls", offsetof(struct oo_options, reach_vls), 1,
	  OO_MAX_REACH_VLS, 1, "virtual lanes" },
	{ "polish_kicks", offsetof(struct oo_options, polish_kicks), 0,
	  OO_MAX_POLISH_KICKS, 0, "kicks" },
};

#define NUM_NUMBER_KEYS (sizeof(number_keys) / sizeof(number_keys[0]))

static unsigned *number_field(struct oo_options *opts,
			      const struct number_key *k)
{
	return (unsigned *)((char *)opts + k->field);
}

/* The i-th key of number_keys: a whole number from least to most. */
static int parse_number(unsigned i, const char *value,
			struct oo_options *opts, int *seen, char *err,
			size_t err_len)
{
	const struct number_key *k = &number_keys[i];
	unsigned *field = number_field(opts, k);
	int bit = SEEN_NUMBER(i);
	char *end;
	unsigned long n = strtoul(value, &end, 10);

	if (!isdigit((unsigned char)value[0]) || *end || n < k->least ||
	    n > k->most) {
		snprintf(err, err_len, "event_plugin_options: "
			 "%s value '%s' is not a number of %s from %u to %u",
			 k->key, value, k->what, k->least, k->most);
		return -1;
	}
	if ((*seen & bit) && n != *field) {
		snprintf(err, err_len, "event_plugin_options: "
			 "%s is given twice, as %u and as %lu", k->key,
			 *field, n);
		return -1;
	}
	*seen |= bit;
	*field = (unsigned)n;
	return 0;
}

static int parse_token(char *token, struct oo_options *opts, int *seen,
		       char *err, size_t err_len)
{
	char *eq = strchr(token, '=');
	const char *key, *value;
	unsigned i;

	if (!eq || eq == token || !eq[1]) {
		snprintf(err, err_len, "event_plugin_options: token '%s' "
			 "is not of the form key=value", token);
		return -1;
	}
	*eq = '\0';
	value = eq + 1;
	key = own_key(token);
	if (!key)
		return 0;

	if (!strcasecmp(key, "port_offsetting"))
		return parse_port_offsetting(value, opts, seen, err, err_len);
	if (!strcasecmp(key, "hop_tables"))
		return parse_hop_tables_key(value, opts, seen, err, err_len);
	for (i = 0; i < NUM_NUMBER_KEYS; i++)
		if (!strcasecmp(key, number_keys[i].key))
			return parse_number(i, value, opts, seen, err,
					    err_len);
	for (i = 0; i < NUM_ON_OFF_KEYS; i++)
		if (!strcasecmp(key, on_off_keys[i].key))
			return parse_on_off(i, value, opts, seen, err,
					    err_len);
	snprintf(err, err_len, "event_plugin_options: unknown key '%s' "
		 "(known: port_offsetting, hop_tables, stock_guard, "
		 "reach_all, reach_vls, design_lanes, offsets_apart, "
		 "digits_apart, keep_live, polish, polish_even, "
		 "polish_cables, polish_ways, polish_kicks, spine_cas, "
		 "leaf_shuffles)", token);
	return -1;
}

static void set_defaults(struct oo_options *opts)
{
	unsigned i;

	opts->rule = OO_RULE_OFF;
	opts->hop_tables = OO_HOPS_FAST;
	for (i = 0; i < NUM_NUMBER_KEYS; i++)
		*number_field(opts, &number_keys[i]) =
		    number_keys[i].by_default;
	for (i = 0; i < NUM_ON_OFF_KEYS; i++)
		*on_off_field(opts, &on_off_keys[i]) =
		    on_off_keys[i].by_default;
}

int oo_options_parse(const char *text, struct oo_options *opts,
		     char *err, size_t err_len)
{
	char token[OO_TOKEN_MAX];
	const char *p = text;
	int seen = 0;
	size_t len;

	set_defaults(opts);
	if (err_len)
		err[0] = '\0';
	if (!text)
		return 0;

	while (*p) {
		while (*p && is_separator(*p))
			p++;
		if (!*p)
			break;
		for (len = 0; p[len] && !is_separator(p[len]); len++)
			;
		if (len >= sizeof(token)) {
			snprintf(err, err_len, "event_plugin_options: token "
				 "starting '%.20s' is longer than %d characters",
				 p, OO_TOKEN_MAX - 1);
			set_defaults(opts);
			return -1;
		}
		memcpy(token, p, len);
		token[len] = '\0';
		p += len;
		if (parse_token(token, opts, &seen, err, err_len)) {
			set_defaults(opts);
			return -1;
		}
	}
	return 0;
}
