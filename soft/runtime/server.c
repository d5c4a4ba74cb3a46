/*
 * The event loop of smc_softd: accept, dispatch, stop on a signal; while
 * a capture session is on, a timer drains the processes' dump rings.
 */
#include "server.h"
#include "daemon.h"
#include "daemon_client.h"
#include "peer.h"
#include "peer_port.h"
#include "pdump.h"
#include "service.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define SOFTD_EVENTS       64
#define SOFTD_ACCEPT_BURST 64
#define SOFTD_PAUSE_MS     100   /* out of descriptors: try accepting again after this */
/*
 * A client whose replies wait is not read from (it is throttled), and the
 * requests it sent stay in its socket with the descriptors they carry: its
 * TCP sockets in flight stay open, with no FIN to their peers.  One that
 * takes no reply for this long is dropped, and they close.
 */
#define SOFTD_STALL_MS     10000
#define SOFTD_SWEEP_MS     1000

struct softd_server {
	int ep, lfd, sfd, tfd;
	char listen_tag, signal_tag, timer_tag;   /* their addresses mark these fds in epoll */
	char peer_tag[2];                  /* the control port's IPv4 and IPv6 sockets */
	struct softd_peer_port *peer;
	bool accept_paused;
	bool timer_armed;
	uint64_t next_conn;
	struct soft_state *st;
	struct softd_client *clients;
	size_t n_stalled;                  /* clients with stalled_since_ms set */
	int64_t swept_ms;
	struct softd_io io;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A blocked client's clock starts, or starts again when it took a reply; stops when unblocked. */
static void stall_track(struct softd_server *s, struct softd_client *c, bool progress)
{
	bool blocked = softd_client_blocked(c);

	if (blocked && (!c->stalled_since_ms || progress)) {
		s->n_stalled += !c->stalled_since_ms;
		c->stalled_since_ms = now_ms();
	} else if (!blocked && c->stalled_since_ms) {
		s->n_stalled--;
		c->stalled_since_ms = 0;
	}
}

static int watch(int ep, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(ep, op, fd, &ev);
}

struct softd_server *softd_server_new(int lfd, const sigset_t *stop, struct soft_state *st,
				      char *err, size_t errlen)
{
	struct softd_server *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "server: %s", strerror(ENOMEM));
		return NULL;
	}
	s->lfd = lfd;
	s->st = st;
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->sfd = signalfd(-1, stop, SFD_NONBLOCK | SFD_CLOEXEC);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->ep < 0 || s->sfd < 0 || s->tfd < 0 ||
	    watch(s->ep, EPOLL_CTL_ADD, s->lfd, EPOLLIN, &s->listen_tag) < 0 ||
	    watch(s->ep, EPOLL_CTL_ADD, s->sfd, EPOLLIN, &s->signal_tag) < 0 ||
	    watch(s->ep, EPOLL_CTL_ADD, s->tfd, EPOLLIN, &s->timer_tag) < 0) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		softd_server_free(s);
		return NULL;
	}
	return s;
}

int softd_server_peer_port(struct softd_server *s, struct softd_peer_port *p,
			   char *err, size_t errlen)
{
	for (int i = 0; i < 2; i++) {
		if (p->fd[i] >= 0 && watch(s->ep, EPOLL_CTL_ADD, p->fd[i], EPOLLIN, &s->peer_tag[i]) < 0) {
			snprintf(err, errlen, "event loop: %s", strerror(errno));
			return -1;
		}
	}
	s->peer = p;
	return 0;
}

/* The epoll timeout: the shorter of base (-1: none) and the time to the next question due. */
static int timeout_with_asks(struct softd_server *s, int base)
{
	int64_t now = now_ms(), due = soft_peer_tick(s->st, now), left;

	if (due < 0)
		return base;
	left = due > now ? due - now : 0;
	return base >= 0 && base < left ? base : (int)(left < INT32_MAX ? left : INT32_MAX);
}

static void pause_accept(struct softd_server *s, bool pause)
{
	if (s->accept_paused == pause)
		return;
	if (watch(s->ep, EPOLL_CTL_MOD, s->lfd, pause ? 0 : EPOLLIN, &s->listen_tag) == 0)
		s->accept_paused = pause;
	if (pause)
		softd_log(LOG_WARNING, "out of file descriptors: new clients wait");
}

static void client_close(struct softd_server *s, struct softd_client *c)
{
	if (c->stalled_since_ms)
		s->n_stalled--;
	if (c->prev)
		c->prev->next = c->next;
	else
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	soft_conn_gone(s->st, c->peer.conn_id);
	softd_client_free(c);           /* closing the fd also takes it out of epoll */
	pause_accept(s, false);
}

static void client_add(struct softd_server *s, int fd)
{
	struct softd_client *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->events = EPOLLIN | EPOLLRDHUP;
	if (softd_peer_read(fd, ++s->next_conn, &c->peer) < 0 ||
	    watch(s->ep, EPOLL_CTL_ADD, fd, c->events, c) < 0) {
		softd_client_free(c);
		return;
	}
	c->next = s->clients;
	if (s->clients)
		s->clients->prev = c;
	s->clients = c;
}

