# parsers/: the config language (pure: libc, inih, src/core's error record in libptcore.a).
noinst_LIBRARIES += libptparsers.a
libptparsers_a_SOURCES = \
	parsers/cfg.h parsers/cfg_internal.h parsers/cfg_origin.c \
	parsers/cfg_lex.h parsers/cfg_lex.c parsers/cfg_tree.c \
	parsers/cfg_merge.h parsers/cfg_merge.c parsers/cfg_lookup.c parsers/cfg_resolve.c \
	parsers/cfg_value.c parsers/cfg_parse.h parsers/cfg_parse.c \
	parsers/cfg_ini.h parsers/cfg_ini.c parsers/cfg_load.c parsers/cfg_print.c \
	parsers/schema.h parsers/schema.c parsers/schema_read.c parsers/ctf.h parsers/ctf.c \
	parsers/bs.h parsers/bs_internal.h parsers/bs_lex.c parsers/bs_parse.c parsers/bs_parse_internal.h parsers/bs_parse_util.c \
	parsers/bs_include.c
libptparsers_a_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS)
