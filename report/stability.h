/*
 * stability.h — `gpuphase-report stability RUN1 RUN2 ...`: is the profile
 * repeatable across several runs of one program (stability.c).
 */
#ifndef GP_REPORT_STABILITY_H
#define GP_REPORT_STABILITY_H

/* argv[0] = "stability". Returns the exit status (0 stable, 1 unstable,
 * 2 bad usage or input, 4 out of memory); prints to stdout and stderr. */
int gp_stability_main(int argc, char **argv);

#endif
