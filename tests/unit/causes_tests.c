/* Unit tests of the causes' accounting (src/lib/trace/causes.h): every
 * detour's causes add up to its loss, whatever crowds it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"

#include "check.h"

/* The causes file's lines, summed by detour (its lost_ns, column 3) and by
 * class; returns how many lines. */
struct account {
	double lost[8], credited[8];
	int detours, lines;
	double by_class[NB_CAUSE_CLASSES];
};

static void read_account(FILE *f, struct account *a)
{
	char line[256], cls[32], name[64];
	double start, span, lost, took, last_start = -1;

	memset(a, 0, sizeof(*a));
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lf %lf %lf %31s %63s %lf", &start, &span, &lost, cls, name,
			   &took) != 6)
			continue;
		if (start != last_start && a->detours < 8) {
			a->lost[a->detours++] = lost;
			last_start = start;
		}
		a->credited[a->detours - 1] += took;
		for (int c = 0; c < NB_CAUSE_CLASSES; c++)
			if (strcmp(cls, nb_cause_class_names[c]) == 0)
				a->by_class[c] += took;
		a->lines++;
	}
}

/* A detour of 40 ms held by 200 distinct threads of 100 us each (20 ms):
 * every one is named, and the 20 ms nothing held is hardware's. */
static void test_a_crowded_detour_keeps_every_cause(void)
{
	enum { N = 200 };
	struct nb_cause_segment seg[N];
	struct nb_cause_detour d = { 1000000, 41000000, 40e6 };
	struct nb_cause_totals tot;
	struct account a;
	FILE *f = tmpfile();

	for (int i = 0; i < N; i++) {
		seg[i].start = 1000000 + (uint64_t)i * 200000;
		seg[i].end = seg[i].start + 100000;
		seg[i].cls = NB_CAUSE_THREAD;
		snprintf(seg[i].name, sizeof(seg[i].name), "crowd:%d", 1000 + i);
	}
	memset(&tot, 0, sizeof(tot));
	CHECK(nb_causes_join(seg, N, NULL, &d, 1, 0, 0, 1.0, f, &tot) >= 0);
	read_account(f, &a);
	CHECK(a.detours == 1 && a.lines == N + 1);
	NEAR(a.credited[0], 40e6, 1);
	NEAR(a.by_class[NB_CAUSE_THREAD], 20e6, 1);
	NEAR(a.by_class[NB_CAUSE_HARDWARE], 20e6, 1);
	NEAR(tot.cls[NB_CAUSE_THREAD].total + tot.cls[NB_CAUSE_HARDWARE].total, tot.noise, 1e-6);
	fclose(f);
}

/* Causes that held the CPU longer than the loss (a tick in the fastest
 * sample too): each gets its share of the loss, and nothing is hardware. */
static void test_causes_longer_than_the_loss_share_it(void)
{
	struct nb_cause_segment seg[2] = {
		{ 100, 400, NB_CAUSE_THREAD, "rival:7" },
		{ 500, 600, NB_CAUSE_TIMER, "tick" },
	};
	struct nb_cause_detour d = { 0, 1000, 200 };
	struct nb_cause_totals tot;

	memset(&tot, 0, sizeof(tot));
	CHECK(nb_causes_join(seg, 2, NULL, &d, 1, 0, 0, 1.0, NULL, &tot) >= 0);
	NEAR(tot.cls[NB_CAUSE_THREAD].total, 150, 1e-9);
	NEAR(tot.cls[NB_CAUSE_TIMER].total, 50, 1e-9);
	CHECK(tot.cls[NB_CAUSE_HARDWARE].total == 0);
	NEAR(tot.noise, 200, 1e-9);
}

/* A trace that saw this CPU only from tick 5000 on: a detour before it is
 * unseen, one across it unseen up to there and then explained, one after
 * it hardware where nothing held the CPU. */
static void test_what_the_trace_did_not_see_is_unseen(void)
{
	struct nb_cause_segment seg[2] = {
		{ 5000, 5300, NB_CAUSE_IRQ, "eth0" },
		{ 9000, 9100, NB_CAUSE_SOFTIRQ, "NET_RX" },
	};
	struct nb_cause_detour d[3] = {
		{ 1000, 1600, 500 }, { 4800, 5400, 500 }, { 8900, 9400, 400 },
	};
	struct nb_cause_totals tot;
	struct account a;
	FILE *f = tmpfile();

	memset(&tot, 0, sizeof(tot));
	CHECK(nb_causes_join(seg, 2, NULL, d, 3, 0, 5000, 1.0, f, &tot) >= 0);
	read_account(f, &a);
	CHECK(a.detours == 3);
	for (int i = 0; i < 3; i++)
		NEAR(a.credited[i], a.lost[i], 1);
	/* 500 before, 200 of the second (its 300 the irq's), none of the third */
	NEAR(tot.cls[NB_CAUSE_UNSEEN].total, 700, 1e-9);
	NEAR(tot.cls[NB_CAUSE_IRQ].total, 300, 1e-9);
	NEAR(tot.cls[NB_CAUSE_SOFTIRQ].total, 100, 1e-9);
	NEAR(tot.cls[NB_CAUSE_HARDWARE].total, 300, 1e-9);
	NEAR(tot.noise, 1400, 1e-9);
	fclose(f);
}

int main(void)
{
	test_a_crowded_detour_keeps_every_cause();
	test_causes_longer_than_the_loss_share_it();
	test_what_the_trace_did_not_see_is_unseen();
	printf("causes: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
