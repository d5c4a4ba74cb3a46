/* The daemon's state freed at exit (soft_state_init() is in base/state.h). */
#ifndef SOFT_TEARDOWN_H
#define SOFT_TEARDOWN_H

#include "state.h"

void soft_state_free(struct soft_state *st);

#endif
