/* SIGINT and SIGTERM (Slurm's time limit) are taken by one thread of our own,
 * so that the measuring threads never see them and the handler may do I/O. */
#ifndef NB_INTERRUPT_H
#define NB_INTERRUPT_H

/* Blocks both signals in the calling thread and every thread it starts
 * afterwards, and starts the thread that waits for them; on_signal runs there
 * and must not return. Call before starting any other thread. */
void nb_interrupt_start(void (*on_signal)(int signo));

#endif
