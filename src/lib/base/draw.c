#include "draw.h"

#include <math.h>

double nb_draw_uniform(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return (double)(((*state * 0x2545F4914F6CDD1Dull) >> 11) + 1) * 0x1p-53;
}

double nb_draw_exponential(uint64_t *state, double mean)
{
	return -log(nb_draw_uniform(state)) * mean;
}
