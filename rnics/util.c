/* smc_rnics: FID syntax, EBCDIC util_string, classification by function type. */
#include "rnics.h"

#include <ctype.h>
#include <string.h>

const char *rnics_fid_text(const char *s)
{
	return strncmp(s, "0x", 2) ? s : s + 2;
}

int rnics_parse_fid(const char *s, unsigned long *fid)
{
	unsigned long v = 0;
	const char *p = rnics_fid_text(s);

	if (!*p)
		return -1;
	for (; *p; p++) {
		if (!isxdigit((unsigned char)*p))
			return -1;
		/* A FID is 32 bits: the slot directory name is %08x. */
		if (v > 0xffffffful)
			return -1;
		v = v * 16 + (unsigned long)(isdigit((unsigned char)*p) ? *p - '0' :
					     tolower((unsigned char)*p) - 'a' + 10);
	}
	*fid = v;
	return 0;
}

/* IBM-1047 code points of the letters come in three runs of up to nine. */
static char ebcdic_char(unsigned char c)
{
	static const struct { unsigned char from, to; char first; } runs[] = {
		{ 0xc1, 0xc9, 'A' }, { 0xd1, 0xd9, 'J' }, { 0xe2, 0xe9, 'S' },
		{ 0x81, 0x89, 'a' }, { 0x91, 0x99, 'j' }, { 0xa2, 0xa9, 's' },
		{ 0xf0, 0xf9, '0' },
	};

	if (c == 0x40 || c == 0x00)
		return ' ';
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		if (c >= runs[i].from && c <= runs[i].to)
			return (char)(runs[i].first + (c - runs[i].from));
	return '?';
}

void rnics_ebcdic_decode(const unsigned char *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = ebcdic_char(in[i]);
	out[n] = '\0';
}

void rnics_util_pnet(const char *decoded, size_t len, int idx, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = (size_t)idx * RNICS_PNET_LEN;
	     i < (size_t)(idx + 1) * RNICS_PNET_LEN && i < len && o + 1 < outlen; i++)
		if (decoded[i] != ' ')
			out[o++] = decoded[i];
	out[o] = '\0';
}

void rnics_classify(unsigned int pft, int fw_major, struct rnics_class *c)
{
	memset(c, 0, sizeof(*c));
	c->known = true;
	switch (pft) {
	case 0x05:
		c->type = "ISM";
		c->pft = "ISM";
		break;
	case 0x02:
		c->type = "RoCE_Express";
		c->pft = "ROC";
		break;
	case 0x0a:
		/*
		 * Upstream leaves Type empty when the firmware is neither 14
		 * (Express2) nor 22 (Express3); say what we know instead.
		 */
		c->type = fw_major == 22 ? "RoCE_Express3" :
			  fw_major == 14 ? "RoCE_Express2" : "RoCE_Express2/3";
		c->pft = "ROC2";
		c->port_attr = true;
		break;
	case 0x0c:
		c->type = "Network_Express";
		c->pft = "NETH";
		c->port_attr = true;
		break;
	case 0x0f:
		c->type = "Network_Express";
		c->pft = "NETD";
		c->vf_from_vfn = true;
		c->port_attr = true;
		break;
	default:
		c->vf_from_vfn = true;
		c->known = false;
		break;
	}
}
