#define _GNU_SOURCE
#include "interrupt.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "errors.h"

static void (*handler)(int);
static sigset_t stop_signals;

static void *wait_for_signal(void *arg)
{
	int signo;

	(void)arg;
	while (sigwait(&stop_signals, &signo) != 0)
		;
	handler(signo);
	return NULL;
}

void nb_interrupt_start(void (*on_signal)(int signo))
{
	pthread_t id;
	int err;

	handler = on_signal;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	err = pthread_create(&id, NULL, wait_for_signal, NULL);
	if (err)
		nb_fail(NB_EXIT_FAILURE, "cannot start the signal thread: %s", strerror(err));
	pthread_detach(id);
}
