#include "eid.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define EID_ERR "Error: Invalid User EID specified: "

int smc_eid_check(const char *in, char out[SMC_EID_LEN + 1], const char **msg)
{
	static char buf[160];
	int last = -1;

	if (strlen(in) > SMC_EID_LEN) {
		*msg = EID_ERR "EID is longer than 32 characters";
		return -1;
	}
	snprintf(out, SMC_EID_LEN + 1, "%-32s", in);
	for (int i = 0; i < SMC_EID_LEN; i++)
		if (out[i] != ' ')
			last = i;
	if (last < 0) {
		*msg = EID_ERR "EID is empty";
		return -1;
	}
	if (!isalnum((unsigned char)out[0])) {
		*msg = EID_ERR "first character must be alphanumeric";
		return -1;
	}
	if (strstr(out, "..")) {
		*msg = EID_ERR "consecutive dots not allowed";
		return -1;
	}
	for (int i = 0; i <= last; i++) {
		char c = out[i];

		if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-')
			continue;
		snprintf(buf, sizeof(buf), EID_ERR "unsupported character: '%c'\n"
			 "       Supported characters are: A-Z, 0-9, '.' and '-'", c);
		*msg = buf;
		return -1;
	}
	return 0;
}