static void accept_clients(struct softd_server *s)
{
	for (int i = 0; i < SOFTD_ACCEPT_BURST; i++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			client_add(s, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			pause_accept(s, true);
		return;
	}
}

static void client_event(struct softd_server *s, struct softd_client *c, uint32_t ev)
{
	enum softd_io_rc rc = SOFTD_IO_OK;
	uint32_t want;

	if (ev & (EPOLLHUP | EPOLLERR)) {
		softd_client_drain(c, s->st, &s->io);
		soft_gone_tell(s->st, c->peer.conn_id);
		client_close(s, c);
		return;
	}
	if (ev & EPOLLOUT)
		rc = softd_client_flush(c);
	if (rc == SOFTD_IO_OK && (ev & (EPOLLIN | EPOLLRDHUP)) && !c->eof && !softd_client_blocked(c))
		rc = softd_client_read(c, (ev & EPOLLRDHUP) != 0, s->st, &s->io);
	if (rc == SOFTD_IO_OK && c->eof && !softd_client_blocked(c))
		rc = SOFTD_IO_CLOSE;
	if (rc != SOFTD_IO_OK) {
		if (rc == SOFTD_IO_DROP) {
			softd_log(LOG_NOTICE, "client pid %d dropped: replies over %u bytes "
				  "waiting, or out of memory", (int)c->peer.pid, SOFTD_QUEUE_MAX);
		} else {
			softd_client_drain(c, s->st, &s->io);   /* what it sent before it went */
			/* it hung up: its process ended (its ends still here were not closed) */
			soft_gone_tell(s->st, c->peer.conn_id);
		}
		client_close(s, c);
		return;
	}
	/* while replies wait, requests stay in the socket: the client is throttled */
	stall_track(s, c, (ev & EPOLLOUT) != 0);
	want = softd_client_blocked(c) ? EPOLLOUT : EPOLLIN | EPOLLRDHUP;
	if (want != c->events && watch(s->ep, EPOLL_CTL_MOD, c->fd, want, c) == 0)
		c->events = want;
}

static int read_signal(struct softd_server *s)
{
	struct signalfd_siginfo si;

	if (read(s->sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

/* The drain timer runs while a capture session is on, and only then. */
static void sync_timer(struct softd_server *s)
{
	struct itimerspec its = { 0 };
	bool want = s->st->dumps != NULL;

	if (want == s->timer_armed)
		return;
	if (want) {
		its.it_value.tv_nsec = (long)SOFT_PDUMP_TICK_NS;
		its.it_interval.tv_nsec = (long)SOFT_PDUMP_TICK_NS;
	}
	if (timerfd_settime(s->tfd, 0, &its, NULL) == 0)
		s->timer_armed = want;
}

static void drain_tick(struct softd_server *s)
{
	struct timespec ts;
	uint64_t n;

	if (read(s->tfd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	soft_pdump_tick(s->st, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* Once a second while a client is blocked: drop those that took no reply for SOFTD_STALL_MS. */
static void sweep_stalled(struct softd_server *s)
{
	int64_t now = now_ms();
	struct softd_client *c, *next;

	if (!s->n_stalled || now - s->swept_ms < SOFTD_SWEEP_MS)
		return;
	s->swept_ms = now;
	for (c = s->clients; c; c = next) {
		next = c->next;
		if (!c->stalled_since_ms || now - c->stalled_since_ms < SOFTD_STALL_MS)
			continue;
		softd_log(LOG_NOTICE, "client pid %d dropped: it took no reply for %d s",
			  (int)c->peer.pid, SOFTD_STALL_MS / 1000);
		client_close(s, c);
	}
}

int softd_server_run(struct softd_server *s, char *err, size_t errlen)
{
	struct epoll_event ev[SOFTD_EVENTS];

	for (;;) {
		int timeout = timeout_with_asks(s, s->accept_paused ? SOFTD_PAUSE_MS :
						   s->n_stalled ? SOFTD_SWEEP_MS : -1);
		int n = epoll_wait(s->ep, ev, SOFTD_EVENTS, timeout);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "epoll_wait: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			pause_accept(s, false);
		for (int i = 0; i < n; i++) {
			void *p = ev[i].data.ptr;
			int sig;

			if (p == &s->signal_tag) {
				if ((sig = read_signal(s)) > 0)
					return sig;
			} else if (p == &s->listen_tag) {
				accept_clients(s);
			} else if (p == &s->timer_tag) {
				drain_tick(s);
			} else if (s->peer && (p == &s->peer_tag[0] || p == &s->peer_tag[1])) {
				softd_peer_port_read(s->peer, s->peer->fd[p == &s->peer_tag[1]], s->st);
			} else {
				client_event(s, p, ev[i].events);
			}
		}
		sync_timer(s);
		sweep_stalled(s);
	}
}

void softd_server_free(struct softd_server *s)
{
	if (!s)
		return;
	while (s->clients)
		client_close(s, s->clients);
	if (s->sfd >= 0)
		close(s->sfd);
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->ep >= 0)
		close(s->ep);
	soft_out_free(&s->io.out);
	free(s);
}
