/*
 * smcss output: row selection, the header, one row (or JSON object) per
 * socket.  Kept apart from smcss.c so the unit tests and the fuzzer can feed
 * it replies held in memory.
 */
#ifndef SMCSS_PRINT_H
#define SMCSS_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "output.h"

/* Upstream's address column width; longer addresses are cut unless -W. */
#define SMCSS_ADDR_SHORT 23
/* Room for "<IPv6 text>:<port>" and the NUL. */
#define SMCSS_ADDR_BUF 64

struct smcss_opts {
	bool all;        /* -a */
	bool listening;  /* -l */
	bool debug;      /* -d */
	bool smcd;       /* -D */
	bool smcr;       /* -R */
	bool wide;       /* -W */
	bool json;       /* -j */
};

/* One output run: text rows, or the members of {"sockets":[...]}. */
struct smcss_printer {
	const struct smcss_opts *opts;
	struct smc_out out;
	struct smc_json json;
};

/* diag_ext bits to request for these options. */
uint8_t smcss_ext_mask(const struct smcss_opts *o);
/* Whether the socket is shown at all (-l, -a, -R, -D). */
bool smcss_selected(const struct smc_diag_sock *s, const struct smcss_opts *o);

/* The address without port: IPv4 when words 1..3 are zero, else IPv6. */
void smcss_addr_text(const uint8_t addr[16], char *buf, size_t len);
/* "<addr>:<port>" as the address column shows it (cut to 23 chars unless wide). */
void smcss_addr_port_text(const uint8_t addr[16], uint16_t port, bool wide,
			  char *buf, size_t len);

/* The header line (text mode only; nothing in JSON mode). */
void smcss_print_header(const struct smcss_opts *o, FILE *f);

/* Start a run on f: JSON mode opens the document. */
void smcss_begin(struct smcss_printer *p, const struct smcss_opts *o, FILE *f);
/* One socket (skipped when not selected); an smc_diag_cb, arg is the printer. */
int smcss_print_sock(const struct smc_diag_sock *s, void *arg);
/* End a run: JSON mode closes the document. */
void smcss_end(struct smcss_printer *p);

/*
 * Everything smcss prints for a reply held in memory: header (text mode),
 * rows or the JSON document.  Returns 0 or -EBADMSG for a malformed reply
 * (the rows before the bad message are printed, the JSON document is closed).
 */
int smcss_print_reply(const struct smc_reply *rep, const struct smcss_opts *o, FILE *f);

#endif
