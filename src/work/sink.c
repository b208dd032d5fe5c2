/* Where the loops leave their result (work.h). A file of its own: every
 * loop stores into it, and work.c's table points at every loop, so in
 * work.c the two would call each other. */
#include "work.h"

volatile uint64_t nb_work_sink;
