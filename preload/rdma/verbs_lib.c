/* libibverbs, opened at run time: a host without rdma-core runs every program as before. */
#include "rdma.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

struct rdma_verbs rdma_v;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc;
static char load_err[160];

#define SYM(field, name) { (void **)&rdma_v.field, name }

static void load(void)
{
	const struct {
		void **slot;
		const char *name;
	} syms[] = {
		SYM(get_device_list, "ibv_get_device_list"),
		SYM(free_device_list, "ibv_free_device_list"),
		SYM(get_device_name, "ibv_get_device_name"),
		SYM(open_device, "ibv_open_device"),
		SYM(close_device, "ibv_close_device"),
		SYM(query_port, "ibv_query_port"),
		SYM(query_device, "ibv_query_device"),
		SYM(query_gid_ex, "_ibv_query_gid_ex"),
		SYM(alloc_pd, "ibv_alloc_pd"),
		SYM(dealloc_pd, "ibv_dealloc_pd"),
		SYM(reg_mr, "ibv_reg_mr"),
		SYM(dereg_mr, "ibv_dereg_mr"),
		SYM(create_comp_channel, "ibv_create_comp_channel"),
		SYM(destroy_comp_channel, "ibv_destroy_comp_channel"),
		SYM(create_cq, "ibv_create_cq"),
		SYM(destroy_cq, "ibv_destroy_cq"),
		SYM(get_cq_event, "ibv_get_cq_event"),
		SYM(ack_cq_events, "ibv_ack_cq_events"),
		SYM(get_async_event, "ibv_get_async_event"),
		SYM(ack_async_event, "ibv_ack_async_event"),
		SYM(create_qp, "ibv_create_qp"),
		SYM(modify_qp, "ibv_modify_qp"),
		SYM(destroy_qp, "ibv_destroy_qp"),
	};
	/* never unloaded: providers keep threads and handlers of their own */
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(load_err, sizeof(load_err), "libibverbs.so.1: %s", dlerror());
		load_rc = -ENOSYS;
		return;
	}
	rdma_v.syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!rdma_v.syscall) {
		snprintf(load_err, sizeof(load_err), "no syscall(): %s", dlerror());
		load_rc = -ENOSYS;
		return;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot) {
			snprintf(load_err, sizeof(load_err), "libibverbs.so.1 has no %s (rdma-core too old)",
				 syms[i].name);
			load_rc = -ENOSYS;
			return;
		}
	}
}

int rdma_lib_load(void)
{
	pthread_once(&once, load);
	return load_rc;
}

const char *rdma_lib_error(void)
{
	return load_err;
}
